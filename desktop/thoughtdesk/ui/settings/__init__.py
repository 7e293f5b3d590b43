"""Settings: Edit ▸ Settings…, the first-run wizard, QSettings read through the declared options (``options``).

``install(window)`` adds Edit ▸ Settings… (Ctrl+,), Help ▸ Open log folder and the offline
indicator, and returns the :class:`SettingsMenu` (``window.settings``).
"""

from __future__ import annotations

from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.settings.controller import SettingsMenu

__all__ = ["SettingsMenu", "install"]


def install(window: WindowApi) -> SettingsMenu:
    """Add Edit ▸ Settings…, Help ▸ Open log folder and the offline indicator."""
    return SettingsMenu(window)
