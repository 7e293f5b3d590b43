"""Loading a dataset from its original files: finding the files, checking them, error policy.

What the family modules build their loaders from (:class:`DatasetLoader`, :class:`LoadContext`,
:func:`need`, :class:`FileProbe`...), and what one loader does with a path: :func:`find_files`
finds its files in a file or folder and checks that each looks like the dataset's format,
:func:`read_dataset` yields ``(split, Sample)``. Bad records either stop the load
(``on_error="raise"``) or are collected in ``errors`` and skipped.

This module knows no dataset by name: :mod:`~thoughtdesk.core.datasets.registry` does (and
offers the same operations by name), so the family modules can use it without a cycle.
"""

from __future__ import annotations

import csv
import fnmatch
import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thoughtdesk.core.datasets.catalogue import DatasetInfo
from thoughtdesk.core.datasets.readers import CsvQuoting, first_json_item, first_jsonl_record, load_json
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Sample

_MAX_DEPTH = 5
_MAX_FILES = 5000


class RecordError(Exception):
    """A record that cannot be converted; ``field`` names the offending field."""

    def __init__(self, field_name: str | None, message: str) -> None:
        self.field = field_name
        self.message = message
        super().__init__(message)


@dataclass
class LoadContext:
    """The state of one ``load_dataset`` call: error policy, options, shared side data."""

    dataset: str
    root: Path
    on_error: str = "raise"
    errors: list[DataFileError] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)
    seen_ids: dict[str, dict[str, int]] = field(default_factory=dict)

    def report(self, error: DataFileError) -> None:
        """Raise ``error`` or, when skipping, record it and return."""
        if self.on_error == "raise":
            raise error
        if self.errors is not None:
            self.errors.append(error)

    def convert(
        self,
        path: Path,
        split: str,
        items: Iterable[tuple[int | None, Any]],
        convert: Callable[[Any, int], Sample | None],
    ) -> Iterator[tuple[str, Sample]]:
        """Run ``convert(record, index)`` over ``(line, record)`` items, applying the error policy.

        ``index`` is the record's 0-based position in the file, counted whether or not earlier
        records were bad, so derived ids stay the same when bad records are skipped.
        """
        for index, (line, record) in enumerate(items):
            if isinstance(record, DataFileError):
                self.report(record)
                continue
            try:
                sample = convert(record, index)
            except RecordError as error:
                where = f"dataset {self.dataset}, split {split}, record {index + 1}"
                if error.field:
                    where += f", field {error.field}"
                self.report(DataFileError(path, error.message, line=line, where=where))
                continue
            except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
                # A value of a shape the loader did not check for (found by fuzzing): the record
                # is bad like any other, with its place, never a traceback.
                where = f"dataset {self.dataset}, split {split}, record {index + 1}"
                self.report(
                    DataFileError(path, f"a value has an unexpected form ({_plain(error)})", line=line, where=where)
                )
                continue
            if sample is not None:
                # Some originals repeat a record (EntailmentBank test has one id twice); later
                # copies get a stable suffix so ids stay unique within the split.
                seen = self.seen_ids.setdefault(split, {})
                count = seen.get(sample.id, 0) + 1
                seen[sample.id] = count
                if count > 1:
                    sample.id = f"{sample.id}_{count}"
                yield split, sample


def _plain(error: Exception) -> str:
    """A Python error in words short enough for a one-line message."""
    text = str(error).replace("\n", " ")
    if isinstance(error, KeyError):
        return f"no field {text}"
    return text[:200] if text else type(error).__name__


def need(record: Any, key: str, kind: type | tuple[type, ...] = str, *, label: str | None = None):
    """``record[key]`` checked to be of ``kind``; raises :class:`RecordError` naming the field."""
    name = label or key
    if not isinstance(record, dict):
        raise RecordError(None, f"expected a JSON object, found {type(record).__name__}")
    if key not in record or record[key] is None:
        raise RecordError(name, f"missing field {name!r}")
    value = record[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise RecordError(name, f"field {name!r} should be {expected}, found {type(value).__name__}")
    return value


def check_answer(answer: str, choices: list[str], field_name: str = "answer") -> None:
    """Raise :class:`RecordError` when ``answer`` is not one of ``choices``."""
    if answer not in choices:
        raise RecordError(field_name, f"answer {answer!r} is not among the choices {choices!r}")


class FileProbe:
    """Lazily computed first record of a file in each format, shared by all sniffers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name

    @functools.cached_property
    def jsonl_first(self) -> Any:
        return first_jsonl_record(self.path)

    @functools.cached_property
    def json_first(self) -> Any:
        return first_json_item(self.path)

    def csv_first(self, delimiter: str = ",", quoting: CsvQuoting = csv.QUOTE_MINIMAL) -> list[str]:
        try:
            with open(self.path, encoding="utf-8-sig", newline="") as handle:
                return next(csv.reader(handle, delimiter=delimiter, quoting=quoting), [])
        except (OSError, UnicodeDecodeError, csv.Error):
            return []


#: Reads one file: ``read(path, split, context)`` yields ``(split, Sample)``.
ReadFunction = Callable[[Path, str, LoadContext], Iterator[tuple[str, Sample]]]
#: Says whether a file looks like this dataset's format (cheap: first record only).
SniffFunction = Callable[[FileProbe], bool]


@dataclass(frozen=True, slots=True)
class DatasetLoader:
    """A dataset's metadata with the functions that read and recognise its files."""

    info: DatasetInfo
    read: ReadFunction
    sniff: SniffFunction


def has_keys(record: Any, *keys: str) -> bool:
    """True when ``record`` is a dict holding all ``keys``."""
    return isinstance(record, dict) and all(key in record for key in keys)


def _matches(relative: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(relative, "*/" + pattern)


def _walk(root: Path) -> list[Path]:
    found: list[Path] = []
    stack = [(root, 0)]
    while stack and len(found) < _MAX_FILES:
        folder, depth = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                if depth < _MAX_DEPTH:
                    stack.append((entry, depth + 1))
            elif not entry.name.endswith(".part"):
                found.append(entry)
    return found


def _split_from_name(name: str) -> str:
    lowered = name.lower()
    if "test" in lowered:
        return "test"
    if "dev" in lowered or "val" in lowered:
        return "validation"
    return "train"


def split_of(loader: DatasetLoader, path: Path, root: Path | None = None) -> str | None:
    """The split a file holds according to the dataset's file patterns; ``None`` if no match."""
    relative = path.relative_to(root).as_posix() if root else path.name
    for pattern, split in loader.info.file_patterns:
        if _matches(relative, pattern) or _matches(path.name, pattern):
            return split
    return None


def _syntax_error(path: Path) -> DataFileError | None:
    """A JSON syntax error at the start of ``path`` (why a sniffer may have failed), if any."""
    if path.suffix.lower() not in (".json", ".jsonl", ".jsonlines", ".ndjson"):
        return None
    first = first_jsonl_record(path)
    if first is not None:
        return None  # the first line is valid JSON (JSON Lines, or a one-line document)
    try:
        load_json(path)
    except DataFileError as error:
        return error
    return None


def _wrong_format(loader: DatasetLoader, path: Path) -> DataFileError:
    syntax = _syntax_error(path)
    if syntax is not None:
        return syntax
    return DataFileError(
        path,
        f"this file does not look like a {loader.info.title} ({loader.info.name}) file",
        hint=f"expected {loader.info.file_format}",
    )


def find_files(loader: DatasetLoader, path: str | Path) -> list[tuple[str, Path]]:
    """The ``(split, file)`` pairs of ``loader``'s dataset in ``path`` (a file or a folder).

    A folder is searched a few levels deep; for each split the file matching the earliest
    pattern wins. Raises :class:`DataFileError` when nothing fits or a file has the wrong format.
    """
    root = Path(path)
    if not root.exists():
        raise DataFileError(root, "no such file or folder")
    if root.is_file():
        if not loader.sniff(FileProbe(root)):
            raise _wrong_format(loader, root)
        return [(split_of(loader, root) or _split_from_name(root.name), root)]
    best: dict[str, tuple[int, Path]] = {}
    for file in _walk(root):
        relative = file.relative_to(root).as_posix()
        for rank, (pattern, split) in enumerate(loader.info.file_patterns):
            if _matches(relative, pattern):
                if split not in best or rank < best[split][0]:
                    if loader.sniff(FileProbe(file)):
                        best[split] = (rank, file)
                break
    if not best:
        patterns = ", ".join(pattern for pattern, _ in loader.info.file_patterns)
        raise DataFileError(
            root,
            f"no {loader.info.title} files found in this folder",
            hint=f"expected files named {patterns}; format: {loader.info.file_format}",
        )
    order = {split: index for index, split in enumerate(loader.info.splits)}
    chosen = sorted(best.items(), key=lambda item: (order.get(item[0], 99), item[0]))
    return [(split, file) for split, (_, file) in chosen]


def read_dataset(
    loader: DatasetLoader,
    path: str | Path,
    *,
    splits: Iterable[str] | None = None,
    on_error: str = "raise",
    errors: list[DataFileError] | None = None,
    options: dict[str, Any] | None = None,
) -> Iterator[tuple[str, Sample]]:
    """Yield ``(split, Sample)`` for ``loader``'s dataset read from its original files in ``path``
    (see :func:`thoughtdesk.core.datasets.registry.load_dataset`, which looks the loader up by name)."""
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    options = options or {}
    unknown = set(options) - set(loader.info.options)
    if unknown:
        raise TypeError(f"{loader.info.name} has no option(s) {', '.join(sorted(unknown))}")
    files = find_files(loader, path)
    wanted = set(splits) if splits is not None else None
    context = LoadContext(loader.info.name, Path(path), on_error, errors, dict(options))
    for split, file in files:
        # A file whose pattern says "*" holds several splits; it is read and filtered per item.
        if wanted is not None and split != "*" and split not in wanted:
            continue
        for item_split, sample in loader.read(file, split, context):
            if wanted is None or item_split in wanted:
                yield item_split, sample


def detect(loaders: Iterable[DatasetLoader], path: str | Path) -> str | None:
    """The name of the one dataset among ``loaders`` a file or folder holds, or ``None`` when
    none or several fit."""
    candidates = list(loaders)
    root = Path(path)
    if root.is_file():
        return _detect_file(candidates, root)
    if not root.is_dir():
        return None
    names = {_detect_file(candidates, file) for file in _walk(root)}
    names.discard(None)
    return names.pop() if len(names) == 1 else None


def _detect_file(loaders: list[DatasetLoader], path: Path) -> str | None:
    probe = FileProbe(path)
    fitting = [loader for loader in loaders if loader.sniff(probe)]
    if len(fitting) > 1:
        fitting = [loader for loader in fitting if split_of(loader, path) is not None]
    return fitting[0].info.name if len(fitting) == 1 else None
