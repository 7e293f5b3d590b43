"""What every command does first: offline mode and the key-file fallback, from the saved config.

Kept apart from :mod:`~thoughtdesk.core.settings.config` and
:mod:`~thoughtdesk.core.settings.network` because it needs both, and neither needs the other.
"""

from __future__ import annotations

from thoughtdesk.core.settings import saved
from thoughtdesk.core.settings.config import load_config, use_key_file_if_allowed
from thoughtdesk.core.settings.network import apply_offline_setting, offline_override
from thoughtdesk.core.settings.registry import OFFLINE


def apply_startup_config(offline: bool | None = None) -> None:
    """At the start of any command: offline mode (``offline`` > env > the settings file) and the
    key file fallback when agreed. A broken ``core.json`` means its defaults; a value of
    ``network/offline`` that is neither true nor false raises
    :class:`~thoughtdesk.core.settings.saved.SettingsFileError` (one line), unless ``offline`` or
    the environment decide: guessing "online" could send what the user meant to keep here."""
    config = load_config()
    decided = offline is not None or offline_override() is not None
    apply_offline_setting(offline, False if decided else saved_offline(config.offline))
    use_key_file_if_allowed(config)


def saved_offline(legacy: bool = False) -> bool:
    """Offline mode as saved in the app's settings file (``network/offline``); ``legacy`` (the
    ``offline`` of core.json, where versions before the one settings file mirrored it) when the
    settings file does not say."""
    settings = saved.load()
    return settings.get(OFFLINE) if settings.has(OFFLINE) else legacy
