"""DS Critique Bank (DSCB) JSON Lines records: read with their line numbers, validated, turned
into ThoughtDesk records; written back exactly by :mod:`.dscb_export` (docs/critiques-dscb.md).

A DSCB record is one student model's explanation of one question with the critiques of it::

    {"id", "qid", "dataset", "question" (choices inline: "... (A) x (B) y"), "gold_answer" (a letter),
     "student_model", "student_prompt", "student_llm_options", "student_answer", "student_accuracy" (1/0),
     "student_explanation", "student_raw_output",
     "critiques": [{"critique_model", "critique_llm_options", "critique_text",
                    "critique_elements": {"main_flaw", "dimension", "general_feedback",
                                          "specific_feedback", "explanation_score"},
                    "critique_annotations": [{"critique_score" 0-3, "worker"}]  (optional)}],
     "explanation_annotations": [{"explanation_score" 0-5, "dimensions": [...], "worker"}]  (optional)}

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

import codecs
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import msgspec

from thoughtdesk.core.critiques.parse import parse_critique, parse_dimension, parse_score
from thoughtdesk.core.critiques.records import (
    ELEMENTS,
    Critique,
    CritiqueRating,
    ElementOutcome,
    ExplanationRating,
    ParsedCritique,
)
from thoughtdesk.core.critiques.store import ImportedRows
from thoughtdesk.core.datasets.readers import decode_line
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample, model_repr

#: The record's fields, in the order DSCB writes them (an export writes them in this order, then
#: the record's unknown fields).
RECORD_KEYS = (
    "id",
    "qid",
    "dataset",
    "question",
    "gold_answer",
    "student_model",
    "student_prompt",
    "student_llm_options",
    "student_answer",
    "student_accuracy",
    "student_explanation",
    "student_raw_output",
    "critiques",
    "explanation_annotations",
)
#: Fields without which a record cannot be placed (which question, which student).
REQUIRED_KEYS = ("id", "qid", "dataset", "question", "gold_answer", "student_model")
CRITIQUE_KEYS = ("critique_model", "critique_llm_options", "critique_text", "critique_elements", "critique_annotations")
CRITIQUE_ANNOTATION_KEYS = ("critique_score", "worker")
EXPLANATION_ANNOTATION_KEYS = ("explanation_score", "dimensions", "worker")

#: The key of the fidelity data in a generated CoT's extra, and in a critique's or rating's extra.
COT_EXTRA = "dscb"
ROW_EXTRA = "_dscb"
#: The key of the original question text and gold letter in a sample's extra.
SAMPLE_EXTRA = "dscb"

_CHOICE_MARK = re.compile(r"\(([A-Z])\)\s*")
_NO_FLAW = re.compile(r"^\s*(?:none|n/?a|no\s+(?:main\s+)?flaws?(?:\s+found)?|nothing)\.?\s*$", re.IGNORECASE)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object"


@dataclass(slots=True)
class DscbRecord:
    """One record of a DSCB file, validated, with the line it was on (1-based)."""

    line: int
    data: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        """The question it belongs to: (dataset, qid)."""
        return self.data["dataset"], self.data["qid"]


class _Check:
    """Validates one record; every error names the file, the line and the field."""

    def __init__(self, path: Path | None, line: int) -> None:
        self.path, self.line = path, line

    def fail(self, field: str, message: str) -> DataFileError:
        return DataFileError(self.path, message, line=self.line, where=f"field {field}")

    def obj(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, f"must be an object, not {_kind(value)}")
        return value

    def text(self, obj: dict[str, Any], key: str, field: str, *, nullable: bool = True) -> None:
        value = obj.get(key)
        if key not in obj:
            raise self.fail(field, "is missing")
        if isinstance(value, str) or (value is None and nullable):
            return
        raise self.fail(field, f"must be text, not {_kind(value)}")

    def optional(self, obj: dict[str, Any], key: str, field: str, kinds: tuple[type, ...], what: str) -> None:
        if key in obj and obj[key] is not None and not isinstance(obj[key], kinds):
            raise self.fail(field, f"must be {what} or null, not {_kind(obj[key])}")

    def items(self, obj: dict[str, Any], key: str, field: str) -> list[Any]:
        value = obj.get(key)
        if key not in obj or value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(field, f"must be a list, not {_kind(value)}")
        return value

    def whole(self, obj: dict[str, Any], key: str, field: str, top: int) -> None:
        """A score field: a whole number 0..top or null (absent is allowed)."""
        value = obj.get(key)
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(field, f"must be a whole number 0-{top} or null, not {_kind(value)} ({value!r})")
        if value != int(value) or not 0 <= value <= top:
            raise self.fail(field, f"must be a whole number 0-{top} or null, not {value!r}")


# The common shapes, checked by msgspec in C: a record that converts to these types is valid by
# every rule below (they accept a subset of what the rules accept), so only the rest takes the
# careful path, which names the field that is wrong. Unknown fields are ignored here (kept by
# the conversion), absent fields take their defaults as the rules allow.
class _FastElements(msgspec.Struct):
    main_flaw: str | None = None
    dimension: str | None = None
    general_feedback: str | None = None
    specific_feedback: str | None = None
    explanation_score: int | float | None = None


class _FastCritiqueNote(msgspec.Struct):
    critique_score: Annotated[int, msgspec.Meta(ge=0, le=3)] | None = None
    worker: str | None = None


class _FastCritique(msgspec.Struct):
    critique_model: str
    critique_llm_options: dict[str, Any] | None = None
    critique_text: str | None = None
    critique_elements: _FastElements | None = None
    critique_annotations: list[_FastCritiqueNote] | None = None


class _FastExplanationNote(msgspec.Struct):
    explanation_score: Annotated[int, msgspec.Meta(ge=0, le=5)] | None = None
    dimensions: list[str] | None = None
    worker: str | None = None


class _FastRecord(msgspec.Struct):
    id: str
    qid: str
    dataset: str
    question: str
    gold_answer: str
    student_model: str
    student_prompt: str | None = None
    student_llm_options: dict[str, Any] | None = None
    student_answer: str | None = None
    student_accuracy: int | float | None = None
    student_explanation: str | None = None
    student_raw_output: str | None = None
    critiques: list[_FastCritique] | None = None
    explanation_annotations: list[_FastExplanationNote] | None = None


def validate_record(obj: Any, path: Path | None, line: int) -> dict[str, Any]:
    """Check one decoded record; return it unchanged or raise :class:`DataFileError` naming the
    file, the line and the field (``critiques[1].critique_elements.explanation_score``)."""
    try:
        msgspec.convert(obj, _FastRecord)
        return obj
    except msgspec.ValidationError:
        pass  # the careful path below says what is wrong, or accepts an unusual valid record
    c = _Check(path, line)
    if not isinstance(obj, dict):
        raise DataFileError(path, f"a DSCB record must be a JSON object, not {_kind(obj)}", line=line)
    for key in REQUIRED_KEYS:
        c.text(obj, key, key, nullable=False)
    for key in ("student_prompt", "student_answer", "student_explanation", "student_raw_output"):
        if key in obj:
            c.text(obj, key, key)
    c.optional(obj, "student_llm_options", "student_llm_options", (dict,), "an object")
    accuracy = obj.get("student_accuracy")
    if accuracy is not None and not isinstance(accuracy, int | float):  # bool is an int: accepted
        raise c.fail("student_accuracy", f"must be 1, 0 or null, not {_kind(accuracy)} ({accuracy!r})")
    for i, critique in enumerate(c.items(obj, "critiques", "critiques")):
        where = f"critiques[{i}]"
        c.obj(critique, where)
        c.text(critique, "critique_model", f"{where}.critique_model", nullable=False)
        if "critique_text" in critique:
            c.text(critique, "critique_text", f"{where}.critique_text")
        c.optional(critique, "critique_llm_options", f"{where}.critique_llm_options", (dict,), "an object")
        elements = critique.get("critique_elements")
        if elements is not None:
            c.obj(elements, f"{where}.critique_elements")
            for key in ELEMENTS[:4]:
                c.optional(elements, key, f"{where}.critique_elements.{key}", (str,), "text")
            _element_score(elements.get("explanation_score"), c, f"{where}.critique_elements.explanation_score")
        for j, note in enumerate(c.items(critique, "critique_annotations", f"{where}.critique_annotations")):
            at = f"{where}.critique_annotations[{j}]"
            c.obj(note, at)
            c.whole(note, "critique_score", f"{at}.critique_score", 3)
            if "worker" in note:
                c.text(note, "worker", f"{at}.worker")
    for j, note in enumerate(c.items(obj, "explanation_annotations", "explanation_annotations")):
        at = f"explanation_annotations[{j}]"
        c.obj(note, at)
        c.whole(note, "explanation_score", f"{at}.explanation_score", 5)
        for k, name in enumerate(c.items(note, "dimensions", f"{at}.dimensions")):
            if not isinstance(name, str):
                raise c.fail(f"{at}.dimensions[{k}]", f"must be text, not {_kind(name)}")
        if "worker" in note:
            c.text(note, "worker", f"{at}.worker")
    return obj


# Outcomes are frozen: the common ones are shared rather than built for every critique.
_PARSED = ElementOutcome("parsed")
_MISSING = ElementOutcome("missing")


def _element_score(value: Any, c: _Check | None, field: str) -> tuple[float | None, ElementOutcome]:
    """The explanation score of critique_elements: a number, or text holding one ("3", "3/5")."""
    if type(value) is int and 0 <= value <= 5:
        return float(value), _PARSED
    if value is None:
        return None, _MISSING
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        if c is None:
            return None, ElementOutcome("unparseable", str(value), "not a number")
        raise c.fail(field, f"must be a number, not {_kind(value)}")
    if isinstance(value, str):
        score, outcome = parse_score(value)
        if outcome.status != "parsed" and c is not None and (outcome.why or "").startswith("no number"):
            raise c.fail(field, f"must be a number, not the text {value!r}")
        return score, outcome
    if not math.isfinite(value) or not 0 <= value <= 5:
        return None, ElementOutcome("unparseable", str(value), "the score is outside 0-5")
    return float(value), _PARSED


# Reading ------------------------------------------------------------------------------------------


def looks_like_dscb(path: str | Path) -> bool:
    """True when the first record of ``path`` (JSON Lines) is a DSCB record, with the reader's
    tolerance: a UTF-8 byte-order mark is skipped, and a first line that starts an object
    naming DSCB's identifying fields as keys counts even when it cannot be decoded (NaN, a lone
    surrogate escape, too deep, UTF-16 text): :func:`read_dscb` then says what is wrong on line 1
    rather than the file being taken for a table. A first line longer than a megabyte is
    scanned in pieces for those keys, never read whole."""
    path = Path(path)
    if not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
            if head.startswith(_UTF16_BOMS):
                return _utf16_looks_like_dscb(handle, head)
            handle.seek(len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0)
            for _ in range(100):  # blank lines before the first record
                raw = handle.readline(_FIRST_LINE_LIMIT)
                if not raw or raw.strip():
                    break
            if not raw.strip() or not raw.lstrip().startswith(b"{"):
                return False
            if len(raw) == _FIRST_LINE_LIMIT and not raw.endswith(b"\n"):  # a longer first line
                return _keys_on_line(raw, handle)
            try:
                first = msgspec.json.decode(raw)
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                return _has_identifying_keys(raw)
    except OSError:
        return False
    return isinstance(first, dict) and set(IDENTIFYING_KEYS) <= first.keys()


#: The fields that make a record a DSCB record (for detection).
IDENTIFYING_KEYS = ("qid", "student_model", "student_explanation")
_KEY_PATTERNS = tuple(re.compile(rb'"' + key.encode() + rb'"\s*:') for key in IDENTIFYING_KEYS)
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
#: How much of an overlong first line detection scans for the identifying keys.
_FIRST_LINE_SCAN = 64 << 20


def _has_identifying_keys(raw: bytes) -> bool:
    return all(pattern.search(raw) for pattern in _KEY_PATTERNS)


def _keys_on_line(start: bytes, handle: BinaryIO) -> bool:
    """Whether the rest of a first line that began with ``start`` names every identifying key,
    read a megabyte at a time (a key cut between two pieces is found in their overlap)."""
    found = [bool(pattern.search(start)) for pattern in _KEY_PATTERNS]
    tail, scanned = start[-64:], len(start)
    while not all(found) and scanned < _FIRST_LINE_SCAN:
        piece = handle.readline(_FIRST_LINE_LIMIT)
        if not piece:
            break
        window = tail + piece
        found = [done or bool(pattern.search(window)) for done, pattern in zip(found, _KEY_PATTERNS, strict=True)]
        tail, scanned = window[-64:], scanned + len(piece)
        if piece.endswith(b"\n"):
            break
    return all(found)


def _utf16_looks_like_dscb(handle: BinaryIO, head: bytes) -> bool:
    encoding = "utf-16-le" if head.startswith(codecs.BOM_UTF16_LE) else "utf-16-be"
    handle.seek(2)
    text = handle.read(2 * _FIRST_LINE_LIMIT).decode(encoding, errors="replace").lstrip()
    return text.startswith("{") and _has_identifying_keys(text.split("\n", 1)[0].encode("utf-8"))


_FIRST_LINE_LIMIT = 1 << 20


def record_keys(value: Any) -> int:
    """The keys of a decoded DSCB record where DSCB has objects (the record, its llm options,
    critiques, their elements, options and annotations, its explanation annotations): at most
    all its keys. :func:`decode_line` compares it with the key places on the line, so a record
    of the usual shape needs no other duplicate-key check (objects elsewhere, in unknown fields,
    are not counted: such a record takes the general check)."""
    if value.__class__ is not dict:
        return 0
    n = len(value)
    options = value.get("student_llm_options")
    if options.__class__ is dict:
        n += len(options)
    critiques = value.get("critiques")
    if critiques.__class__ is list:
        for critique in critiques:
            if critique.__class__ is not dict:
                continue
            n += len(critique)
            for inner in (critique.get("critique_elements"), critique.get("critique_llm_options")):
                if inner.__class__ is dict:
                    n += len(inner)
            notes = critique.get("critique_annotations")
            if notes.__class__ is list:
                n += sum(len(note) for note in notes if note.__class__ is dict)
    notes = value.get("explanation_annotations")
    if notes.__class__ is list:
        n += sum(len(note) for note in notes if note.__class__ is dict)
    return n


def read_dscb(
    path: str | Path,
    *,
    on_error: str = "abort",
    errors: list[DataFileError] | None = None,
) -> Iterator[DscbRecord]:
    """The records of a DSCB file in file order, each validated (see :func:`validate_record`).

    ``on_error="abort"`` raises at the first bad record (invalid JSON or a bad field);
    ``"skip"`` appends its error to ``errors`` and goes on. A blank line is skipped.
    """
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as error:
        raise DataFileError(path, f"cannot be read: {error.strerror or error}") from None
    with handle:
        for line, raw in enumerate(handle, start=1):
            if line == 1:
                if raw.startswith(_UTF16_BOMS):
                    raise DataFileError(
                        path,
                        "UTF-16 text; DS Critique Bank files are UTF-8 JSON Lines: save the file as UTF-8 and "
                        "import it again",
                        line=1,
                    )
                if raw.startswith(codecs.BOM_UTF8):  # a Windows tool's byte-order mark: not part of the record
                    raw = raw[len(codecs.BOM_UTF8) :]
            if not raw or raw.isspace():  # (isspace stops at the first other byte; strip would copy the line)
                continue
            try:
                try:
                    obj = decode_line(raw, record_keys)
                except ValueError as error:  # malformed, not UTF-8, nested too deeply, a key twice
                    message = str(error).split(" (byte")[0].replace("malformed JSON: ", "")
                    raise DataFileError(path, f"invalid JSON: {message}", line=line) from None
                yield DscbRecord(line, validate_record(obj, path, line))
            except DataFileError as error:
                if on_error != "skip":
                    raise
                if errors is not None:
                    errors.append(error)


# Records -> ThoughtDesk ---------------------------------------------------------------------------


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
    score, score_outcome = _element_score(get("explanation_score"), None, "")
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
