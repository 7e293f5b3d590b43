"""Qt's INI format read without Qt, so that a command reads the settings file the GUI writes.

QSettings (``QSettings.Format.IniFormat``) writes ``[group]`` sections and ``key=value`` lines in
its own way, which :func:`read_ini` undoes as Qt's ``iniUnescapedStringList`` and
``stringToVariant`` do (qsettings.cpp):

- ``/`` inside a group's keys becomes ``\\``; unusual characters ``%XX`` or ``%UXXXX``; the
  ``[General]`` section holds keys without a group (a group named General is ``[%General]``);
- a value is text with C escapes (``\\n``, ``\\"``, ``\\xHHHH``, ``\\ooo``), in double quotes
  when it has leading or trailing spaces, a comma or a semicolon (``;`` starts a comment);
- unquoted commas separate the items of a list (``x, "y, z", w``: three texts);
- ``@`` starts a typed value: ``@@`` a text beginning with ``@``, ``@Invalid()`` no value
  (an empty list, None), ``@ByteArray(...)`` bytes, ``@Variant(...)`` Qt's binary serialisation
  (``QDataStream`` version 4.0) of what has no text form, e.g. a list of one number: the plain
  types are decoded here (bool, whole and real numbers, text, lists, maps, bytes); anything else
  (and ``@Rect``, ``@Size``, ``@Point``, ``@DateTime``) is :class:`QtOnly`, its text kept.

A bool is the text ``true``/``false`` and a number its digits: what each means is the
declaring option's business (:mod:`thoughtdesk.core.settings.registry`), as it is the GUI's.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_ESCAPES.update({c: c for c in "\"?'\\"})
_HEX = "0123456789abcdefABCDEF"


@dataclass(frozen=True, slots=True)
class QtOnly:
    """A value only Qt can decode (``@Variant(...)`` and kin): its text as written."""

    text: str


@dataclass(frozen=True, slots=True)
class IniValue:
    """One key's value as QSettings would return it in a new process (text, a list of texts,
    bytes, None for ``@Invalid()``, :class:`QtOnly`), and its 1-based ``line`` in the file."""

    raw: object
    line: int


def read_ini(path: Path) -> dict[str, IniValue]:
    """The INI file at ``path`` as ``{"group/key": IniValue}``; empty when it is missing or
    unreadable (a command then uses the defaults). A key written twice: the last one, as Qt."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")  # as Qt decodes it
    except OSError:
        return {}
    values: dict[str, IniValue] = {}
    group = ""
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and "]" in line:
            name = line[1 : line.index("]")]
            # As Qt: [General] holds the keys without a group, [%General] the group "General".
            group = {"general": "", "%general": "General"}.get(name.lower(), unescape_key(name))
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            continue
        name = unescape_key(key.strip())
        values[f"{group}/{name}" if group else name] = IniValue(parse_value(value), number)
    return values


def unescape_key(text: str) -> str:
    """A key or group as QSettings wrote it, back to the key: ``\\`` is ``/``, ``%XX``/``%UXXXX``
    a character (a ``%`` that starts neither stays)."""
    text = text.replace("\\", "/")
    out, i = [], 0
    while i < len(text):
        if text[i] == "%" and text[i + 1 : i + 2] == "U" and _is_hex(text[i + 2 : i + 6], 4):
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
        elif text[i] == "%" and _is_hex(text[i + 1 : i + 3], 2):
            out.append(chr(int(text[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _is_hex(text: str, length: int) -> bool:
    return len(text) == length and all(c in _HEX for c in text)


def parse_value(text: str) -> object:
    """One value (the text after ``=``): a text, a list of texts (unquoted commas), bytes, None
    or :class:`QtOnly`, as Qt's ``iniUnescapedStringList`` then ``stringToVariant`` make it."""
    items = _unescaped_items(text)
    if len(items) == 1:
        return _typed(items[0])
    return [_typed(item) for item in items]


def _typed(text: str) -> object:
    if text.startswith("@"):
        if text.endswith(")"):
            if text.startswith("@ByteArray("):
                return text[11:-1].encode("latin-1", errors="replace")
            if text.startswith("@String("):
                return text[8:-1]
            if text == "@Invalid()":
                return None
            if text.startswith("@Variant("):
                return _variant(text)
            if text.startswith(("@DateTime(", "@Rect(", "@Size(", "@Point(")):
                return QtOnly(text)
        if text.startswith("@@"):
            return text[1:]
    return text


def _unescaped_items(text: str) -> list[str]:
    """Qt's ``iniUnescapedStringList``: escapes undone, quotes removed, split at unquoted commas,
    spaces around unquoted items dropped; a ``;`` outside quotes ends the value (a comment)."""
    items: list[str] = []
    current: list[str] = []
    quoted_item = False  # the current item had quotes: its trailing spaces are kept
    in_quotes = False
    keep = 0  # characters of `current` that trailing-space trimming may not remove (escapes)
    i, n = 0, len(text)

    def skip_spaces(at: int) -> int:
        while at < n and text[at] in " \t":
            at += 1
        return at

    def finish() -> None:
        if not quoted_item:
            while len(current) > keep and current[-1] in " \t":
                current.pop()
        items.append("".join(current))

    i = skip_spaces(0)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            i += 2
            if nxt in _ESCAPES:
                current.append(_ESCAPES[nxt])
            elif nxt == "x":
                j = i
                while j < n and text[j] in _HEX:
                    j += 1
                if j > i:
                    current.append(chr(min(int(text[i:j], 16), 0x10FFFF)))
                i = j
            elif nxt in "01234567":
                j = i
                while j < n and text[j] in "01234567":
                    j += 1
                current.append(chr(min(int(text[i - 1 : j], 8), 0x10FFFF)))
                i = j
            # any other escaped character is dropped, as Qt drops it
            keep = len(current)
        elif ch == "\\":  # a lone backslash at the end
            i += 1
        elif ch == '"':
            i += 1
            quoted_item = True
            in_quotes = not in_quotes
            if not in_quotes:
                i = skip_spaces(i)
        elif ch == "," and not in_quotes:
            finish()
            current, quoted_item, keep = [], False, 0
            i = skip_spaces(i + 1)
        elif ch == ";" and not in_quotes:  # a comment after the value
            break
        else:
            current.append(ch)
            i += 1
    finish()
    return items


# --- @Variant(...): QVariant in QDataStream version Qt_4_0 (no null flag) -------------------------


class _Unknown(Exception):
    """A type this reader does not decode."""


def _variant(text: str) -> object:
    data = text[9:-1].encode("latin-1", errors="replace")
    try:
        value, end = _read_variant(data, 0)
    except (_Unknown, struct.error, IndexError, UnicodeDecodeError, RecursionError):
        return QtOnly(text)
    return value if end == len(data) else QtOnly(text)


def _read_variant(data: bytes, at: int) -> tuple[object, int]:
    (type_id,) = struct.unpack_from(">I", data, at)
    return _read_typed(type_id, data, at + 4)


def _read_typed(type_id: int, data: bytes, at: int) -> tuple[object, int]:
    if type_id in _FIXED:
        fmt = _FIXED[type_id]
        (value,) = struct.unpack_from(fmt, data, at)
        return (bool(value) if type_id == 1 else value), at + struct.calcsize(fmt)
    if type_id == 10:  # QString
        return _read_string(data, at)
    if type_id == 12:  # QByteArray
        (length,) = struct.unpack_from(">I", data, at)
        if length == 0xFFFFFFFF:
            return b"", at + 4
        return data[at + 4 : at + 4 + length], at + 4 + length
    if type_id in (9, 11, 8):  # QVariantList, QStringList, QVariantMap
        (count,) = struct.unpack_from(">I", data, at)
        at += 4
        items: list[object] = []
        pairs: dict[str, object] = {}
        for _ in range(count):
            if type_id == 8:
                key, at = _read_string(data, at)
                pairs[key], at = _read_variant(data, at)
            else:
                item, at = _read_string(data, at) if type_id == 11 else _read_variant(data, at)
                items.append(item)
        return (pairs if type_id == 8 else items), at
    raise _Unknown(type_id)


#: Bool, Int, UInt, LongLong, ULongLong, Double, Float: their struct formats (big-endian).
_FIXED = {1: ">B", 2: ">i", 3: ">I", 4: ">q", 5: ">Q", 6: ">d", 38: ">f"}


def _read_string(data: bytes, at: int) -> tuple[str, int]:
    (length,) = struct.unpack_from(">I", data, at)
    if length == 0xFFFFFFFF:  # a null QString
        return "", at + 4
    if at + 4 + length > len(data):
        raise IndexError(at)
    return data[at + 4 : at + 4 + length].decode("utf-16-be"), at + 4 + length
