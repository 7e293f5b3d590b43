"""What every command does first: offline mode and the key-file fallback, from the saved config.

Kept apart from :mod:`~thoughtdesk.core.settings.config` and
:mod:`~thoughtdesk.core.settings.network` because it needs both, and neither needs the other.
"""

from __future__ import annotations

from thoughtdesk.core.settings.config import load_config, use_key_file_if_allowed
from thoughtdesk.core.settings.network import apply_offline_setting


def apply_startup_config(offline: bool | None = None) -> None:
    """At the start of any command: offline mode (``offline`` > env > config) and the key file
    fallback when agreed. Never raises: a broken config file means the defaults."""
    config = load_config()
    apply_offline_setting(offline, config.offline)
    use_key_file_if_allowed(config)
