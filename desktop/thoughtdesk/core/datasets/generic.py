"""Generic import of any JSON, JSON Lines, CSV or TSV file through a column mapping.

A :class:`ColumnMapping` says which column (or JSON key; ``a.b`` reaches into nested objects)
holds the question, choices, answer, reference CoT, context, id and split. Mappings are plain
data: ``to_json``/``from_json`` save and reuse them; ``parse_mapping`` reads the CLI form
``question=problem,answer=label,choices=opa|opb|opc``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from thoughtdesk.core.datasets.loading import LoadContext, RecordError
from thoughtdesk.core.datasets.readers import csv_header, iter_csv, iter_json_container, iter_jsonl
from thoughtdesk.core.datasets.text import format_number
from thoughtdesk.core.errors import DataFileError, ThoughtDeskError
from thoughtdesk.core.library.records import ANSWER_TYPES, Sample
from thoughtdesk.core.sentences import split_sentences


class MappingError(ThoughtDeskError, ValueError):
    """A column mapping that cannot be used (a bad ``--map`` text or an unknown saved name)."""


_ANSWER_FORMATS = ("auto", "text", "letter", "index1", "index0")
_FIELDS = ("question", "choices", "answer", "cot", "context", "id", "split")


@dataclass(slots=True)
class ColumnMapping:
    """Which source column feeds each sample field.

    ``choices`` is one column holding a list (JSON list, or text split on ``choices_separator``)
    or several columns, one per choice. ``answer`` may hold the choice text, its letter (A, B..)
    or its 1-based number. ``cot`` is a list column or text split into sentences.
    ``answer_type`` is one of ThoughtSource's types; ``split`` a column, else ``default_split``.
    """

    question: str
    answer: str | None = None
    choices: list[str] = field(default_factory=list)
    cot: str | None = None
    context: str | None = None
    id: str | None = None
    split: str | None = None
    answer_type: str = "text"
    default_split: str = "train"
    choices_separator: str = "|"
    #: How ``answer`` names the choice: "auto" (text, else letter, else 1-based number),
    #: "text", "letter", "index1" (1-based, e.g. MedMCQA's cop) or "index0".
    answer_format: str = "auto"
    #: False for a CSV/TSV file whose first row is data (MMLU's files): its columns are then
    #: named by position, "1", "2", ... (``question=1,choices=2|3|4|5,answer=6``).
    header: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.choices, str):
            self.choices = [self.choices]
        if self.answer_type not in ANSWER_TYPES:
            raise ValueError(f"answer type {self.answer_type!r} is not one of {', '.join(ANSWER_TYPES)}")
        if self.answer_format not in _ANSWER_FORMATS:
            raise ValueError(f"answer format {self.answer_format!r} is not one of {', '.join(_ANSWER_FORMATS)}")
        if not self.question:
            raise ValueError("the mapping needs a question column")

    def to_json(self) -> str:
        """The mapping as a JSON object (to save and reuse it)."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> ColumnMapping:
        """A mapping saved with :meth:`to_json`."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("a saved mapping must be a JSON object")
        return cls(**data)


def parse_mapping(text: str) -> ColumnMapping:
    """Parse ``question=problem,answer=label,choices=opa|opb,answer_type=multiplechoice``.

    ``choices`` takes one column or several separated by ``|``; ``type`` is accepted for
    ``answer_type``. Raises :class:`MappingError` (a ``ValueError``) naming the bad part.
    """
    values: dict[str, Any] = {}
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not value:
            raise MappingError(f"mapping part {part!r} should look like field=column")
        if key == "type":
            key = "answer_type"
        if key == "header":
            if value.lower() not in ("yes", "no", "true", "false"):
                raise MappingError(f"header={value}: write header=no when the first row is data, header=yes otherwise")
            values[key] = value.lower() in ("yes", "true")
        elif key == "choices":
            values[key] = [column.strip() for column in value.split("|") if column.strip()]
        elif key in _FIELDS or key in ("answer_type", "default_split", "choices_separator", "answer_format"):
            values[key] = value
        else:
            raise MappingError(
                f"unknown mapping field {key!r}; known: {', '.join(_FIELDS)}, "
                "answer_type, answer_format, default_split, choices_separator, header"
            )
    if "question" not in values:
        raise MappingError("the mapping needs question=COLUMN")
    try:
        return ColumnMapping(**values)
    except ValueError as error:
        raise MappingError(str(error)) from None


def _file_kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return "parquet"
    if suffix in (".jsonl", ".jsonlines", ".ndjson"):
        return "jsonl"
    if suffix == ".tsv":
        return "tsv"
    if suffix == ".csv":
        return "csv"
    if suffix == ".json":
        with open(path, encoding="utf-8-sig", errors="replace") as handle:
            head = handle.read(4096).lstrip()
        if head.startswith("{"):
            # One object per line (JSONL with .json) or a single object of records.
            first = head.split("\n", 1)[0].strip()
            try:
                json.loads(first)
                return "jsonl" if "\n" in head.strip() else "json"
            except (json.JSONDecodeError, RecursionError):
                return "json"
        return "json"
    raise DataFileError(
        path, f"unsupported file type {suffix or '(none)'}", hint="use JSON, JSON Lines, CSV, TSV or Parquet"
    )


def position_names(count: int) -> list[str]:
    """The names of a headerless table's columns: their 1-based positions, ``"1"`` .. ``"count"``."""
    return [str(i) for i in range(1, count + 1)]


def first_row_is_data(path: str | Path) -> bool:
    """True when a CSV/TSV file's first row looks like a record, not a header (MMLU's files):
    a header's cells are short, distinct, non-empty names; a question is long or ends in
    sentence punctuation, and a row of answers repeats or leaves cells empty. Other files: False."""
    path = Path(path)
    if path.suffix.lower() not in (".csv", ".tsv"):
        return False
    try:
        rows = iter_csv(path, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
        first = csv_header(rows)
    except (DataFileError, OSError, UnicodeDecodeError):
        return False
    if not first:
        return False
    cells = [cell.strip() for cell in first]
    if any(not cell for cell in cells) or len(set(cells)) < len(cells):
        return True
    return any(len(cell) > 40 or cell.endswith(("?", ".", ":")) or "  " in cell for cell in cells)


def table_records(path: Path, *, header: bool = True) -> Iterator[tuple[int, Any]]:
    """``(line, record-dict | DataFileError)`` for any supported file. ``header=False``: a
    CSV/TSV file's first row is data, and its columns are named by position (:func:`position_names`)."""
    kind = _file_kind(path)
    if kind == "parquet":
        yield from parquet_records(path)
    elif kind == "jsonl":
        yield from iter_jsonl(path)
    elif kind == "json":
        for line, key, value in iter_json_container(path):
            if isinstance(key, str) and isinstance(value, dict) and "id" not in value:
                value = {"id": key, **value}  # {key: record}: the key is the record's id
            yield line, value
    elif not header:
        names: list[str] = []
        for line, row in iter_csv(path, delimiter="\t" if kind == "tsv" else ",", header=False):
            if isinstance(row, DataFileError):
                yield line, row
                continue
            if not names:  # the first row sets the column count, as a header would
                names = position_names(len(row))
            if len(row) != len(names):
                yield line, DataFileError(path, f"expected {len(names)} columns, found {len(row)}", line=line)
                continue
            yield line, dict(zip(names, row, strict=True))
    else:
        rows = iter_csv(path, delimiter="\t" if kind == "tsv" else ",")
        columns = csv_header(rows)
        if columns is None:
            return
        for line, row in rows:
            yield line, row if isinstance(row, DataFileError) else dict(zip(columns, row, strict=False))


def parquet_missing_hint() -> str:
    """What to do when Parquet is asked for without pyarrow: install it, or (in the packaged
    app, which leaves pyarrow out) use JSONL or CSV, or the pip-installed ThoughtDesk."""
    if getattr(sys, "frozen", False):
        return (
            "this packaged ThoughtDesk has no Parquet support (pyarrow is left out of it): use JSONL or "
            "CSV, or ThoughtDesk installed with pip install 'thoughtdesk[parquet]'"
        )
    return "pip install 'thoughtdesk[parquet]' (or pip install pyarrow)"


def parquet_records(path: Path) -> Iterator[tuple[int, Any]]:
    """``(row number, record-dict)`` of a Parquet file (1-based rows stand in for lines), read a
    batch at a time through pyarrow, which is optional: without it a clear error says so."""
    try:
        import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]  # optional, and untyped when installed
        from pyarrow import ArrowException  # type: ignore[import-not-found,import-untyped,unused-ignore]  # as above
    except ImportError:
        raise DataFileError(
            path, "reading Parquet needs pyarrow, which is not installed", hint=parquet_missing_hint()
        ) from None
    try:
        reader = pq.ParquetFile(path)
        row = 0
        for batch in reader.iter_batches(batch_size=2000):
            for record in batch.to_pylist():
                row += 1
                yield row, record
    except (OSError, ValueError, ArrowException) as error:  # every Arrow error (ArrowInvalid: ValueError)
        why = " ".join(str(error).split())  # pyarrow's messages run over several lines: one here
        raise DataFileError(path, f"not a readable Parquet file: {why}") from None


def head_records(path: str | Path, n: int, *, header: bool = True) -> list[tuple[int | None, Any]]:
    """The first ``n`` ``(line, record or DataFileError)`` of a file, read once (a mapping
    dialog keeps them and re-maps them on every change instead of re-reading the file)."""
    head: list[tuple[int | None, Any]] = []
    for item in table_records(Path(path), header=header):
        if len(head) >= n:
            break
        head.append(item)
    return head


def preview(path: str | Path, n: int = 5, records=None) -> tuple[list[str], list[dict[str, Any]]]:
    """The column names and the first ``n`` good records of a file (or of ``records`` from
    :func:`head_records`), for a live mapping preview."""
    columns: list[str] = []
    rows: list[dict[str, Any]] = []
    for _, record in records if records is not None else table_records(Path(path)):
        if isinstance(record, DataFileError):
            continue
        if not isinstance(record, dict):
            record = {"value": record}
        for key in record:
            if key not in columns:
                columns.append(key)
        rows.append(record)
        if len(rows) >= n:
            break
    return columns, rows


_MISSING = object()


def _get(record: dict, column: str) -> Any:
    if column in record:
        return record[column]
    value: Any = record
    for part in column.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _text(value: Any) -> str:
    if isinstance(value, float):
        return format_number(value)
    return (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False)
        if isinstance(value, (dict, list))
        else str(value)
    )


def _as_list(value: Any, separator: str) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                parsed = json.loads(stripped)
                if isinstance(parsed, list):
                    return parsed
            except (json.JSONDecodeError, RecursionError):
                pass
        return [part.strip() for part in stripped.split(separator) if part.strip()]
    return [value]


def _resolve_answer(raw: Any, choices: list[str], answer_format: str) -> str:
    text = _text(raw).strip()
    if not choices:
        return text
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: len(choices)]
    if answer_format in ("auto", "text") and text in choices:
        return text
    if answer_format in ("auto", "letter") and len(text) == 1 and text.upper() in letters:
        return choices[letters.index(text.upper())]
    if answer_format in ("auto", "index1") and text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    if answer_format == "index0" and text.isdigit() and int(text) < len(choices):
        return choices[int(text)]
    raise RecordError("answer", f"answer {text!r} is not among the choices {choices!r}")


def mapped_sample(record: Any, index: int, mapping: ColumnMapping, stem: str) -> tuple[str, Sample]:
    """``(split, Sample)`` of one table record read through ``mapping``; a record without an id
    column gets one derived from the file's ``stem``, its ``index`` and the question."""
    if not isinstance(record, dict):
        raise RecordError(None, f"expected an object/row, found {type(record).__name__}")

    def value(column: str | None, name: str, required: bool = False) -> Any:
        if column is None:
            return None
        found = _get(record, column)
        if found is _MISSING or found is None or found == "":
            if required:
                raise RecordError(column, f"missing {name} (column {column!r})")
            return None
        return found

    raw_question = value(mapping.question, "question", True)
    if isinstance(raw_question, (list, dict)):
        # Its JSON text ('["x"]') was stored as the question: refuse rather than guess a join.
        kind = "a list" if isinstance(raw_question, list) else "an object"
        raise RecordError(
            mapping.question,
            f"the question (column {mapping.question!r}) is {kind}, not text; map a column that holds the "
            "question's text (e.g. question.0 for a list's first item)",
        )
    question = _text(raw_question)
    if len(mapping.choices) == 1:
        raw_choices = value(mapping.choices[0], "choices", True)
        choices = [
            _text(choice["text"]) if isinstance(choice, dict) and "text" in choice else _text(choice)
            for choice in _as_list(raw_choices, mapping.choices_separator)
        ]
    else:
        choices = [_text(value(column, "choice", True)) for column in mapping.choices]
    answer: list[Any] = []
    if mapping.answer is not None:
        raw = value(mapping.answer, "answer", True)
        if mapping.answer_type == "collection":
            answer = [_text(item) for item in _as_list(raw, mapping.choices_separator)]
        elif mapping.answer_type == "number":
            answer = [format_number(_text(raw))]
        elif mapping.answer_type == "bool":
            answer = [_text(raw).strip().capitalize()]
        else:
            answer = [_resolve_answer(raw, choices, mapping.answer_format)]
        if mapping.answer_type == "multiplechoice" and not choices:
            raise RecordError(
                mapping.choices[0] if mapping.choices else "choices", "a multiple-choice sample needs choices"
            )
    raw_cot = value(mapping.cot, "cot")
    cot = (
        []
        if raw_cot is None
        else (
            [_text(step) for step in raw_cot]
            if isinstance(raw_cot, list)
            else [span.text for span in split_sentences(_text(raw_cot))]
        )
    )
    context = value(mapping.context, "context")
    own_id = value(mapping.id, "id", mapping.id is not None)
    sample_id = _text(own_id) if own_id is not None else _derived_id(stem, index, question)
    split = value(mapping.split, "split")
    return (_text(split) if split is not None else mapping.default_split), Sample(
        id=sample_id,
        question=question,
        type=mapping.answer_type,
        choices=choices,
        answer=answer,
        cot=cot,
        context=_text(context) if context is not None else "",
    )


def _derived_id(stem: str, index: int, question: str) -> str:
    # File name + position + a short digest of the question: stable across re-imports of the
    # same file, and a changed record does not silently take the old record's place.
    digest = hashlib.sha1(question.encode("utf-8")).hexdigest()[:8]
    return f"{stem}-{index}-{digest}"


def load_generic(
    path: str | Path,
    mapping: ColumnMapping,
    *,
    splits: list[str] | None = None,
    on_error: str = "raise",
    errors: list[DataFileError] | None = None,
) -> Iterator[tuple[str, Sample]]:
    """Yield ``(split, Sample)`` from any JSON/JSONL/CSV/TSV file through ``mapping``.

    Same error contract as :func:`load_dataset`: the first bad record (file, line, field)
    raises :class:`DataFileError`, or with ``on_error="skip"`` is appended to ``errors``.
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    source = Path(path)
    if not source.is_file():
        raise DataFileError(source, "no such file")
    context = LoadContext("generic", source, on_error, errors)
    # Named in error messages; a split column is only known record by record.
    split_label = mapping.default_split if mapping.split is None else f"from column {mapping.split}"
    wanted = set(splits) if splits is not None else None
    current_split = [mapping.default_split]

    def convert(record: Any, index: int) -> Sample:
        current_split[0], sample = mapped_sample(record, index, mapping, source.stem)
        return sample

    # context.convert yields each sample right after converting it, so current_split is its split.
    records = table_records(source, header=mapping.header)
    for _, sample in context.convert(source, split_label, records, convert):
        if wanted is None or current_split[0] in wanted:
            yield current_split[0], sample
