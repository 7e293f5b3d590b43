"""ThoughtSource collection JSON (``{dataset: {split: [sample, ...]}}``), read and written losslessly.

Reading streams: the outer object is decoded with each sample left as an undecoded slice
(``msgspec.Raw``), then samples are decoded and validated one at a time, so memory stays close
to the file's size and every error names the dataset, split, sample index and field.

An object naming the same key twice (a dataset, a split, a sample's field) is refused with its
line and column: decoders keep the last value, so the first would be lost without a word. The
check is a count in C per sample (``readers.key_places`` of the slice against the value written
back); only a file that fails it is scanned in Python for the place.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO, overload

import msgspec

from thoughtdesk.core.datasets.readers import (
    TOO_DEEP,
    duplicate_key_message,
    escaped_key_ends,
    find_duplicate_key,
    first_bad_utf8,
    key_places,
)
from thoughtdesk.core.datasets.ts_extras import (
    SideFileError,
    header_line,
    merge_extras,
    read_side_file,
    side_line,
    side_path,
    split_extras,
)
from thoughtdesk.core.errors import DataFileError, line_column
from thoughtdesk.core.files import PART_SUFFIX, ExportTargetError, export_file, write_failure
from thoughtdesk.core.library.records import (
    ANNOTATION_KEYS,
    ANSWER_KEYS,
    COT_KEYS,
    OUTCOMES,
    SAMPLE_KEYS,
    SCORING_KEY,
    Annotation,
    Answer,
    GeneratedCot,
    Sample,
    Scoring,
)

_BYTE = re.compile(r"\(byte (\d+)\)")
_Outer = dict[str, dict[str, msgspec.Raw]]


@dataclass
class Record:
    """One sample read from a file, with where it came from (for messages)."""

    dataset: str
    split: str
    index: int
    sample: Sample

    @property
    def where(self) -> str:
        return f"dataset {self.dataset}, split {self.split}, sample index {self.index}"


class ThoughtSourceFile:
    """A ThoughtSource collection file opened for streaming. ``len()`` is its sample count."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self._data = self.path.read_bytes()
        except OSError as error:
            raise DataFileError(self.path, f"cannot be read: {error.strerror or error}") from None
        if self._data.startswith(codecs.BOM_UTF8):  # editors on Windows write one; JSON allows readers to skip it
            self._data = self._data[len(codecs.BOM_UTF8) :]
        try:
            outer = msgspec.json.decode(self._data, type=_Outer)
        except msgspec.ValidationError:  # (a subclass of DecodeError: caught first)
            raise DataFileError(
                self.path,
                "is not a ThoughtSource collection: expected an object {dataset: {split: [sample, ...]}}",
            ) from None
        except msgspec.DecodeError as error:
            raise self._syntax_error(error) from None
        except RecursionError:
            raise DataFileError(self.path, TOO_DEEP) from None
        except UnicodeDecodeError:
            line, column, byte = first_bad_utf8(self.path)
            raise DataFileError(self.path, f"not UTF-8 text (byte 0x{byte:02X})", line=line, column=column) from None
        self._splits: list[tuple[str, str, list[msgspec.Raw]]] = []
        for dataset, splits in outer.items():
            for split, raw in splits.items():
                try:
                    samples = msgspec.json.decode(raw, type=list[msgspec.Raw])
                except msgspec.ValidationError:
                    kind = type(json.loads(bytes(raw))).__name__
                    raise DataFileError(
                        self.path,
                        f"the split must be a list of samples, not {_json_kind(kind)}",
                        where=f"dataset {dataset}, split {split}",
                    ) from None
                self._splits.append((dataset, split, samples))
        # Key places in the whole file; records() compares them with the keys it decoded.
        # Places a written-back value may have that the file spells with an escape (\u0022:):
        # without them a string holding one made up for a lost key.
        self._key_places = key_places(self._data) + escaped_key_ends(self._data)
        self._outer_keys = len(outer) + sum(len(splits) for splits in outer.values())
        # ThoughtDesk's extras of an export, in the side file beside it (ts_extras)
        side = read_side_file(self.path)
        self._side: Path | None = None if side is None else side[0]
        self._extras = {} if side is None else side[1]
        if self._extras:
            self._check_all_extras_used()

    def _refuse_duplicate_key(self, where: str | None = None) -> None:
        """Raise the error for the first duplicate key in the file, if there is one (a count
        can overstate: a key written with unusual escapes)."""
        found = find_duplicate_key(self._data)
        if found is None:
            return
        key, offset = found
        line, column = line_column(self._data, offset)
        raise DataFileError(self.path, duplicate_key_message(key), line=line, column=column, where=where)

    def _syntax_error(self, error: msgspec.DecodeError) -> DataFileError:
        # msgspec reports a byte offset; people want a line and column.
        match = _BYTE.search(str(error))
        message = str(error).split(" (byte")[0].replace("JSON is malformed: ", "")
        if match:
            line, column = line_column(self._data, int(match.group(1)))
            return DataFileError(self.path, f"invalid JSON: {message}", line=line, column=column)
        if "truncated" in str(error).lower():
            line, column = line_column(self._data, len(self._data))
            return DataFileError(self.path, "invalid JSON: the file ends too early", line=line, column=column)
        return DataFileError(self.path, f"invalid JSON: {message}")

    def _with_extras(self, decoded: Any, extras: tuple, dataset: str, split: str, index: int) -> Sample:
        """The sample ``decoded`` with its extras from the side file put back."""
        sample_id, values, line = extras
        assert self._side is not None
        found = decoded.get("id") if isinstance(decoded, dict) else None
        if found != sample_id:
            raise SideFileError(
                self._side,
                f"does not match {self.path.name}: its extras are for sample {sample_id!r}, but dataset {dataset}, "
                f"split {split}, sample index {index} there is {found!r}; move it away to import the file without "
                "ThoughtDesk's extras",
                line=line,
            )
        merge_extras(decoded, values, self._side, line)
        return sample_from_json(decoded, self.path, f"dataset {dataset}, split {split}, sample index {index}")

    def _check_all_extras_used(self) -> None:
        sizes = {(d, s): len(samples) for d, s, samples in self._splits}
        for (dataset, split, index), (_, _, line) in self._extras.items():
            if index < 0 or index >= sizes.get((dataset, split), 0):
                raise SideFileError(
                    self._side,
                    f"does not match {self.path.name}: it has extras for dataset {dataset}, split {split}, sample "
                    f"index {index}, which that file does not have; move it away to import the file without "
                    "ThoughtDesk's extras",
                    line=line,
                )

    def __len__(self) -> int:
        return sum(len(samples) for _, _, samples in self._splits)

    def splits(self) -> list[tuple[str, str, int]]:
        return [(d, s, len(samples)) for d, s, samples in self._splits]

    def records(self) -> Iterator[Record]:
        """Every sample, decoded and validated, in file order."""
        strict = _STRICT_DECODER.decode
        decoded_places = 0
        for dataset, split, samples in self._splits:
            for index, raw in enumerate(samples):
                extras = self._extras.get((dataset, split, index)) if self._extras else None
                try:
                    if extras is not None:  # keys taken out into the side file: put back first
                        decoded: Any = msgspec.json.decode(raw)
                        decoded_places += _ENCODE(decoded).count(b'":')  # the file's own keys
                        sample = self._with_extras(decoded, extras, dataset, split, index)
                    else:
                        try:
                            # Fast path: a sample with exactly ThoughtSource's keys and types is
                            # decoded and validated by msgspec in C.
                            decoded = strict(raw)
                            sample = _from_strict(decoded)
                        except msgspec.ValidationError:
                            # Anything unusual (extra or missing keys, nulls, wrong types) takes the
                            # careful path, which keeps extras and names the field that is wrong.
                            where = f"dataset {dataset}, split {split}, sample index {index}"
                            decoded = msgspec.json.decode(raw)
                            sample = sample_from_json(decoded, self.path, where)
                        # Written back (in C, no spaces) the value has each key it kept once, and
                        # the same strings: a sum short of the file's key places means a lost key.
                        decoded_places += _ENCODE(decoded).count(b'":')
                except (RecursionError, UnicodeDecodeError) as error:
                    where = f"dataset {dataset}, split {split}, sample index {index}"
                    why = TOO_DEEP if isinstance(error, RecursionError) else "a text that is not UTF-8"
                    raise DataFileError(self.path, why, where=where) from None
                yield Record(dataset, split, index, sample)
        if self._key_places > self._outer_keys + decoded_places:
            # Raised after the last sample: an import is one transaction, so nothing is kept.
            self._refuse_duplicate_key()


class _StrictAnswer(msgspec.Struct, forbid_unknown_fields=True):
    id: str | None
    answer_extraction: str | None
    answer_extraction_template: str | None
    answer_extraction_text: str | None
    answer: str | None
    correct_answer: bool | None


class _StrictAnnotation(msgspec.Struct, forbid_unknown_fields=True):
    author: str | None
    date: str | None
    key: str
    value: Any


class _StrictCot(msgspec.Struct, forbid_unknown_fields=True):
    id: str | None
    fragments_version: str | None
    instruction: str | None
    cot_trigger: str | None
    cot_trigger_template: str | None
    prompt_text: str | None
    cot: str | None
    answers: list[_StrictAnswer]
    author: str | None
    date: str | None
    api_service: str | None
    model: str | None
    comment: str | None
    annotations: list[_StrictAnnotation]


class _StrictSample(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    ref_id: str | None
    question: str
    type: str | None
    choices: list[Any] | None
    context: str | None
    cot: list[Any] | None
    answer: list[Any] | None
    generated_cot: list[_StrictCot]
    feedback: Any


_STRICT_DECODER = msgspec.json.Decoder(_StrictSample)
_ENCODE = msgspec.json.encode


def _from_strict(s: _StrictSample) -> Sample:
    cots = [
        GeneratedCot(
            id=c.id,
            cot=c.cot,
            fragments_version=c.fragments_version,
            instruction=c.instruction,
            cot_trigger=c.cot_trigger,
            cot_trigger_template=c.cot_trigger_template,
            prompt_text=c.prompt_text,
            answers=[
                Answer(
                    a.id,
                    a.answer_extraction,
                    a.answer_extraction_template,
                    a.answer_extraction_text,
                    a.answer,
                    a.correct_answer,
                )
                for a in c.answers
            ],
            author=c.author,
            date=c.date,
            api_service=c.api_service,
            model=c.model,
            comment=c.comment,
            annotations=[Annotation(n.key, n.value, n.author, n.date) for n in c.annotations],
        )
        for c in s.generated_cot
    ]
    return Sample(
        id=s.id,
        question=s.question,
        type=s.type,
        choices=s.choices,
        answer=s.answer,
        cot=s.cot,
        context=s.context,
        ref_id=s.ref_id,
        generated_cot=cots,
        feedback=s.feedback,
    )


def _json_kind(python_type: str) -> str:
    return {
        "dict": "an object",
        "list": "a list",
        "str": "a string",
        "int": "a number",
        "float": "a number",
        "bool": "a boolean",
        "NoneType": "null",
    }.get(python_type, python_type)


class _Fields:
    """Reads known fields of one JSON object, remembering extras and missing keys."""

    def __init__(self, obj: Any, known: tuple[str, ...], path: Path | None, where: str, what: str):
        if not isinstance(obj, dict):
            raise DataFileError(path, f"{what} must be an object, not {_json_kind(type(obj).__name__)}", where=where)
        self.obj, self.path, self.where = obj, path, where
        self.extra = {k: v for k, v in obj.items() if k not in known}
        self.missing = tuple(k for k in known if k not in obj)

    def error(self, key: str, message: str) -> DataFileError:
        return DataFileError(self.path, message, where=f"{self.where}, field {key}")

    @overload
    def text(self, key: str, default: str | None = "", *, required: Literal[True]) -> str: ...
    @overload
    def text(self, key: str, default: str | None = "", *, required: bool = False) -> str | None: ...

    def text(self, key: str, default: str | None = "", *, required: bool = False) -> str | None:
        """The text field ``key``: ``default`` when absent, None when null; ``required`` fields
        are never absent or null (an error is raised), so they are always text."""
        if key not in self.obj:
            if required:
                raise self.error(key, "is missing")
            return default
        value = self.obj[key]
        if value is None and not required:
            return None
        if isinstance(value, str):
            return value
        if required and isinstance(value, int) and not isinstance(value, bool):
            raise self.error(key, f"must be text, not a number ({value})")
        raise self.error(key, f"must be text, not {_json_kind(type(value).__name__)}")

    def items(self, key: str) -> list[Any] | None:
        """A list field that may also be null or absent (stored as it was)."""
        value = self.obj.get(key, [])
        if value is None or isinstance(value, list):
            return value
        raise self.error(key, f"must be a list, not {_json_kind(type(value).__name__)}")

    def records(self, key: str) -> list[Any]:
        value = self.obj.get(key, [])
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, f"must be a list, not {_json_kind(type(value).__name__)}")
        return value


def sample_from_json(obj: Any, path: Path | None, where: str) -> Sample:
    """Validate one ThoughtSource sample object and turn it into a :class:`Sample`."""
    f = _Fields(obj, SAMPLE_KEYS, path, where, "a sample")
    raw_cots = f.records("generated_cot")
    if obj.get("generated_cot", []) is None:
        raise f.error("generated_cot", "must be a list, not null")
    cots = [_cot_from_json(c, path, f"{where}, generated_cot {i}") for i, c in enumerate(raw_cots)]
    return Sample(
        id=f.text("id", required=True),
        question=f.text("question", required=True),
        type=f.text("type", "multiplechoice"),
        choices=f.items("choices"),
        answer=f.items("answer"),
        cot=f.items("cot"),
        context=f.text("context"),
        ref_id=f.text("ref_id"),
        generated_cot=cots,
        feedback=obj.get("feedback", []),
        extra=f.extra,
        missing=f.missing,
    )


#: The ``correct_answer`` a ThoughtDesk export writes for each outcome.
_EXPORTED_CORRECT = {"correct": True, "incorrect": False, "unextractable": False}


def _scoring_from_json(fa: _Fields, correct: bool | None) -> Scoring | None:
    """ThoughtDesk's scoring carried in the answer's :data:`SCORING_KEY` field, or None.

    The field is checked strictly (a clear error names it). It is restored only when it still
    agrees with ``correct_answer``: a file whose answers another tool re-graded keeps that
    tool's verdict, and the stale field stays in the answer's extras, unchanged.
    """
    if SCORING_KEY not in fa.extra:
        return None
    value = fa.extra[SCORING_KEY]
    field = SCORING_KEY
    if not isinstance(value, dict):
        raise fa.error(field, f"must be an object, not {_json_kind(type(value).__name__)}")
    outcome = value.get("outcome")
    if outcome not in OUTCOMES:
        raise fa.error(f"{field}.outcome", f"must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
    texts: dict[str, str | None] = {}
    for key in ("value", "method", "reason"):
        text = value.get(key)
        if text is not None and not isinstance(text, str):
            raise fa.error(f"{field}.{key}", f"must be text or null, not {_json_kind(type(text).__name__)}")
        texts[key] = text
    span = value.get("span")
    if span is not None:
        if (
            not isinstance(span, list)
            or len(span) != 3
            or not (span[0] is None or isinstance(span[0], str))
            or not all(p is None or (isinstance(p, int) and not isinstance(p, bool)) for p in span[1:])
        ):
            raise fa.error(f"{field}.span", "must be [source, start, end] (text, whole numbers or nulls)")
        span = (span[0], span[1], span[2])
    original = value.get("original")
    if original is not None and not isinstance(original, dict):
        raise fa.error(f"{field}.original", f"must be an object or null, not {_json_kind(type(original).__name__)}")
    if correct is not _EXPORTED_CORRECT[outcome]:
        return None
    return Scoring(outcome, texts["value"], texts["method"], texts["reason"], span, original)


def _cot_from_json(obj: Any, path: Path | None, where: str) -> GeneratedCot:
    f = _Fields(obj, COT_KEYS, path, where, "a generated CoT")
    answers = []
    for i, a in enumerate(f.records("answers")):
        fa = _Fields(a, ANSWER_KEYS, path, f"{where}, answer {i}", "an answer")
        correct = a.get("correct_answer")
        if correct is not None and not isinstance(correct, bool):
            raise fa.error("correct_answer", "must be true, false or null")
        scoring = _scoring_from_json(fa, correct)
        if scoring is not None:
            del fa.extra[SCORING_KEY]  # held in ``scoring`` now; written back from it on export
            if scoring.outcome == "unextractable":
                correct = None  # ThoughtDesk keeps "not extractable" apart from "incorrect"
        answers.append(
            Answer(
                id=fa.text("id"),
                answer_extraction=fa.text("answer_extraction"),
                answer_extraction_template=fa.text("answer_extraction_template"),
                answer_extraction_text=fa.text("answer_extraction_text"),
                answer=fa.text("answer"),
                correct_answer=correct,
                extra=fa.extra,
                missing=fa.missing,
                scoring=scoring,
            )
        )
    annotations = []
    for i, n in enumerate(f.records("annotations")):
        fn = _Fields(n, ANNOTATION_KEYS, path, f"{where}, annotation {i}", "an annotation")
        annotations.append(
            Annotation(
                key=fn.text("key", required=True),
                value=n.get("value"),
                author=fn.text("author"),
                date=fn.text("date"),
                extra=fn.extra,
                missing=fn.missing,
            )
        )
    if "answers" in obj and obj["answers"] is None or "annotations" in obj and obj["annotations"] is None:
        raise f.error("answers" if obj.get("answers", []) is None else "annotations", "must be a list, not null")
    reasoning, finish_reason, reasoning_tokens = _reasoning_from_json(f)
    return GeneratedCot(
        id=f.text("id"),
        cot=f.text("cot"),
        fragments_version=f.text("fragments_version"),
        instruction=f.text("instruction", None),
        cot_trigger=f.text("cot_trigger", None),
        cot_trigger_template=f.text("cot_trigger_template"),
        prompt_text=f.text("prompt_text"),
        answers=answers,
        author=f.text("author"),
        date=f.text("date"),
        api_service=f.text("api_service"),
        model=f.text("model"),
        comment=f.text("comment"),
        annotations=annotations,
        extra=f.extra,
        missing=f.missing,
        reasoning=reasoning,
        finish_reason=finish_reason,
        reasoning_tokens=reasoning_tokens,
    )


#: The key of a CoT object that carries its thinking, finish reason and reasoning tokens
#: (outside ThoughtSource's schema: the export's side file holds it, see ts_extras).
REASONING_KEY = "thoughtdesk_reasoning"


def _reasoning_from_json(f: _Fields) -> tuple[str | None, str | None, int | None]:
    """The thinking, finish reason and reasoning tokens a CoT's :data:`REASONING_KEY` holds
    (taken out of its extras); a value of the wrong type is left in the extras, not guessed."""
    value = f.extra.get(REASONING_KEY)
    if not isinstance(value, dict):
        return None, None, None
    reasoning, finish, tokens = value.get("reasoning"), value.get("finish_reason"), value.get("reasoning_tokens")
    if not (
        (reasoning is None or isinstance(reasoning, str))
        and (finish is None or isinstance(finish, str))
        and (tokens is None or (isinstance(tokens, int) and not isinstance(tokens, bool)))
    ):
        return None, None, None
    del f.extra[REASONING_KEY]
    return reasoning, finish, tokens


def _reasoning_to_json(c: GeneratedCot) -> dict[str, Any]:
    if c.reasoning is None and c.finish_reason is None and c.reasoning_tokens is None:
        return {}
    return {
        REASONING_KEY: {
            "reasoning": c.reasoning,
            "finish_reason": c.finish_reason,
            "reasoning_tokens": c.reasoning_tokens,
        }
    }


# Writing ------------------------------------------------------------------------------------


def _known(record: Any, keys: tuple[str, ...], values: dict[str, Any]) -> dict[str, Any]:
    out = {k: values[k] for k in keys if k not in record.missing}
    out.update(record.extra)
    return out


def _answer_to_json(a: Answer) -> dict[str, Any]:
    """An answer's JSON object. An answer ThoughtDesk scored carries that scoring in
    :data:`SCORING_KEY`, and one it found not extractable is written ``correct_answer: false``
    (graded, not correct), because ThoughtSource reads null as "never evaluated"."""
    correct = a.correct_answer
    if a.scoring is not None and correct is None and a.scoring.outcome == "unextractable":
        correct = False
    out = _known(
        a,
        ANSWER_KEYS,
        {
            "id": a.id,
            "answer_extraction": a.answer_extraction,
            "answer_extraction_template": a.answer_extraction_template,
            "answer_extraction_text": a.answer_extraction_text,
            "answer": a.answer,
            "correct_answer": correct,
        },
    )
    if a.scoring is not None:
        if "correct_answer" not in out:  # the source file had no such key: the verdict needs it
            out["correct_answer"] = correct
        out[SCORING_KEY] = a.scoring.to_json()
    return out


def sample_to_json(s: Sample) -> dict[str, Any]:
    """The ThoughtSource JSON object of a sample: known keys in ThoughtSource's order, then extras."""
    cots = []
    for c in s.generated_cot:
        answers = [_answer_to_json(a) for a in c.answers]
        annotations = [
            _known(n, ANNOTATION_KEYS, {"author": n.author, "date": n.date, "key": n.key, "value": n.value})
            for n in c.annotations
        ]
        cots.append(
            _known(
                c,
                COT_KEYS,
                {
                    "id": c.id,
                    "fragments_version": c.fragments_version,
                    "instruction": c.instruction,
                    "cot_trigger": c.cot_trigger,
                    "cot_trigger_template": c.cot_trigger_template,
                    "prompt_text": c.prompt_text,
                    "cot": c.cot,
                    "answers": answers,
                    "author": c.author,
                    "date": c.date,
                    "api_service": c.api_service,
                    "model": c.model,
                    "comment": c.comment,
                    "annotations": annotations,
                },
            )
            | _reasoning_to_json(c)
        )
    return _known(
        s,
        SAMPLE_KEYS,
        {
            "id": s.id,
            "ref_id": s.ref_id,
            "question": s.question,
            "type": s.type,
            "choices": s.choices,
            "context": s.context,
            "cot": s.cot,
            "answer": s.answer,
            "generated_cot": cots,
            "feedback": s.feedback,
        },
    )


def write_collection(
    path: str | os.PathLike[str],
    splits: Iterator[tuple[str, str, Iterator[Sample]]],
    *,
    progress: Callable[[int], None] | None = None,
    side_file: bool = True,
) -> int:
    """Write ``{dataset: {split: [...]}}`` to ``path`` one sample at a time; return the count.

    With ``side_file`` (the default) the file holds only the keys of ThoughtSource's schema, so
    ThoughtSource's loader opens it, and every other key goes to the side file beside it
    (:mod:`thoughtdesk.core.datasets.ts_extras`; removed when no sample has any); without, they
    stay inline (one stream: standard output).

    Writes through :func:`thoughtdesk.core.files.export_file`, so a failed export never leaves a
    truncated file under the requested name. ``splits`` must yield each
    (dataset, split) once, grouped by dataset.
    """
    path = Path(path)
    count = 0
    side = side_path(path) if side_file else None
    side_part = None if side is None else side.with_name(side.name + PART_SUFFIX)
    side_out: TextIO | None = None
    try:
        with export_file(path) as out:
            for dataset, split, index, sample in _write_samples(out, splits):
                count += 1
                if progress is not None and count % 1000 == 0:
                    progress(count)
                if side_part is None:
                    continue
                extras = split_extras(sample)
                if extras is None:
                    continue
                if side_out is None:
                    side_out = side_part.open("w", encoding="utf-8", newline="\n")
                    side_out.write(header_line(path))
                side_out.write(side_line(dataset, split, index, sample.get("id"), extras))
            if side_out is not None:
                side_out.close()
        if side is not None:  # the export is in place: its extras beside it, or no stale ones
            if side_out is not None:
                os.replace(side_part, side)  # type: ignore[arg-type]
            else:
                side.unlink(missing_ok=True)
    except OSError as error:
        raise ExportTargetError(write_failure(side or path, error)) from None
    finally:
        if side_out is not None:
            side_out.close()
        if side_part is not None:
            side_part.unlink(missing_ok=True)
    return count


def _write_samples(
    out: TextIO, splits: Iterator[tuple[str, str, Iterator[Sample]]]
) -> Iterator[tuple[str, str, int, dict[str, Any]]]:
    """Write the collection's JSON to ``out``; yield each sample's object before it is written,
    so the caller may take keys out of it (the side file's extras)."""
    out.write("{")
    current: str | None = None
    first_split = True
    for dataset, split, samples in splits:
        if dataset != current:
            if current is not None:
                out.write("\n  }")
                out.write(",")
            out.write(f"\n  {json.dumps(dataset, ensure_ascii=False)}: {{")
            current, first_split = dataset, True
        out.write("" if first_split else ",")
        first_split = False
        out.write(f"\n    {json.dumps(split, ensure_ascii=False)}: [")
        for index, sample in enumerate(samples):
            out.write(",\n      " if index else "\n      ")
            obj = sample_to_json(sample)
            yield dataset, split, index, obj
            out.write(json.dumps(obj, ensure_ascii=False))
        out.write("\n    ]")
    if current is not None:
        out.write("\n  }")
    out.write("\n}\n")
