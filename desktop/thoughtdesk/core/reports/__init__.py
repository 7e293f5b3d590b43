"""Review reports: a collection, a review queue or a selection of samples as a self-contained
HTML file (and, drawn by ``ui/reports/pdf.py`` with Qt's own printing, a PDF) for a colleague
who does not run ThoughtDesk. No Qt here. See docs/reports.md.

Public API::

    ReportScope(collection, queue=None, sample_pks=None, author=None)   # what the report covers
    ReportOptions(max_text_chars=20_000, threshold=60.0)                 # texts cut; similarity
    report_parts(lib, scope, options=None, *, progress=None, cancel=None) -> ReportParts
        # .title, .samples, .parts: the summary's HTML, then one part per sample (lazily)
    part_document(title, part) -> str     # one part as a document of its own (for the PDF)
    write_html_report(lib, scope, path, options=None, *, force=False, progress=None, cancel=None)
        -> int                                                            # samples written
    EMITTED_TAGS                          # every tag the report's HTML may contain
    ReportError                           # a scope that cannot be reported (no such queue...)
"""

from thoughtdesk.core.reports.content import ReportError, ReportOptions, ReportScope
from thoughtdesk.core.reports.document import (
    EMITTED_TAGS,
    ReportParts,
    part_document,
    report_parts,
    write_html_report,
)

__all__ = [
    "EMITTED_TAGS",
    "ReportError",
    "ReportOptions",
    "ReportParts",
    "ReportScope",
    "part_document",
    "report_parts",
    "write_html_report",
]
