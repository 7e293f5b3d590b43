"""Importing and exporting collections: File ▸ Import (ThoughtSource files, datasets, tables,
downloads) and File ▸ Export collection.

``install(window)`` adds the File menu entries and returns the :class:`ImportingController`
(``window.importing``).
"""

from __future__ import annotations

from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.importing.actions import ImportingController

__all__ = ["ImportingController", "install"]


def install(window: WindowApi) -> ImportingController:
    """Add File ▸ Import… (Ctrl+I, with its submenu) and File ▸ Export collection… (Ctrl+E)."""
    return ImportingController(window)
