"""ThoughtSource collection JSON (``{dataset: {split: [sample, ...]}}``), read and written losslessly.

Reading streams: the outer object is decoded with each sample left as an undecoded slice
(``msgspec.Raw``), then samples are decoded and validated one at a time, so memory stays close
to the file's size and every error names the dataset, split, sample index and field.

An object naming the same key twice (a dataset, a split, a sample's field) is refused with its
line and column: decoders keep the last value, so the first would be lost without a word. The
check is a count in C per sample (``readers.key_places`` of the slice against the value written
back); only a file that fails it is scanned in Python for the place.

Each sample's JSON is turned into records and back by :mod:`.ts_samples` (fast path in C, careful
path naming the field); this module is the file around them: reading it, and writing a
collection one sample at a time, with ThoughtDesk's extras in the side file (:mod:`.ts_extras`).
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

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
from thoughtdesk.core.datasets.ts_samples import (
    STRICT_DECODER,
    from_strict,
    json_kind,
    sample_from_json,
    sample_to_json,
)
from thoughtdesk.core.errors import DataFileError, line_column
from thoughtdesk.core.files import PART_SUFFIX, ExportTargetError, export_file, write_failure
from thoughtdesk.core.library.records import (
    Sample,
)

_BYTE = re.compile(r"\(byte (\d+)\)")
_Outer = dict[str, dict[str, msgspec.Raw]]
_ENCODE = msgspec.json.encode


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
                        f"the split must be a list of samples, not {json_kind(kind)}",
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
        strict = STRICT_DECODER.decode
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
                            sample = from_strict(decoded)
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
