"""Every setting of the one settings file, declared once: key, type, default, what it is for.

The settings file (``ThoughtDesk.ini``, :func:`thoughtdesk.core.paths.settings_file`) is written
by the GUI through QSettings and read by the command line without Qt. Both read it through these
declarations, as MusicBrainz Picard's ``picard/config.py`` declares its options (``TextOption``,
``BoolOption``, ``IntOption``, ``ListOption``): the GUI through
:mod:`thoughtdesk.ui.settings.options` (QSettings), core through
:mod:`thoughtdesk.core.settings.saved` (its own reader of Qt's INI format,
:mod:`thoughtdesk.core.settings.ini`). Each option turns what either side holds (the text of the
file, or the value Qt returns: text, a list of texts, a bool or number it cached) into one typed
value with :meth:`Option.parse`, so a value means the same in the app and in a command, and a
value that means nothing raises :class:`SettingValueError` saying what is allowed.

A key used anywhere in the code is declared here (``tests/core/settings/test_registry.py`` scans
the tree). A family (a key ending in ``/``, e.g. ``columns/`` + a table's name) declares the type
of every key under it; :meth:`Option.at` names one of them.

Cheap to import (every command and the GUI's first paint read settings): standard library only.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from thoughtdesk.core.errors import ThoughtDeskError

T = TypeVar("T")

#: Reasoning efforts a provider may be given (:data:`thoughtdesk.core.thinking.REASONING_EFFORTS`,
#: checked equal by the tests; repeated here to keep this module free of imports).
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


class SettingValueError(ThoughtDeskError):
    """A value that is not what its option allows; the text says what is allowed (the caller
    adds where it was: :class:`thoughtdesk.core.settings.saved.SettingsFileError`)."""

    def __init__(self, option: Option[Any], value: object, allowed: str) -> None:
        self.option, self.value, self.allowed = option, value, allowed
        super().__init__(f"{option.key} is {_shown(value)}, not {allowed}")


def _shown(value: object) -> str:
    if isinstance(value, list):
        return "a list (" + ", ".join(repr(str(item)) for item in value[:4]) + ("…" if len(value) > 4 else "") + ")"
    if isinstance(value, (bytes, bytearray)):
        return f"binary data ({len(value)} bytes)"
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    return f"a {type(value).__name__} value"


class Option(Generic[T]):
    """One setting: its ``key`` in the settings file (``group/name``), ``default`` (used when the
    file has no value), and ``description`` (one line, for the docs and the registry's table).

    Plain classes with slots, not dataclasses: this module is imported by every command, and
    making a dataclass costs a millisecond or so each."""

    __slots__ = ("default", "description", "key")
    kind: ClassVar[str] = "a value"

    def __init__(self, key: str, default: T, description: str) -> None:
        self.key, self.default, self.description = key, default, description

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.key!r})"

    @property
    def family(self) -> bool:
        """True for a family of keys (``columns/`` + a table's name), not one key."""
        return self.key.endswith("/")

    def at(self, name: str) -> Option[T]:
        """The member ``name`` of this family (``COLUMN_WIDTHS.at("sampleTable")``)."""
        if not self.family:
            raise ValueError(f"{self.key} is one setting, not a family of them")
        member = copy.copy(self)
        member.key = self.key + name.strip("/")
        return member

    def parse(self, raw: object) -> T:
        """The typed value of ``raw``: the file's text, or what QSettings returned (text, a list
        of texts, a cached bool or number); ``None`` (no value) is the default. Raises
        :class:`SettingValueError` for anything else."""
        if raw is None:
            return copy.copy(self.default)  # a list default is the caller's to change
        return self._parse(raw)

    def _parse(self, raw: object) -> T:
        raise NotImplementedError

    def stored(self, value: T) -> object:
        """What QSettings is given for ``value`` (checked first), so that Qt writes it in the form
        :meth:`parse` reads back: ``true``/``false``, a number, text, a list of texts."""
        return self.parse(value)

    @property
    def allowed(self) -> str:
        """What the value may be, in words (the end of a bad value's message)."""
        return self.kind

    def bad(self, raw: object) -> SettingValueError:
        return SettingValueError(self, raw, self.allowed)


class TextOption(Option[str]):
    """Text. ``choices``: the only values allowed (compared lower-cased, stripped)."""

    __slots__ = ("choices",)
    kind: ClassVar[str] = "text (put text with a comma in double quotes)"

    def __init__(self, key: str, default: str, description: str, *, choices: tuple[str, ...] = ()) -> None:
        super().__init__(key, default, description)
        self.choices = choices

    def _parse(self, raw: object) -> str:
        if isinstance(raw, bool):
            text = "true" if raw else "false"
        elif isinstance(raw, (str, int, float)):
            text = str(raw)
        else:  # a list (unquoted commas in the file), binary data, a Qt-only @Variant
            raise self.bad(raw)
        if self.choices:
            text = text.strip().lower()
            if text not in self.choices:
                raise self.bad(raw)
        return text

    @property
    def allowed(self) -> str:
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return self.kind


class BoolOption(Option[bool]):
    """``true`` or ``false`` (as Qt writes a bool; ``1``/``0``, ``yes``/``no`` are read too)."""

    __slots__ = ()
    kind: ClassVar[str] = "true or false"

    def _parse(self, raw: object) -> bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, int) and raw in (0, 1):
            return bool(raw)
        if isinstance(raw, str):
            text = raw.strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
        raise self.bad(raw)


class IntOption(Option[int]):
    """A whole number from ``lowest`` to ``highest``."""

    __slots__ = ("highest", "lowest")

    def __init__(self, key: str, default: int, description: str, *, lowest: int = 0, highest: int = 2**31 - 1) -> None:
        super().__init__(key, default, description)
        self.lowest, self.highest = lowest, highest

    @property
    def allowed(self) -> str:
        return f"a whole number from {self.lowest} to {self.highest}"

    def _parse(self, raw: object) -> int:
        number = _whole(raw)
        if number is None or not self.lowest <= number <= self.highest:
            raise self.bad(raw)
        return number


class IntListOption(Option[list[int]]):
    """Whole numbers from ``lowest`` to ``highest``, written as Qt writes a list (``150, 0, 90``);
    a text of numbers and commas (``"150,0,90"``, how versions before the registry wrote it) is
    read too."""

    __slots__ = ("highest", "lowest")

    def __init__(
        self, key: str, default: list[int], description: str, *, lowest: int = 0, highest: int = 2**31 - 1
    ) -> None:
        super().__init__(key, default, description)
        self.lowest, self.highest = lowest, highest

    @property
    def allowed(self) -> str:
        return f"whole numbers from {self.lowest} to {self.highest} separated by commas"

    def _parse(self, raw: object) -> list[int]:
        if isinstance(raw, str):
            items: Sequence[object] = [part for part in raw.split(",") if part.strip()]
        elif isinstance(raw, (list, tuple)):
            items = raw
        else:
            items = [raw]
        numbers = [_whole(item) for item in items]
        if any(n is None or not self.lowest <= n <= self.highest for n in numbers):
            raise self.bad(raw)
        return [n for n in numbers if n is not None]

    def stored(self, value: list[int]) -> object:
        return [str(n) for n in self.parse(value)]


class BytesOption(Option[bytes]):
    """Binary data (Qt writes ``@ByteArray(...)``): window geometry, which only Qt reads."""

    __slots__ = ()
    kind: ClassVar[str] = "binary data as Qt writes it (@ByteArray(...))"

    def _parse(self, raw: object) -> bytes:
        if isinstance(raw, (bytes, bytearray)):
            return bytes(raw)
        raise self.bad(raw)


class SettingsReader(Protocol):
    """What reads declared options: :class:`thoughtdesk.core.settings.saved.SavedSettings` (the
    file, without Qt) and the GUI's :class:`thoughtdesk.ui.settings.options.QtSettings`."""

    def get(self, option: Option[T]) -> T: ...


def _whole(raw: object) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str):
        try:
            return int(raw.strip())
        except ValueError:
            return None
    return None


# --- the settings -----------------------------------------------------------------------------

#: The providers a user can set up in Settings (their keys: ``providers/<p>/...``).
REMOTE_PROVIDERS = ("openai", "anthropic")
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}

USER_NAME = TextOption("user/name", "", "the user's name, the author of annotations ('' = the login name)")
LIBRARY_PATH = TextOption("library/path", "", "the library opened at start and by commands ('' = the default file)")
OFFLINE = BoolOption("network/offline", False, "offline mode: no connection but to this machine")
MAX_RESPONSE_MB = IntOption(
    "generation/max_response_mb", 64, "the largest answer a model server may send, in MB", lowest=1, highest=4096
)
LOCAL_MODEL_PATH = TextOption("local/model_path", "", "the local model's GGUF file ('' = none)")
LOCAL_EFFORT = TextOption(
    "local/reasoning_effort", "", "the local model's reasoning effort ('' = its default)", choices=("", *EFFORTS)
)
OPENAI_ENABLED = BoolOption("providers/openai/enabled", False, "offer the OpenAI-compatible provider")
OPENAI_BASE_URL = TextOption("providers/openai/base_url", DEFAULT_BASE_URLS["openai"], "its base URL (ends in /v1)")
OPENAI_EFFORT = TextOption(
    "providers/openai/reasoning_effort", "", "a new run's reasoning effort there ('' = default)", choices=("", *EFFORTS)
)
ANTHROPIC_ENABLED = BoolOption("providers/anthropic/enabled", False, "offer Anthropic")
ANTHROPIC_BASE_URL = TextOption(
    "providers/anthropic/base_url", DEFAULT_BASE_URLS["anthropic"], "Anthropic's API address"
)
ANTHROPIC_EFFORT = TextOption(
    "providers/anthropic/reasoning_effort",
    "",
    "a new run's reasoning effort there ('' = default)",
    choices=("", *EFFORTS),
)
FIRST_RUN_DONE = BoolOption("firstRun/done", False, "the first-run wizard was completed")
MIGRATED_FROM = TextOption(
    "settingsFile/migratedFrom", "", "where the settings were copied from on the first start with this file"
)
COLUMN_WIDTHS = IntListOption(
    "columns/", [], "a table's column widths the user set (+ the table's object name)", highest=10_000
)
WINDOW_GEOMETRY = BytesOption("mainWindow/geometry", b"", "the main window's size and place (Qt's saveGeometry)")
LABEL_SET = TextOption("review/labelSet", "", "the Review tab's label set ('' = the first one)")
REVIEW_BLIND = BoolOption("review/blind", False, "Review hides models and prompts (blind mode)")
PAIRWISE_BLIND = BoolOption("review/pairwise_blind", True, "pairwise preferences are given blind")
ACTIVE_QUEUE = IntOption(
    "review/activeQueue/", 0, "a library's active review queue id (+ the library's path; 0 = none)"
)
EXPORT_FOLDER = TextOption("export/folder", "", "the folder the last export went to")
EXPORT_FORMAT = TextOption("export/format", "", "the format of the last export ('' = the dialog's first)")


def _per_provider(name: str) -> dict[str, Option[Any]]:
    return {p: OPTIONS[f"providers/{p}/{name}"] for p in REMOTE_PROVIDERS}


#: Every declared option by key (families end in ``/``), in the order above.
OPTIONS: dict[str, Option[Any]] = {
    option.key: option
    for option in (
        USER_NAME,
        LIBRARY_PATH,
        OFFLINE,
        MAX_RESPONSE_MB,
        LOCAL_MODEL_PATH,
        LOCAL_EFFORT,
        OPENAI_ENABLED,
        OPENAI_BASE_URL,
        OPENAI_EFFORT,
        ANTHROPIC_ENABLED,
        ANTHROPIC_BASE_URL,
        ANTHROPIC_EFFORT,
        FIRST_RUN_DONE,
        MIGRATED_FROM,
        COLUMN_WIDTHS,
        WINDOW_GEOMETRY,
        LABEL_SET,
        REVIEW_BLIND,
        PAIRWISE_BLIND,
        ACTIVE_QUEUE,
        EXPORT_FOLDER,
        EXPORT_FORMAT,
    )
}
#: Each remote provider's options: ``PROVIDER_ENABLED["openai"]`` and so on.
PROVIDER_ENABLED = _per_provider("enabled")
PROVIDER_BASE_URL = _per_provider("base_url")
PROVIDER_EFFORT = _per_provider("reasoning_effort")


def find(key: str) -> Option[Any] | None:
    """The option declaring ``key``: the option itself, or the family it is a member of."""
    option = OPTIONS.get(key)
    if option is not None and not option.family:
        return option
    family = next((o for k, o in OPTIONS.items() if o.family and key.startswith(k) and key != k), None)
    return family.at(key[len(family.key) :]) if family is not None else None
