"""Mining rationales (RATIONALYST): extraction by a model, the validity check, the split into
records, filtering by loss reduction with 0.9 decay, export for fine-tuning (docs/rationales.md).

No Qt. Public API: :mod:`~thoughtdesk.core.rationales.extraction` (markers, prompt, rewrite,
records), :mod:`~thoughtdesk.core.rationales.filtering` (loss reduction, tau presets),
:mod:`~thoughtdesk.core.rationales.store` (the library's tables),
:mod:`~thoughtdesk.core.rationales.mining` (the resumable, concurrent passes) and
:mod:`~thoughtdesk.core.rationales.export` (chat JSONL), imported by module path.
"""
