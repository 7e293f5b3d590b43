"""The application's settings, kept with QSettings; each option declared once.

Keys other modules may read (through the functions below, not raw strings where possible):

=================================  ======  ==============================================
key                                type    meaning
=================================  ======  ==============================================
``user/name``                      str     the user's name: the author of annotations
``library/path``                   str     the library file opened at start ("" = default)
``network/offline``                bool    offline mode (no connection but to this machine)
``generation/max_response_mb``     int     the largest answer a model server may send (MB, 1-4096)
``local/model_path``               str     the GGUF file of the local model ("" = none)
``providers/openai/enabled``       bool    offer the OpenAI-compatible provider
``providers/openai/base_url``      str     its base URL (ends in ``/v1``)
``providers/anthropic/enabled``    bool    offer Anthropic
``providers/anthropic/base_url``   str     Anthropic's API address
``providers/<p>/reasoning_effort`` str     a new run's reasoning effort for provider p ("" = its default)
``local/reasoning_effort``         str     the local model's reasoning effort ("" = its default)
``firstRun/done``                  bool    the first-run wizard was completed
``columns/<table>``                str     a table's column widths the user set ("150,0,90")
=================================  ======  ==============================================

API keys are never settings: they live in the OS keyring (:mod:`thoughtdesk.core.settings.secrets`).
They live in one INI file in the config folder (:func:`use_settings_file`), which the command
line reads as well (:func:`thoughtdesk.core.paths.read_settings`): offline mode and the library
chosen here apply to ``thoughtdesk`` commands too.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from thoughtdesk.core.generation.backends import response_cap
from thoughtdesk.core.generation.defaults import DEFAULT_BASE_URLS, LOCAL_EFFORT_KEY, LOCAL_MODEL_KEY, provider_key
from thoughtdesk.core.paths import settings_file
from thoughtdesk.core.settings import config as core_config
from thoughtdesk.core.settings import network
from thoughtdesk.ui.qt import QSettings

NO_WIZARD_ENV = "THOUGHTDESK_NO_WIZARD"
#: The QSettings organisation and application (as ``make_application`` names the app).
ORGANIZATION = APPLICATION = "ThoughtDesk"
DEFAULT_OPENAI_BASE_URL = DEFAULT_BASE_URLS["openai"]
DEFAULT_ANTHROPIC_BASE_URL = DEFAULT_BASE_URLS["anthropic"]

USER_NAME = "user/name"
LIBRARY_PATH = "library/path"
OFFLINE = "network/offline"
MAX_RESPONSE_MB = response_cap.SETTING
# The model choices are read by core too (core/generation/defaults.py: the planner's and the
# CLI's defaults), so their keys are declared there.
LOCAL_MODEL_PATH = LOCAL_MODEL_KEY
OPENAI_ENABLED = provider_key("openai", "enabled")
OPENAI_BASE_URL = provider_key("openai", "base_url")
ANTHROPIC_ENABLED = provider_key("anthropic", "enabled")
ANTHROPIC_BASE_URL = provider_key("anthropic", "base_url")
OPENAI_EFFORT = provider_key("openai", "reasoning_effort")
ANTHROPIC_EFFORT = provider_key("anthropic", "reasoning_effort")
LOCAL_EFFORT = LOCAL_EFFORT_KEY
FIRST_RUN_DONE = "firstRun/done"
#: Where the settings were copied from on the first start with the settings file ("" = nowhere).
MIGRATED_FROM = "settingsFile/migratedFrom"
COLUMN_WIDTHS = "columns/"  # + the table's object name


def default_user_name() -> str:
    """The login name, used until the user gives their name."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "user"


@dataclass(slots=True)
class AppSettings:
    """Every setting the wizard and the Settings dialog edit (keys: see the module docstring)."""

    user_name: str = ""
    library_path: str = ""
    offline: bool = False
    max_response_mb: int = response_cap.DEFAULT_MB
    local_model_path: str = ""
    openai_enabled: bool = False
    openai_base_url: str = DEFAULT_OPENAI_BASE_URL
    anthropic_enabled: bool = False
    anthropic_base_url: str = DEFAULT_ANTHROPIC_BASE_URL
    #: Reasoning efforts a new run starts with ("" = the provider's default; docs/reasoning.md).
    openai_reasoning_effort: str = ""
    anthropic_reasoning_effort: str = ""
    local_reasoning_effort: str = ""


#: dataclass field -> QSettings key
_KEYS: dict[str, str] = {
    "user_name": USER_NAME,
    "library_path": LIBRARY_PATH,
    "offline": OFFLINE,
    "max_response_mb": MAX_RESPONSE_MB,
    "local_model_path": LOCAL_MODEL_PATH,
    "openai_enabled": OPENAI_ENABLED,
    "openai_base_url": OPENAI_BASE_URL,
    "anthropic_enabled": ANTHROPIC_ENABLED,
    "anthropic_base_url": ANTHROPIC_BASE_URL,
    "openai_reasoning_effort": OPENAI_EFFORT,
    "anthropic_reasoning_effort": ANTHROPIC_EFFORT,
    "local_reasoning_effort": LOCAL_EFFORT,
}


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
    target.setValue(MIGRATED_FROM, old.fileName())  # once: the file exists from now on
    target.sync()


def open_settings() -> QSettings:
    """The user's settings store (the one settings file), the same before a QApplication exists."""
    return QSettings(str(use_settings_file()), QSettings.Format.IniFormat)


def _read(store: QSettings, key: str, default: Any) -> Any:
    # QSettings' INI backend returns strings; type= converts "true"/"false" and numbers back.
    value = store.value(key, default, type=type(default))
    return default if value is None else value


def load_settings(store: QSettings | None = None) -> AppSettings:
    """The saved settings (defaults for anything never saved; the user name defaults to the login)."""
    store = store or open_settings()
    defaults = AppSettings()
    values = {f.name: _read(store, _KEYS[f.name], getattr(defaults, f.name)) for f in fields(AppSettings)}
    settings = AppSettings(**values)
    try:  # an edited file may hold anything: the default then, as the command line does
        settings.max_response_mb = response_cap.parse_cap_mb(settings.max_response_mb)
    except response_cap.ResponseCapError:
        settings.max_response_mb = response_cap.DEFAULT_MB
    if not settings.user_name.strip():
        settings.user_name = default_user_name()
    return settings


def settings_values(settings: AppSettings) -> dict[str, object]:
    """``settings`` as ``{key: value}`` under the settings file's keys (what core reads from it)."""
    return {key: getattr(settings, name) for name, key in _KEYS.items()}


def save_settings(settings: AppSettings, store: QSettings | None = None) -> None:
    """Save every setting, mirror offline mode for the CLI and apply it to this process now."""
    store = store or open_settings()
    for name, key in _KEYS.items():
        value = getattr(settings, name)
        store.setValue(key, value.strip() if isinstance(value, str) else value)
    store.sync()  # the command line reads offline mode, the library and the rest from this same file
    if network.offline_override() is None:  # --offline or the environment, when set, stay in charge
        network.set_offline(settings.offline)
    response_cap.set_response_cap_mb(settings.max_response_mb)  # for the runs this process starts from now


def user_name(store: QSettings | None = None) -> str:
    """The annotation author: the name given in the first-run wizard or Settings, else the login."""
    name = str(_read(store or open_settings(), USER_NAME, "")).strip()
    return name or default_user_name()


def first_run_done(store: QSettings | None = None) -> bool:
    return bool(_read(store or open_settings(), FIRST_RUN_DONE, False))


def mark_first_run_done(store: QSettings | None = None) -> None:
    store = store or open_settings()
    store.setValue(FIRST_RUN_DONE, True)
    store.sync()


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
    text = str(_read(store or open_settings(), COLUMN_WIDTHS + table, ""))
    try:
        widths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:  # an edited settings file: fall back to the computed widths
        return []
    return widths if all(0 <= width <= 10_000 for width in widths) else []


def save_column_widths(table: str, widths: list[int], store: QSettings | None = None) -> None:
    """Remember ``table``'s column widths (written when the user resizes a column)."""
    store = store or open_settings()
    store.setValue(COLUMN_WIDTHS + table, ",".join(str(width) for width in widths))
