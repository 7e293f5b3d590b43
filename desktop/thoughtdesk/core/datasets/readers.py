"""Readers for the file formats datasets come in, reporting the line of every record.

Every reader yields ``(line, record)`` with a 1-based line number so that a bad record can be
reported as ``file, line N``. Malformed records raise :class:`DataFileError`; the loaders decide
whether to stop or to skip (see :class:`thoughtdesk.core.datasets.loading.LoadContext`).
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from thoughtdesk.core.errors import DataFileError

# csv's default field limit (128 KiB) is below some real explanation fields.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

_json_decode = msgspec.json.decode
_json_encode = msgspec.json.encode


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice: decoders keep the last value and drop the rest."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(duplicate_key_message(key))
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)
#: A key's closing quote and colon: counting them bounds how many keys a line has.
_KEY_END = re.compile(rb'"\s*:')


_SPACED_KEY_END = re.compile(rb'"[ \t\r\n]+:')
#: JSON tokens that matter for finding keys: strings (with escapes), brackets, colons.
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:]')


def duplicate_key_message(key: str) -> str:
    """The words of a duplicate-key error (the same everywhere a reader finds one)."""
    return (
        f"the key {key!r} appears twice in one object (JSON keeps only the last value, so data "
        "would be lost); remove or rename one"
    )


def key_places(raw: bytes) -> int:
    """How many places in ``raw`` look like the end of a key (a quote, then a colon): at least
    the number of keys. A decoder keeps the last of two equal keys silently; comparing this count
    with the same count of the value written back (which has each key once, and the same
    strings) tells whether a key was lost, without walking the value in Python."""
    if _SPACED_KEY_END.search(raw):  # rare: space between a key and its colon
        return len(_KEY_END.findall(raw))
    return raw.count(b'":')


def escaped_key_ends(raw: bytes) -> int:
    """How many quote-colon places the value written back may have that ``raw`` spells with an
    escape: a quote or a colon inside a string written ``\\u0022`` or ``\\u003a`` on the line
    is ``\\":`` when written back, which would make up for a lost key in the count of
    :func:`key_places`. Each such escape makes at most one place (an over-count only costs an
    exact check)."""
    if b"\\u00" not in raw:  # the usual case: one scan
        return 0
    return raw.count(b"\\u0022") + raw.count(b"\\u003a") + raw.count(b"\\u003A")


def find_duplicate_key(data: bytes) -> tuple[str, int] | None:
    """The first key that appears twice in one object of the JSON text ``data``, with the byte
    offset of its second appearance; None when there is none. Slow (Python per token): only
    called once a cheap count (:func:`key_places`) says a key may be lost."""
    stack: list[set[bytes] | None] = []  # one entry per open object (its keys) or array (None)
    last: re.Match[bytes] | None = None
    for match in _JSON_TOKEN.finditer(data):
        token = match.group()
        first = token[:1]
        if first == b'"':
            last = match
            continue
        if first == b":":
            keys = stack[-1] if stack else None
            if keys is not None and last is not None:
                if last.group() in keys:
                    return json.loads(last.group()), last.start()
                keys.add(last.group())
        elif first == b"{":
            stack.append(set())
        elif first == b"[":
            stack.append(None)
        elif stack:
            stack.pop()
        last = None
    return None


def _msgspec_message(error: Exception) -> str:
    return str(error).replace("JSON is malformed: ", "")


_AT_BYTE = re.compile(r"\(byte (\d+)\)")
#: A ``\uD800``-``\uDFFF`` escape that is not half of a pair (high then low): no character.
_LONE_SURROGATE = re.compile(
    rb"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<![0-9a-fA-F]{2}\\u[dD][89abAB][0-9a-fA-F]{2})(?<!\\)(?:\\\\)*\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _malformed(raw: bytes, error: Exception) -> str:
    """What msgspec's complaint about ``raw`` means, in words a user can act on: NaN and
    Infinity (written by Python's json and pandas) are no JSON numbers; a lone surrogate escape
    (msgspec calls it "truncated" or a bad "surrogate pair") is no character."""
    message = _msgspec_message(error)
    at = _AT_BYTE.search(message)
    if at is not None:
        offset = int(at.group(1))
        if offset > 0 and raw.startswith(b"-Infinity", offset - 1):
            offset -= 1
        for token in (b"NaN", b"Infinity", b"-Infinity"):
            if raw.startswith(token, offset):
                return f"malformed JSON: {token.decode()} is not a JSON number, write null or a number (byte {offset})"
    if "truncated" in message.lower() or "surrogate" in message.lower():
        lone = _LONE_SURROGATE.search(raw)
        if lone is not None:
            escape = lone.group().lstrip(b"\\").decode("ascii")
            return (
                f"malformed JSON: the escape \\{escape} is half of a UTF-16 surrogate pair, not a character "
                f"(byte {lone.start()})"
            )
    return f"malformed JSON: {message}"


#: What a JSON value too deeply nested to decode is called in errors (Python's and msgspec's
#: decoders give up with RecursionError somewhere near 1,000 levels).
TOO_DEEP = "JSON nested too deeply (more than about 1,000 levels of arrays or objects)"


def decode_line(raw: bytes, keys: Callable[[Any], int] | None = None) -> Any:
    """One JSON value from one line's bytes; every way it can be bad is a ValueError whose
    message says what is wrong (malformed, not UTF-8 at byte N, nested too deeply).

    ``keys`` (optional) counts keys of a decoded value of a known shape (a DSCB record): a lower
    bound of all its keys, nested ones included, that a reader computes faster in Python than
    the value is written back in C. Where it accounts for every key place on the line, no key can
    have been lost and the write-back is skipped; an undercount only costs that write-back."""
    try:
        value = _json_decode(raw)
        # msgspec keeps the last of two equal keys silently. A line with more key-like places
        # than the decoded value has keys may have a duplicate: the exact check is only paid then.
        places = key_places(raw)
        if places <= (len(value) if isinstance(value, dict) else 0):
            return value
        if keys is not None and places <= keys(value):
            return value
        # The value written back by msgspec (in C, no spaces) has each key's '":' once, and the
        # same '":' inside strings as the line, but for those the line spells with an escape
        # (a string holding \u0022: has none on the line, one written back): fewer places on
        # the line than that means no key was lost.
        if places > _json_encode(value).count(b'":') - escaped_key_ends(raw):
            json.loads(raw, object_pairs_hook=_unique_pairs)
        return value
    except DuplicateKeyError as error:
        raise ValueError(str(error)) from None
    except msgspec.DecodeError as error:
        raise ValueError(_malformed(raw, error)) from None
    except UnicodeDecodeError:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as error:  # where in the line (msgspec counts within a string)
            raise ValueError(f"not UTF-8 text (column {error.start + 1}: byte 0x{raw[error.start]:02X})") from None
        raise ValueError("not UTF-8 text") from None
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


class JsonLineError(DataFileError):
    """A line of a JSON Lines file that is not valid JSON (the file itself can be read)."""


def iter_jsonl(path: Path, keys: Callable[[Any], int] | None = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for every non-blank line of a JSON Lines file (``keys``: as
    :func:`decode_line`'s, for records of a known shape).

    A line that is not JSON is yielded as ``(line, JsonLineError)`` instead of raising, so the
    caller can skip it and go on with the next line.
    """
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                value = decode_line(raw, keys)
            except ValueError as error:
                yield number, JsonLineError(path, str(error), line=number)
            else:
                yield number, value


def first_jsonl_record(path: Path) -> Any:
    """The first non-blank line of a JSON Lines file, decoded; ``None`` if it is not JSON."""
    with open(path, "rb") as handle:
        for raw in handle:
            if raw.strip():
                try:
                    return decode_line(raw)
                except ValueError:
                    return None
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataFileError(path, f"not UTF-8 text (byte {error.start})") from None


class _LineCounter:
    """Turns increasing character offsets into 1-based line numbers without rescanning."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 1

    def line_at(self, offset: int) -> int:
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _json_error(path: Path, text: str, error: json.JSONDecodeError | None, pos: int, msg: str):
    if error is not None:
        return DataFileError(path, f"malformed JSON: {error.msg}", line=error.lineno, column=error.colno)
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return DataFileError(path, msg, line=line, column=column)


def iter_json_container(path: Path) -> Iterator[tuple[int, str | int, Any]]:
    """Yield ``(line, key, value)`` for each item of a JSON array or object file.

    ``key`` is the 0-based index for an array and the member name for an object; ``line`` is
    where the item starts. Items are decoded one at a time so positions are known; a syntax
    error anywhere makes the whole file unreadable and raises :class:`DataFileError`.
    """
    text = _read_text(path)
    counter = _LineCounter(text)
    pos = _skip_space(text, 0)
    if pos >= len(text) or text[pos] not in "[{":
        raise _json_error(path, text, None, pos, "expected a JSON array or object")
    is_object = text[pos] == "{"
    closer = "}" if is_object else "]"
    pos = _skip_space(text, pos + 1)
    index = 0
    if pos < len(text) and text[pos] == closer:
        return
    while True:
        try:
            key: str | int = index
            if is_object:
                if text[pos : pos + 1] != '"':
                    raise _json_error(path, text, None, pos, "expected a member name")
                key, pos = _DECODER.raw_decode(text, pos)
                pos = _skip_space(text, pos)
                if text[pos : pos + 1] != ":":
                    raise _json_error(path, text, None, pos, "expected ':' after a member name")
                pos = _skip_space(text, pos + 1)
            start = pos
            value, pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as error:
            raise _json_error(path, text, error, 0, "") from None
        except RecursionError:
            raise _json_error(path, text, None, pos, TOO_DEEP) from None
        except DuplicateKeyError as error:
            raise _json_error(path, text, None, start, str(error)) from None
        yield counter.line_at(start), key, value
        index += 1
        pos = _skip_space(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_space(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == closer:
            if _skip_space(text, pos + 1) != len(text):
                raise _json_error(path, text, None, pos + 1, "extra data after the JSON value")
            return
        raise _json_error(path, text, None, pos, f"expected ',' or '{closer}'")


def load_json(path: Path) -> Any:
    """A whole JSON file; a syntax error raises :class:`DataFileError` with line and column."""
    text = _read_text(path)
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except DuplicateKeyError as error:
        raise DataFileError(path, str(error)) from None
    except json.JSONDecodeError as error:
        raise DataFileError(path, f"malformed JSON: {error.msg}", line=error.lineno, column=error.colno) from None
    except RecursionError:
        raise DataFileError(path, TOO_DEEP) from None


def first_json_item(path: Path, limit: int = 1 << 18) -> Any:
    """The first element (array) or first member value (object) of a JSON file, cheaply.

    Reads at most ``limit`` characters first and falls back to the whole file when the first
    item is longer. ``None`` when the file is not a JSON array/object.
    """
    try:
        with open(path, encoding="utf-8-sig") as handle:
            head = handle.read(limit)
    except (OSError, UnicodeDecodeError):
        return None
    for text in (head, None):
        if text is None:
            try:
                text = path.read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError):
                return None
        pos = _skip_space(text, 0)
        if pos >= len(text) or text[pos] not in "[{":
            return None
        is_object = text[pos] == "{"
        pos = _skip_space(text, pos + 1)
        try:
            if is_object:
                key, pos = _DECODER.raw_decode(text, pos)
                pos = _skip_space(text, pos)
                if text[pos : pos + 1] != ":":
                    return None
                pos = _skip_space(text, pos + 1)
                value, _ = _DECODER.raw_decode(text, pos)
                # An object of records is keyed by id; an object that *is* a record is not.
                return value if isinstance(value, (dict, str)) else None
            value, _ = _DECODER.raw_decode(text, pos)
            return value
        except (json.JSONDecodeError, IndexError):
            if len(text) < limit:
                return None
        except (RecursionError, DuplicateKeyError):
            return None  # not something to sniff; reading the file says what is wrong with it
    return None


#: The ``csv.QUOTE_*`` constants ``csv.reader`` accepts (``QUOTE_MINIMAL``, ``QUOTE_NONE``, ...).
CsvQuoting = Literal[0, 1, 2, 3]


def iter_csv(
    path: Path,
    *,
    delimiter: str = ",",
    header: bool = True,
    columns: int | None = None,
    quoting: CsvQuoting = csv.QUOTE_MINIMAL,
) -> Iterator[tuple[int, list[str] | DataFileError]]:
    """Yield ``(line, row)`` for each record of a CSV/TSV file (line = where the record starts).

    With ``header`` the first row is read as the header and every row must have as many fields;
    otherwise ``columns`` (if given) is the required count. A row with the wrong count is yielded
    as ``(line, DataFileError)`` so the caller can skip it. The header itself is yielded first as
    ``(line, row)`` when ``header`` is true.
    """
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter, quoting=quoting)
        previous_end = 0
        expected = columns
        first = True
        try:
            for row in reader:
                start = previous_end + 1
                previous_end = reader.line_num
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if first and header:
                    first = False
                    expected = len(row)
                    yield start, row
                    continue
                first = False
                if expected is not None and len(row) != expected:
                    yield start, DataFileError(path, f"expected {expected} columns, found {len(row)}", line=start)
                    continue
                yield start, row
        except csv.Error as error:
            raise DataFileError(path, f"malformed CSV: {error}", line=previous_end + 1) from None
        except UnicodeDecodeError:
            line, column, byte = first_bad_utf8(path)
            raise DataFileError(path, f"not UTF-8 text (byte 0x{byte:02X})", line=line, column=column) from None


def first_bad_utf8(path: Path) -> tuple[int, int, int]:
    """Line, column (1-based) and value of the first byte of ``path`` that is not UTF-8 (the
    text decoder reports a place inside its read buffer, not in the file)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as error:
                return number, error.start + 1, raw[error.start]
    return 1, 1, 0


def csv_header(rows: Iterator[tuple[int, list[str] | DataFileError]]) -> list[str] | None:
    """The header row :func:`iter_csv` yields first (``header=True``); None for an empty file."""
    for _line, row in rows:
        if isinstance(row, DataFileError):  # never for the first row: it sets the column count
            raise row
        return row
    return None
