"""A DS Critique Bank record (read and validated by :mod:`.dscb`) as ThoughtDesk records: the way
in. :mod:`.dscb_export` is the way back (docs/critiques-dscb.md).

Mapping: the question is a :class:`Sample` (one per dataset and qid; the choices parsed out of the
inline text, the original text and the gold letter kept in ``sample.extra["dscb"]``); the record
is a :class:`GeneratedCot` of it (model, prompt key as ``cot_trigger``, the explanation as the CoT,
one answer with the student's answer and correctness); its critiques are :class:`Critique` rows
(``source="import"``, ``elements`` exactly as the file had them) with their annotations as
:class:`CritiqueRating`, and the explanation annotations are :class:`ExplanationRating`.

Lossless: whatever a ThoughtDesk record has no column for (the raw output, the llm options, the
record's unknown fields, fields the record did not have, a value in an unusual type) is kept in
the ``extra`` of the CoT (key ``dscb``), the critique or the rating (key ``_dscb``), so that
:func:`.dscb_export.record_from` gives back a record equal as JSON to the one read.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from thoughtdesk.core.critiques.dscb import (
    COT_EXTRA,
    CRITIQUE_ANNOTATION_KEYS,
    CRITIQUE_KEYS,
    EXPLANATION_ANNOTATION_KEYS,
    RECORD_KEYS,
    REQUIRED_KEYS,
    ROW_EXTRA,
    SAMPLE_EXTRA,
    element_score,
)
from thoughtdesk.core.critiques.parse import parse_critique, parse_dimension
from thoughtdesk.core.critiques.records import (
    Critique,
    CritiqueRating,
    ElementOutcome,
    ExplanationRating,
    ParsedCritique,
)
from thoughtdesk.core.critiques.store import ImportedRows
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample, model_repr

_CHOICE_MARK = re.compile(r"\(([A-Z])\)\s*")
_NO_FLAW = re.compile(r"^\s*(?:none|n/?a|no\s+(?:main\s+)?flaws?(?:\s+found)?|nothing)\.?\s*$", re.IGNORECASE)

# Outcomes are frozen: the common ones are shared rather than built for every critique.
_PARSED = ElementOutcome("parsed")
_MISSING = ElementOutcome("missing")


def split_choices(question: str) -> tuple[str, list[str]] | None:
    """The stem and the choices of a question with its choices inline ("... (A) x (B) y"), or
    None when the text has no run of consecutive markers (A), (B), ..., at least two of them.
    A run that reaches the last marker wins (the choices close the question), so "(A)" or "(B)"
    quoted in the stem stays in the stem."""
    marks = list(_CHOICE_MARK.finditer(question))
    runs = []
    for start, mark in enumerate(marks):
        if mark.group(1) != "A":
            continue
        end = start + 1
        while end < len(marks) and ord(marks[end].group(1)) == ord(marks[end - 1].group(1)) + 1:
            end += 1
        if end - start >= 2:
            runs.append((start, end))
    if not runs:
        return None
    start, end = next((run for run in runs if run[1] == len(marks)), runs[0])
    run = marks[start:end]
    stem = question[: run[0].start()].strip()
    choices = [
        question[m.end() : (run[i + 1].start() if i + 1 < len(run) else len(question))].strip()
        for i, m in enumerate(run)
    ]
    return stem, choices


def sample_for(record: dict[str, Any]) -> Sample:
    """The sample of a record's question (without generated CoTs): the stem and choices parsed
    out of the inline text, the gold letter mapped to its choice; the original text and letter
    kept in ``extra["dscb"]``. Unparseable choices leave the whole text as the question."""
    question, gold = record["question"], record["gold_answer"]
    parsed = split_choices(question)
    stem, choices = parsed if parsed is not None else (question, [])
    letter = gold.strip().strip("()").strip().upper()
    index = ord(letter) - ord("A") if len(letter) == 1 else -1
    answer = [choices[index]] if 0 <= index < len(choices) else []
    return Sample(
        id=record["qid"],
        question=stem,
        type="multiplechoice",
        choices=choices,
        answer=answer,
        cot=[],
        context="",
        ref_id="",
        extra={SAMPLE_EXTRA: {"question": question, "gold_answer": gold}},
    )


def _correct(accuracy: Any) -> bool | None:
    if accuracy is None or isinstance(accuracy, bool):
        return accuracy
    return True if accuracy == 1 else False if accuracy == 0 else None


def cot_for(record: dict[str, Any], sample: Sample, line: int | None = None) -> GeneratedCot:
    """The generated CoT of a record (of ``sample``, the question's sample), with everything an
    export needs that has no column of its own in ``extra["dscb"]``."""
    fidelity: dict[str, Any] = {}
    if line is not None:
        fidelity["line"] = line
    keys = record.keys()
    known = keys <= _RECORD_KEY_SET  # the usual record: no unknown fields
    unknown = {} if known else {k: v for k, v in record.items() if k not in _RECORD_KEY_SET}
    if len(keys) - len(unknown) != len(RECORD_KEYS):
        fidelity["missing"] = [k for k in _OPTIONAL_KEYS if k not in record]
    if unknown:
        fidelity["unknown"] = unknown
    options = record.get("student_llm_options")
    if options is not None:
        fidelity["llm_options"] = options
    elif "student_llm_options" in record:
        fidelity["llm_options"] = None
    if record.get("critiques", ()) is None or record.get("explanation_annotations", ()) is None:
        fidelity["null"] = [k for k in ("critiques", "explanation_annotations") if k in record and record[k] is None]
    if "student_raw_output" in record:
        raw = record["student_raw_output"]
        label = _raw_output_label(raw, record.get("student_explanation"), record.get("student_answer"))
        if label is None:
            fidelity["raw_output"] = raw
        else:  # the usual raw output: rebuilt from the explanation and answer, not stored twice
            fidelity["raw_output_label"] = label
    accuracy = record.get("student_accuracy")
    if accuracy is not None and (isinstance(accuracy, bool) or accuracy not in (0, 1) or isinstance(accuracy, float)):
        fidelity["accuracy"] = accuracy
    original = sample.extra.get(SAMPLE_EXTRA, {})
    for key in ("question", "gold_answer"):  # a record that differs from its question's first record
        if record[key] != original.get(key):
            fidelity[key] = record[key]
    return GeneratedCot(
        id=record["id"],
        cot=record.get("student_explanation"),
        fragments_version="",
        instruction=None,
        cot_trigger=record.get("student_prompt"),
        cot_trigger_template="",
        prompt_text="",
        answers=[
            Answer(
                id=record["id"],
                answer_extraction="",
                answer_extraction_template="",
                answer_extraction_text="",
                answer=record.get("student_answer"),
                correct_answer=_correct(accuracy),
            )
        ],
        author="",
        date="",
        api_service="",
        model=_model_field(record["student_model"], options),
        comment="",
        extra={COT_EXTRA: fidelity},
    )


#: The labels a student's raw output starts with under DSCB's student prompts (QA_explanation1,
#: QA_reasoning_step1): ``"<label>: <explanation>\nAnswer: (<answer>)"``.
RAW_OUTPUT_LABELS = ("Explanation", "Reasoning")


def _raw_output_label(raw: Any, explanation: Any, answer: Any) -> str | None:
    """The label of :data:`RAW_OUTPUT_LABELS` with which ``raw`` is exactly
    ``"<label>: <explanation>\nAnswer: (<answer>)"`` (see :func:`raw_output_of`), or None."""
    if raw.__class__ is not str or explanation.__class__ is not str or answer.__class__ is not str:
        return None
    for label in RAW_OUTPUT_LABELS:
        if raw.startswith(label) and raw == f"{label}: {explanation}\nAnswer: ({answer})":
            return label
    return None


def raw_output_of(fidelity: dict[str, Any], cot: GeneratedCot) -> Any:
    """A CoT's student_raw_output: as the file had it (kept in ``extra["dscb"]``), rebuilt from
    the explanation and answer where the import found it to be exactly their usual layout, or
    the explanation for a CoT ThoughtDesk generated."""
    label = fidelity.get("raw_output_label")
    answer = cot.answers[0].answer if cot.answers else None
    if label is not None and isinstance(cot.cot, str) and isinstance(answer, str):
        return f"{label}: {cot.cot}\nAnswer: ({answer})"
    return fidelity.get("raw_output", cot.cot)


def _model_field(name: str, options: dict[str, Any] | None) -> str:
    """ThoughtSource's model field: the repr of ``{'name': model, **options}`` (just the name
    without options); cached, as a file repeats a few students with the same options."""
    if not options:
        return name
    try:
        # With the types: 0, 0.0 and False are equal keys but print differently.
        key = (name, tuple((k, v.__class__, v) for k, v in options.items()))
        hash(key)
    except TypeError:  # an option whose value is a list or an object
        return _model_repr(name, options)
    return _cached_model_repr(key)


@lru_cache(maxsize=256)
def _cached_model_repr(key: tuple[str, tuple[tuple[str, type, Any], ...]]) -> str:
    return _model_repr(key[0], {k: v for k, _, v in key[1]})


def _model_repr(name: str, options: dict[str, Any]) -> str:
    return model_repr(name, **{k: v for k, v in options.items() if k != "name"})


_RECORD_KEY_SET = frozenset(RECORD_KEYS)
_OPTIONAL_KEYS = RECORD_KEYS[len(REQUIRED_KEYS) :]
_CRITIQUE_KEY_SET = frozenset(CRITIQUE_KEYS)


@lru_cache(maxsize=1024)
def _dimension(raw: str) -> tuple[str | None, ElementOutcome]:
    return parse_dimension(raw)  # a file repeats a handful of dimension strings


@lru_cache(maxsize=256)
def _no_flaw(raw: str) -> ElementOutcome:
    return ElementOutcome("parsed", raw)  # shared: a file says "None" the same few ways


def _feedback(value: Any) -> tuple[str | None, ElementOutcome]:
    if value.__class__ is not str:
        return None, _MISSING
    if not value.strip():
        return None, ElementOutcome("unparseable", value, "the text is empty")
    return value, _PARSED


def parsed_from_elements(elements: dict[str, Any]) -> ParsedCritique:
    """The parsed critique from a DSCB critique_elements object (no text parsing needed): every
    element with its outcome; "None" as the main flaw means no flaw."""
    get = elements.get
    flaw = get("main_flaw")
    if flaw.__class__ is str and _NO_FLAW.match(flaw):
        flaw, flaw_outcome = None, _no_flaw(flaw)
    else:
        flaw, flaw_outcome = _feedback(flaw)
    general, specific = get("general_feedback"), get("specific_feedback")
    # The usual feedback is text with words: parsed as it is (inline: 40,000 calls per import).
    if general.__class__ is str and general.strip():
        general_outcome = _PARSED
    else:
        general, general_outcome = _feedback(general)
    if specific.__class__ is str and specific.strip():
        specific_outcome = _PARSED
    else:
        specific, specific_outcome = _feedback(specific)
    dimension = get("dimension")
    name, dimension_outcome = _dimension(dimension) if dimension.__class__ is str else (None, _MISSING)
    score, score_outcome = element_score(get("explanation_score"), None, "")
    return ParsedCritique(
        flaw,
        name,
        general,
        specific,
        score,
        {
            "main_flaw": flaw_outcome,
            "dimension": dimension_outcome,
            "general_feedback": general_outcome,
            "specific_feedback": specific_outcome,
            "explanation_score": score_outcome,
        },
    )


def _rating_fidelity(note: dict[str, Any], known: tuple[str, ...], score_key: str) -> dict[str, Any]:
    if len(note) == len(known) and all(note.get(k) is not None for k in known):
        if type(note[score_key]) is not float:
            return {}  # the usual annotation: every field there, nothing null
    extra = {k: v for k, v in note.items() if k not in known}
    fidelity: dict[str, Any] = {}
    missing = [k for k in known if k not in note]
    if missing:
        fidelity["missing"] = missing
    nulls = [k for k in known if k != score_key and k in note and note[k] is None]
    if nulls:
        fidelity["null"] = nulls
    score = note.get(score_key)
    if isinstance(score, float):  # stored as an integer; 2.0 comes back as 2.0
        fidelity["score"] = score
    if fidelity:
        extra[ROW_EXTRA] = fidelity
    return extra


def _critique_parts(c: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str, ParsedCritique, Any, list[Any]]:
    """A DSCB critique object's stored parts: options, extra (unknown keys and what the export
    needs), raw text, parsed elements, elements, annotations."""
    keys = c.keys()
    extra = {} if keys <= _CRITIQUE_KEY_SET else {k: v for k, v in c.items() if k not in _CRITIQUE_KEY_SET}
    get = c.get
    options, text, notes = get("critique_llm_options"), get("critique_text"), get("critique_annotations")
    if len(keys) - len(extra) != len(CRITIQUE_KEYS) or options is None or text is None or notes is None:
        fidelity: dict[str, Any] = {}
        if len(keys) - len(extra) != len(CRITIQUE_KEYS):
            fidelity["missing"] = [k for k in CRITIQUE_KEYS if k not in c]
        if options is None and "critique_llm_options" in c:
            fidelity["llm_options"] = None
        if text is None and "critique_text" in c:
            fidelity["text"] = None
        if notes is None and "critique_annotations" in c:
            fidelity["annotations"] = None
        if fidelity:
            extra[ROW_EXTRA] = fidelity
    elements = get("critique_elements")
    text = text or ""
    parsed = parsed_from_elements(elements) if elements.__class__ is dict else parse_critique(text)
    return options or {}, extra, text, parsed, elements, notes or []


def _critique_rating(note: dict[str, Any]) -> tuple[str, int | None, dict[str, Any]]:
    """(author, score, extra) of a critique annotation."""
    score, worker = note.get("critique_score"), note.get("worker")
    if score.__class__ is int and worker.__class__ is str and len(note) == 2:
        return worker, score, {}  # the usual annotation: nothing to keep
    extra = _rating_fidelity(note, CRITIQUE_ANNOTATION_KEYS, "critique_score")
    return worker or "", None if score is None else int(score), extra


def _explanation_rating(note: dict[str, Any]) -> tuple[str, int | None, tuple[str, ...], dict[str, Any]]:
    """(author, score, dimensions, extra) of an explanation annotation."""
    score = note.get("explanation_score")
    extra = _rating_fidelity(note, EXPLANATION_ANNOTATION_KEYS, "explanation_score")
    return note.get("worker") or "", None if score is None else int(score), tuple(note.get("dimensions") or ()), extra


def critiques_for(record: dict[str, Any]) -> list[Critique]:
    """The record's critiques (``cot_pk`` 0: the caller sets it), each with its annotations as
    ratings and its position in the record."""
    out = []
    for position, c in enumerate(record.get("critiques") or ()):
        options, extra, text, parsed, elements, notes = _critique_parts(c)
        ratings = [
            CritiqueRating(author, score, "", rating_extra)
            for author, score, rating_extra in map(_critique_rating, notes)
        ]
        out.append(
            Critique(
                0,
                c["critique_model"],
                text,
                parsed,
                options,
                elements=elements,
                source="import",
                extra=extra,
                ratings=ratings,
                position=position,
            )
        )
    return out


def explanation_ratings_for(record: dict[str, Any]) -> list[ExplanationRating]:
    """The record's explanation_annotations as ratings of its CoT, in file order."""
    return [
        ExplanationRating(author, score, dimensions, extra=extra)
        for author, score, dimensions, extra in map(_explanation_rating, record.get("explanation_annotations") or ())
    ]


def queue_rows(rows: ImportedRows, cot_pk: int, record: dict[str, Any]) -> tuple[int, int]:
    """Queue a record's critiques (with their annotations) and explanation annotations as rows of
    CoT ``cot_pk``: what :func:`add_imported` stores for :func:`critiques_for` and
    :func:`explanation_ratings_for` of the record, without building those objects (a 10,000-record
    import has 20,000 critiques). Returns (critiques, ratings) queued."""
    critiques = ratings = 0
    for position, c in enumerate(record.get("critiques") or ()):
        options, extra, text, parsed, elements, notes = _critique_parts(c)
        pk = rows.critique(cot_pk, position, c["critique_model"], options, text, parsed, elements, extra)
        critiques += 1
        for j, note in enumerate(notes):
            rows.critique_rating(pk, j, *_critique_rating(note))
            ratings += 1
    for note in record.get("explanation_annotations") or ():
        author, score, dimensions, extra = _explanation_rating(note)
        rows.explanation_rating(cot_pk, author, score, dimensions, extra)
        ratings += 1
    return critiques, ratings
