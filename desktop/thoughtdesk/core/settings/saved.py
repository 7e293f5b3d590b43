"""The settings file as non-Qt code reads it: typed values of declared options, or one line.

What the user chose in the app (the library, offline mode, the models, the largest answer) is in
the settings file the GUI writes with QSettings (:func:`thoughtdesk.core.paths.settings_file`).
Core reads it with :mod:`~thoughtdesk.core.settings.ini` and gives each value its meaning through
its declaration (:mod:`~thoughtdesk.core.settings.registry`), as the GUI does: the same file
gives the same values on both sides (``tests/ui/settings/test_registry_parity.py``). A value no
declaration allows is a :class:`SettingsFileError` naming the file, the line, the key and what to
write there; a command ends with that one line (``tests/cli/test_settings_file_values.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.paths import LIBRARY_ENV, LIBRARY_FILENAME, settings_file, user_data_dir
from thoughtdesk.core.settings.ini import IniValue, read_ini
from thoughtdesk.core.settings.registry import LIBRARY_PATH, Option, SettingsReader, SettingValueError

T = TypeVar("T")


class SettingsFileError(ThoughtDeskError):
    """A value in the settings file that its option does not allow: where, what, what to do."""

    def __init__(self, path: Path, line: int, error: SettingValueError) -> None:
        self.path, self.line, self.key = path, line, error.option.key
        default = error.option.default
        shown = repr(default) if not isinstance(default, bool) else str(default).lower()
        super().__init__(f"{path}, line {line}: {error}; correct that line, or delete it to use the default ({shown})")


@dataclass(frozen=True, slots=True)
class SavedSettings:
    """The settings file's values at one moment: :meth:`get` gives a declared option's value."""

    path: Path
    values: dict[str, IniValue]

    def get(self, option: Option[T]) -> T:
        """``option``'s value in the file, its default when the file has none; raises
        :class:`SettingsFileError` for a value the option does not allow."""
        found = self.values.get(option.key)
        if found is None:
            return option.parse(None)
        try:
            return option.parse(found.raw)
        except SettingValueError as error:
            raise SettingsFileError(self.path, found.line, error) from None

    def has(self, option: Option[Any]) -> bool:
        """Whether the file gives ``option`` a value."""
        return option.key in self.values


def load(path: Path | None = None) -> SavedSettings:
    """The settings file (``path``, else :func:`~thoughtdesk.core.paths.settings_file`) as it is
    now; a missing or unreadable file has no values (every option its default)."""
    path = path or settings_file()
    return SavedSettings(path, read_ini(path))


def saved(option: Option[T], path: Path | None = None) -> T:
    """``option``'s value in the settings file (read now), else its default; raises
    :class:`SettingsFileError` (one line: file, line, key, what is allowed) for a bad value."""
    return load(path).get(option)


# --- the library a command or the app opens ----------------------------------------------------


def default_library_path(settings: SettingsReader | None = None) -> Path:
    """The default library: ``$THOUGHTDESK_LIBRARY`` if set, else the library chosen in the app
    (``library/path`` in ``settings``, by default the settings file), else one file in the data
    folder."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return Path(env).expanduser()
    chosen = (settings or load()).get(LIBRARY_PATH).strip()
    if chosen:
        return Path(chosen).expanduser()
    return user_data_dir() / LIBRARY_FILENAME


def resolve_library_path(explicit: str | os.PathLike[str] | None, settings: SettingsReader | None = None) -> Path:
    """The library named by ``--library`` if given, else :func:`default_library_path`."""
    if explicit:
        return Path(explicit).expanduser()
    return default_library_path(settings)
