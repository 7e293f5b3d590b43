"""The settings file through QSettings, read and written by the declared options.

Every setting is declared once, with its key, type, default and meaning, in
:mod:`thoughtdesk.core.settings.registry` (the table is in docs/settings.md); the command line
reads the same declarations without Qt (:mod:`thoughtdesk.core.settings.saved`). This module is
the Qt side of it: :class:`QtSettings` reads an option from QSettings and turns what Qt returns
(text, a list of texts, a cached bool or number, a QByteArray) into the option's typed value
with the option's own :meth:`~thoughtdesk.core.settings.registry.Option.parse`, and writes a
value in the form Qt's INI format stores it (``true``/``false``, numbers, ``a, b`` lists). A
value no option allows is logged (file, line, key, what to write) and the default used: the
window opens, and Settings saves a good value again. Nowhere else in the app is a QSettings key
written as a string (``tests/core/settings/test_registry.py`` scans the tree).

:class:`AppSettings` is what the wizard and the Settings dialog edit; ``columns/<table>``,
``review/*``, ``export/*`` and ``mainWindow/geometry`` are read and written where they are used,
through :func:`read` and :func:`write`.

API keys are never settings: they live in the OS keyring (:mod:`thoughtdesk.core.settings.secrets`).
"""

from __future__ import annotations

import getpass
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from thoughtdesk.core.generation.backends import response_cap
from thoughtdesk.core.paths import settings_file
from thoughtdesk.core.settings import config as core_config
from thoughtdesk.core.settings import network, registry, saved
from thoughtdesk.core.settings.registry import Option, SettingValueError
from thoughtdesk.ui.qt import QByteArray, QSettings

T = TypeVar("T")
log = logging.getLogger(__name__)

NO_WIZARD_ENV = "THOUGHTDESK_NO_WIZARD"
#: The QSettings organisation and application (as ``make_application`` names the app).
ORGANIZATION = APPLICATION = "ThoughtDesk"


def default_user_name() -> str:
    """The login name, used until the user gives their name."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "user"


#: AppSettings' fields and the options they hold (a test checks the two agree).
FIELDS: dict[str, Option[Any]] = {
    "user_name": registry.USER_NAME,
    "library_path": registry.LIBRARY_PATH,
    "offline": registry.OFFLINE,
    "max_response_mb": registry.MAX_RESPONSE_MB,
    "local_model_path": registry.LOCAL_MODEL_PATH,
    "openai_enabled": registry.OPENAI_ENABLED,
    "openai_base_url": registry.OPENAI_BASE_URL,
    "anthropic_enabled": registry.ANTHROPIC_ENABLED,
    "anthropic_base_url": registry.ANTHROPIC_BASE_URL,
    "openai_reasoning_effort": registry.OPENAI_EFFORT,
    "anthropic_reasoning_effort": registry.ANTHROPIC_EFFORT,
    "local_reasoning_effort": registry.LOCAL_EFFORT,
}


@dataclass(slots=True)
class AppSettings:
    """Every setting the wizard and the Settings dialog edit (each field holds the option named
    in ``FIELDS``; its default is the option's)."""

    user_name: str = registry.USER_NAME.default
    library_path: str = registry.LIBRARY_PATH.default
    offline: bool = registry.OFFLINE.default
    max_response_mb: int = registry.MAX_RESPONSE_MB.default
    local_model_path: str = registry.LOCAL_MODEL_PATH.default
    openai_enabled: bool = registry.OPENAI_ENABLED.default
    openai_base_url: str = registry.OPENAI_BASE_URL.default
    anthropic_enabled: bool = registry.ANTHROPIC_ENABLED.default
    anthropic_base_url: str = registry.ANTHROPIC_BASE_URL.default
    #: Reasoning efforts a new run starts with ("" = the provider's default; docs/reasoning.md).
    openai_reasoning_effort: str = registry.OPENAI_EFFORT.default
    anthropic_reasoning_effort: str = registry.ANTHROPIC_EFFORT.default
    local_reasoning_effort: str = registry.LOCAL_EFFORT.default


class QtSettings:
    """The settings file through QSettings (``store``; the app's settings file when None), read
    and written by declared options (:class:`~thoughtdesk.core.settings.registry.SettingsReader`,
    as core's :class:`~thoughtdesk.core.settings.saved.SavedSettings` is)."""

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store if store is not None else open_settings()

    def get(self, option: Option[T]) -> T:
        """``option``'s value; its default when unset, or (logged) when the value is one the
        option does not allow."""
        try:
            return self.checked(option)
        except SettingValueError as error:
            log.warning("%s; the default is used until it is saved again", _where(self.store, error))
            return option.parse(None)

    def checked(self, option: Option[T]) -> T:
        """``option``'s value (its default when unset); raises
        :class:`~thoughtdesk.core.settings.registry.SettingValueError` for a value it does not allow."""
        raw = self.store.value(option.key)
        if isinstance(raw, QByteArray):
            raw = bytes(raw.data())
        return option.parse(raw)

    def set(self, option: Option[T], value: T) -> None:
        """Store ``value`` (checked by the option: a value it does not allow raises
        :class:`~thoughtdesk.core.settings.registry.SettingValueError`)."""
        stored = option.stored(value)
        self.store.setValue(option.key, QByteArray(stored) if isinstance(stored, bytes) else stored)

    def remove(self, option: Option[Any]) -> None:
        self.store.remove(option.key)

    def sync(self) -> None:
        self.store.sync()


def _where(store: QSettings, error: SettingValueError) -> str:
    # The file's line, as a command says it, when the value came from the file (not a cached one).
    path = Path(store.fileName())
    found = saved.load(path).values.get(error.option.key)
    if found is None:
        return f"{path}: {error}"
    return str(saved.SettingsFileError(path, found.line, error))


def read(option: Option[T], store: QSettings | None = None) -> T:
    """``option``'s value in the settings (see :meth:`QtSettings.get`)."""
    return QtSettings(store).get(option)


def write(option: Option[T], value: T, store: QSettings | None = None) -> None:
    """Store ``value`` for ``option`` (see :meth:`QtSettings.set`)."""
    QtSettings(store).set(option, value)


def remove(option: Option[Any], store: QSettings | None = None) -> None:
    """Forget ``option``'s value: its default applies again."""
    QtSettings(store).remove(option)


def use_settings_file() -> Path:
    """Point every QSettings of this process, ``QSettings()`` included, at the one settings file
    the command line reads too (:func:`thoughtdesk.core.paths.settings_file`): INI format, in the
    config folder (so ``THOUGHTDESK_CONFIG_DIR`` reaches it). On the first start with it, the
    settings an earlier version kept in the platform's own store (the registry, a plist, a .conf
    file) are copied into it once. Returns the file's path; cheap enough to call again."""
    path = settings_file()
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(path.parent.parent))
    if not path.exists():
        _migrate_native_settings(QSettings(str(path), QSettings.Format.IniFormat))
    return path


def _migrate_native_settings(target: QSettings) -> None:
    old = QSettings(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)
    if old.fileName() == target.fileName():
        return
    keys = old.allKeys()
    if not keys:  # nothing to bring over: no file is made until something is saved
        return
    for key in keys:
        target.setValue(key, old.value(key))
    QtSettings(target).set(registry.MIGRATED_FROM, old.fileName())  # once: the file exists from now on
    target.sync()


def open_settings() -> QSettings:
    """The user's settings store (the one settings file), the same before a QApplication exists."""
    return QSettings(str(use_settings_file()), QSettings.Format.IniFormat)


def load_settings(store: QSettings | None = None) -> AppSettings:
    """The saved settings (defaults for anything never saved; the user name defaults to the login)."""
    reader = QtSettings(store)
    settings = AppSettings(**{name: reader.get(option) for name, option in FIELDS.items()})
    if not settings.user_name.strip():
        settings.user_name = default_user_name()
    return settings


def save_settings(settings: AppSettings, store: QSettings | None = None) -> None:
    """Save every setting, mirror offline mode for the CLI and apply it to this process now."""
    writer = QtSettings(store)
    for name, option in FIELDS.items():
        value = getattr(settings, name)
        writer.set(option, value.strip() if isinstance(value, str) else value)
    writer.sync()  # the command line reads offline mode, the library and the rest from this same file
    if network.offline_override() is None:  # --offline or the environment, when set, stay in charge
        network.set_offline(settings.offline)
    response_cap.set_response_cap_mb(settings.max_response_mb)  # for the runs this process starts from now


def user_name(store: QSettings | None = None) -> str:
    """The annotation author: the name given in the first-run wizard or Settings, else the login."""
    return read(registry.USER_NAME, store).strip() or default_user_name()


def first_run_done(store: QSettings | None = None) -> bool:
    return read(registry.FIRST_RUN_DONE, store)


def mark_first_run_done(store: QSettings | None = None) -> None:
    settings = QtSettings(store)
    settings.set(registry.FIRST_RUN_DONE, True)
    settings.sync()


def wizard_wanted(store: QSettings | None = None) -> bool:
    """True on a first start: no ``firstRun/done`` yet and ``THOUGHTDESK_NO_WIZARD`` is not 1."""
    if os.environ.get(NO_WIZARD_ENV, "").strip() in ("1", "true", "yes"):
        return False
    return not first_run_done(store)


def apply_startup_settings(store: QSettings | None = None) -> AppSettings:
    """At start: offline mode (env > saved), the key file fallback if agreed; returns the settings."""
    settings = load_settings(store)
    forced = network.offline_override()
    network.set_offline(settings.offline if forced is None else forced)
    core_config.use_key_file_if_allowed()
    return settings


def column_widths(table: str, store: QSettings | None = None) -> list[int]:
    """The column widths saved for ``table`` (an object name), [] when none or unreadable."""
    return read(registry.COLUMN_WIDTHS.at(table), store)


def save_column_widths(table: str, widths: list[int], store: QSettings | None = None) -> None:
    """Remember ``table``'s column widths (written when the user resizes a column)."""
    write(registry.COLUMN_WIDTHS.at(table), widths, store)
