"""DS Critique Bank (DSCB) JSON Lines records: read with their line numbers and validated; turned
into ThoughtDesk records by :mod:`.dscb_mapping` and written back exactly by :mod:`.dscb_export`
(docs/critiques-dscb.md).

A DSCB record is one student model's explanation of one question with the critiques of it::

    {"id", "qid", "dataset", "question" (choices inline: "... (A) x (B) y"), "gold_answer" (a letter),
     "student_model", "student_prompt", "student_llm_options", "student_answer", "student_accuracy" (1/0),
     "student_explanation", "student_raw_output",
     "critiques": [{"critique_model", "critique_llm_options", "critique_text",
                    "critique_elements": {"main_flaw", "dimension", "general_feedback",
                                          "specific_feedback", "explanation_score"},
                    "critique_annotations": [{"critique_score" 0-3, "worker"}]  (optional)}],
     "explanation_annotations": [{"explanation_score" 0-5, "dimensions": [...], "worker"}]  (optional)}

This module is the format: its fields and the keys ThoughtDesk keeps them under, the check of a
record (:func:`validate_record`), the first-line test for the import dialog and the CLI
(:func:`looks_like_dscb`) and the reader (:func:`read_dscb`).
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import msgspec

from thoughtdesk.core.critiques.parse import parse_score
from thoughtdesk.core.critiques.records import (
    ELEMENTS,
    ElementOutcome,
)
from thoughtdesk.core.datasets.readers import decode_line
from thoughtdesk.core.errors import DataFileError

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
            element_score(elements.get("explanation_score"), c, f"{where}.critique_elements.explanation_score")
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


def element_score(value: Any, c: _Check | None, field: str) -> tuple[float | None, ElementOutcome]:
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
