"""What every command does first: offline mode and the key-file fallback, from the saved config.

Kept apart from :mod:`~thoughtdesk.core.settings.config` and
:mod:`~thoughtdesk.core.settings.network` because it needs both, and neither needs the other.
"""

from __future__ import annotations

from thoughtdesk.core.paths import read_settings
from thoughtdesk.core.settings.config import load_config, use_key_file_if_allowed
from thoughtdesk.core.settings.network import apply_offline_setting


def apply_startup_config(offline: bool | None = None) -> None:
    """At the start of any command: offline mode (``offline`` > env > config) and the key file
    fallback when agreed. Never raises: a broken config file means the defaults."""
    config = load_config()
    apply_offline_setting(offline, saved_offline(config.offline))
    use_key_file_if_allowed(config)


def saved_offline(legacy: bool = False) -> bool:
    """Offline mode as saved in the app's settings file (``network/offline``); ``legacy`` (the
    ``offline`` of core.json, where versions before the one settings file mirrored it) when the
    settings file does not say."""
    text = read_settings().get("network/offline")
    if text is None:
        return legacy
    return text.strip().lower() in ("true", "1", "yes")
