"""Generating CoTs: the Generate menu, the fragment editor, the run planner, the Runs tab (Ctrl+4).

``install(window)`` adds them and returns the :class:`GenerationUI` (``window.generation``).
"""

from __future__ import annotations

from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.generation.controller import GenerationUI

__all__ = ["GenerationUI", "install"]


def install(window: WindowApi) -> GenerationUI:
    """Add the Generate menu (Plan a run… Ctrl+G, Fragments…, Runs) and the Runs tab (Ctrl+4)."""
    return GenerationUI(window)
