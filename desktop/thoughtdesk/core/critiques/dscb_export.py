"""ThoughtDesk records as DS Critique Bank (DSCB) records: what an export writes
(docs/critiques-dscb.md).

:func:`record_from` gives an imported CoT back equal as JSON to the record it was read from (the
fidelity notes :mod:`.dscb` kept in the ``extra`` of the CoT, its critiques and ratings say what
the file had), and writes a CoT ThoughtDesk generated in the same shape with the fields
ThoughtDesk knows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from thoughtdesk.core.critiques.dscb import (
    COT_EXTRA,
    CRITIQUE_KEYS,
    RECORD_KEYS,
    ROW_EXTRA,
    SAMPLE_EXTRA,
)
from thoughtdesk.core.critiques.dscb_mapping import raw_output_of
from thoughtdesk.core.critiques.records import Critique, ExplanationRating
from thoughtdesk.core.library.records import GeneratedCot, Sample, model_name

# A record's (a critique's) fields without its annotations: those are written when there are
# ratings, whatever the file had.
_CRITIQUE_KEYS_BUT_NOTES = CRITIQUE_KEYS[:-1]
_RECORD_KEYS_BUT_NOTES = RECORD_KEYS[:-1]


def _letter(sample: Sample) -> str:
    choices = sample.choices or []
    if sample.answer and sample.answer[0] in choices:
        return chr(ord("A") + choices.index(sample.answer[0]))
    return str(sample.answer[0]) if sample.answer else ""


def _question(sample: Sample) -> str:
    choices = sample.choices or []
    inline = " ".join(f"({chr(ord('A') + i)}) {choice}" for i, choice in enumerate(choices))
    return f"{sample.question} {inline}".strip() if inline else sample.question


def _options_of(model: str | None) -> dict[str, Any]:
    """The parameters in a ThoughtSource ``model`` repr (a CoT ThoughtDesk generated)."""
    import ast

    text = (model or "").strip()
    if text.startswith("{"):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return {}
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if k != "name"}
    return {}


def _without(fidelity: dict[str, Any], keys: Sequence[str], out: dict[str, Any]) -> dict[str, Any]:
    for key in fidelity.get("missing", ()):
        if key in keys:
            out.pop(key, None)
    return out


def _rating_json(extra: dict[str, Any], score_key: str, score: Any, fields: dict[str, Any]) -> dict[str, Any]:
    fidelity = extra.get(ROW_EXTRA, {})
    out = {score_key: fidelity.get("score", score), **fields}
    out.update((k, v) for k, v in extra.items() if k != ROW_EXTRA)
    for key in fidelity.get("null", ()):
        out[key] = None
    return _without(fidelity, (score_key, *fields), out)


def critique_json(critique: Critique) -> dict[str, Any]:
    """A critique as a DSCB critique object: exactly as read for an imported one; from its
    parsed elements for one ThoughtDesk ran."""
    fidelity = critique.extra.get(ROW_EXTRA, {})
    elements = critique.elements
    if elements is None and critique.source != "import":
        p = critique.parsed
        main_flaw = p.main_flaw
        if main_flaw is None and p.outcome("main_flaw").status == "parsed":
            main_flaw = p.outcome("main_flaw").raw or "None"
        elements = {
            "main_flaw": main_flaw,
            "dimension": p.dimension,
            "general_feedback": p.general_feedback,
            "specific_feedback": p.specific_feedback,
            "explanation_score": p.explanation_score,
        }
    out: dict[str, Any] = {
        "critique_model": critique.critique_model,
        "critique_llm_options": fidelity.get("llm_options", critique.llm_options),
        "critique_text": fidelity.get("text", critique.raw_text),
        "critique_elements": elements,
    }
    if critique.ratings or "annotations" in fidelity or (critique.source == "import"):
        # Ratings added since the import (a reviewer's) are written even where the file had none.
        out["critique_annotations"] = (
            None
            if "annotations" in fidelity and not critique.ratings
            else [_rating_json(r.extra, "critique_score", r.score, {"worker": r.author}) for r in critique.ratings]
        )
    out.update((k, v) for k, v in critique.extra.items() if k != ROW_EXTRA)
    return _without(fidelity, CRITIQUE_KEYS if not critique.ratings else _CRITIQUE_KEYS_BUT_NOTES, out)


def record_from(
    dataset: str,
    sample: Sample,
    cot: GeneratedCot,
    critiques: Sequence[Critique] = (),
    ratings: Sequence[ExplanationRating] = (),
) -> dict[str, Any]:
    """The DSCB record of one generated CoT: equal as JSON to the record it was imported from;
    for a CoT ThoughtDesk generated, the same shape with the fields ThoughtDesk knows."""
    raw_fidelity = cot.extra.get(COT_EXTRA)
    fidelity: dict[str, Any] = raw_fidelity if isinstance(raw_fidelity, dict) else {}
    imported = bool(fidelity)
    original = sample.extra.get(SAMPLE_EXTRA, {}) if isinstance(sample.extra.get(SAMPLE_EXTRA), dict) else {}
    answer = cot.answers[0] if cot.answers else None
    if "accuracy" in fidelity:
        accuracy = fidelity["accuracy"]
    elif answer is None or answer.correct_answer is None:
        accuracy = None
    else:
        accuracy = int(answer.correct_answer)
    options = fidelity["llm_options"] if "llm_options" in fidelity else _options_of(cot.model)
    out: dict[str, Any] = {
        "id": cot.id,
        "qid": sample.id,
        "dataset": dataset,
        "question": fidelity.get("question", original.get("question", _question(sample))),
        "gold_answer": fidelity.get("gold_answer", original.get("gold_answer", _letter(sample))),
        "student_model": model_name(cot.model),
        "student_prompt": cot.cot_trigger,
        "student_llm_options": options,
        "student_answer": None if answer is None else answer.answer,
        "student_accuracy": accuracy,
        "student_explanation": cot.cot,
        "student_raw_output": raw_output_of(fidelity, cot),
        "critiques": [critique_json(c) for c in critiques],
    }
    if ratings or (imported and "explanation_annotations" not in fidelity.get("missing", ())):
        out["explanation_annotations"] = [
            _rating_json(r.extra, "explanation_score", r.score, {"dimensions": list(r.dimensions), "worker": r.author})
            for r in ratings
        ]
    for key in fidelity.get("null", ()):
        if key != "explanation_annotations" or not ratings:
            out[key] = None
    out.update(fidelity.get("unknown", {}))
    return _without(fidelity, RECORD_KEYS if not ratings else _RECORD_KEYS_BUT_NOTES, out)
