"""ThoughtDesk's extras of a ThoughtSource export, kept in a side file so that ThoughtSource's
own loader can open the export (docs/answer-extraction.md, "The export and ThoughtSource's loader").

ThoughtSource's ``Collection.from_json`` encodes every sample with its ``datasets`` schema
(``libs/cot/cot/utils/schemas/cot.py``), which refuses any key it does not know
(``KeyError: 'thoughtdesk_scoring'``). So an export to ``OUT.json`` writes there only the keys
of that schema, and every other key (``thoughtdesk_scoring`` of an answer,
``thoughtdesk_critiques`` of a CoT, a generation run's ``thoughtdesk`` usage, a DS Critique Bank
record's ``dscb`` fields, unknown keys an imported file had) into ``OUT.thoughtdesk-extras.jsonl``
beside it: a header line, then one line per sample with extras::

    {"thoughtdesk_extras": 1, "of": "OUT.json"}
    {"dataset": "d", "split": "test", "index": 0, "id": "q1", "extras": {"extra": {...},
     "generated_cot": {"0": {"extra": {...}, "answers": {"0": {...}}, "annotations": {...}}}}}

Importing ``OUT.json`` puts them back where they were (the same samples as a file with the
keys inline), so a round trip stays lossless. A file with the keys inline (an older export, or
another tool's) is read as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import ANNOTATION_KEYS, ANSWER_KEYS, COT_KEYS, SAMPLE_KEYS

#: The side file's name ends with this (``OUT.json`` -> ``OUT.thoughtdesk-extras.jsonl``).
SIDE_SUFFIX = ".thoughtdesk-extras.jsonl"
#: The header line's marker key and the format's version.
MARKER = "thoughtdesk_extras"
VERSION = 1

#: The keys ThoughtSource's schema has, per level. ``answer_from_choices`` is one of its answer
#: keys (its evaluate writes it); ``lengths``, ``sentences`` and ``subsetType`` (its annotator's)
#: are removed by its loader before the schema applies, so they may stay in the file.
_SAMPLE = frozenset(SAMPLE_KEYS) | {"lengths", "sentences", "subsetType"}
_COT = frozenset(COT_KEYS)
_ANSWER = frozenset(ANSWER_KEYS) | {"answer_from_choices"}
_ANNOTATION = frozenset(ANNOTATION_KEYS)


def side_path(path: str | Path) -> Path:
    """The side file of the export ``path``."""
    path = Path(path)
    return path.with_name(path.stem + SIDE_SUFFIX)


#: The fields ThoughtSource's schema types as text, and as lists of text, per level (its other
#: fields: ``generated_cot``, ``answers``, ``annotations`` and the boolean ``correct_answer``).
_TEXT = {
    "sample": ("id", "ref_id", "question", "type", "context"),
    "cot": tuple(k for k in COT_KEYS if k not in ("answers", "annotations")),
    "answer": tuple(k for k in ANSWER_KEYS if k != "correct_answer") + ("answer_from_choices",),
    "annotation": ANNOTATION_KEYS,
}
_TEXT_LISTS = {"sample": ("choices", "cot", "answer", "feedback")}


def _as_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _take(obj: Any, known: frozenset[str], level: str) -> dict[str, Any]:
    """Remove and return the keys of ``obj`` outside ``known`` (in their order); a value of a
    schema field that is not text (an annotation's JSON ``true`` or ``4``, a number among the
    choices) is written as its JSON text in the file and kept as it was in the extras."""
    if not isinstance(obj, dict):
        return {}
    out = {k: obj[k] for k in obj if k not in known}
    for key in out:
        del obj[key]
    for key in _TEXT[level]:
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            out[key] = value
            obj[key] = _as_text(value)
    for key in _TEXT_LISTS.get(level, ()):
        value = obj.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or any(v is not None and not isinstance(v, str) for v in value):
            out[key] = value
            items = value if isinstance(value, list) else [value]
            obj[key] = [v if v is None or isinstance(v, str) else _as_text(v) for v in items]
    return out


def _indexed(items: Any, known: frozenset[str], level: str) -> dict[str, dict[str, Any]]:
    if not isinstance(items, list):
        return {}
    out = {}
    for i, item in enumerate(items):
        taken = _take(item, known, level)
        if taken:
            out[str(i)] = taken
    return out


def split_extras(sample: dict[str, Any]) -> dict[str, Any] | None:
    """Take every key ThoughtSource's schema lacks out of the sample object ``sample`` (in place),
    and the original of every schema value that is not of the schema's type (written as text in
    its place); return them as the side file's ``extras`` value, None when there were none."""
    extras: dict[str, Any] = {}
    taken = _take(sample, _SAMPLE, "sample")
    if taken:
        extras["extra"] = taken
    cots: dict[str, Any] = {}
    for i, cot in enumerate(sample.get("generated_cot") or ()):
        entry: dict[str, Any] = {}
        taken = _take(cot, _COT, "cot")
        if taken:
            entry["extra"] = taken
        if isinstance(cot, dict):
            for key, known, level in (("answers", _ANSWER, "answer"), ("annotations", _ANNOTATION, "annotation")):
                inner = _indexed(cot.get(key), known, level)
                if inner:
                    entry[key] = inner
        if entry:
            cots[str(i)] = entry
    if cots:
        extras["generated_cot"] = cots
    return extras or None


class SideFileError(DataFileError):
    """A side file that is not one, or does not match the export beside it."""


def _bad(side: Path, line: int, message: str) -> SideFileError:
    return SideFileError(side, f"{message}; move it away to import the file without ThoughtDesk's extras", line=line)


def _item(items: Any, index: str, side: Path, line: int, what: str) -> dict[str, Any]:
    try:
        item = items[int(index)]
    except (ValueError, IndexError, TypeError):
        item = None
    if not isinstance(item, dict):
        raise _bad(side, line, f"names {what} {index}, which the export does not have")
    return item


def merge_extras(sample: Any, extras: dict[str, Any], side: Path, line: int) -> None:
    """Put the side file's ``extras`` back into the decoded sample object (in place)."""
    if not isinstance(sample, dict) or not isinstance(extras, dict):
        raise _bad(side, line, "holds extras that are not an object")
    sample.update(extras.get("extra") or {})
    for index, entry in (extras.get("generated_cot") or {}).items():
        cot = _item(sample.get("generated_cot"), index, side, line, "generated_cot")
        cot.update(entry.get("extra") or {})
        for key in ("answers", "annotations"):
            for inner_index, taken in (entry.get(key) or {}).items():
                _item(cot.get(key), inner_index, side, line, f"{key[:-1]}").update(taken)


def read_side_file(path: Path) -> tuple[Path, dict[tuple[str, str, int], tuple[Any, dict[str, Any], int]]] | None:
    """The side file of the ThoughtSource file ``path``: (its path, {(dataset, split, index):
    (sample id, extras, line)}), or None when there is none. Raises :class:`SideFileError`
    naming its line when it cannot be read as one."""
    side = side_path(path)
    if not side.is_file():
        return None
    rows: dict[tuple[str, str, int], tuple[Any, dict[str, Any], int]] = {}
    try:
        handle = side.open("rb")
    except OSError as error:
        raise SideFileError(side, f"cannot be read: {error.strerror or error}") from None
    with handle:
        for line, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                value = msgspec.json.decode(raw.removeprefix(b"\xef\xbb\xbf") if line == 1 else raw)
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                raise _bad(side, line, "is not valid JSON") from None
            if line == 1:
                if not isinstance(value, dict) or value.get(MARKER) != VERSION:
                    raise _bad(side, line, f"is not a ThoughtDesk extras file (no {MARKER!r}: {VERSION} header)")
                continue
            if (
                not isinstance(value, dict)
                or not isinstance(value.get("dataset"), str)
                or not isinstance(value.get("split"), str)
                or not isinstance(value.get("index"), int)
                or not isinstance(value.get("extras"), dict)
            ):
                raise _bad(side, line, "needs dataset, split, index and extras")
            rows[(value["dataset"], value["split"], value["index"])] = (value.get("id"), value["extras"], line)
    return side, rows


def side_line(dataset: str, split: str, index: int, sample_id: Any, extras: dict[str, Any]) -> str:
    """One line of the side file (JSON written as the export's, non-ASCII kept, newline-terminated)."""
    record = {"dataset": dataset, "split": split, "index": index, "id": sample_id, "extras": extras}
    return json.dumps(record, ensure_ascii=False) + "\n"


def header_line(path: Path) -> str:
    return json.dumps({MARKER: VERSION, "of": Path(path).name}, ensure_ascii=False) + "\n"


def load_with_extras(path: str | Path) -> dict[str, Any]:
    """The ThoughtSource file ``path`` as one JSON value, its side file's extras put back: what
    an export held before they were taken out (for tools and tests; the import streams)."""
    path = Path(path)
    data = json.loads(path.read_bytes())
    side = read_side_file(path)
    if side is not None:
        side_file, rows = side
        for (dataset, split, index), (_, extras, line) in rows.items():
            try:
                sample = data[dataset][split][index]
            except (KeyError, IndexError, TypeError):
                raise _bad(side_file, line, f"names a sample {path.name} does not have") from None
            merge_extras(sample, extras, side_file, line)
    return data
