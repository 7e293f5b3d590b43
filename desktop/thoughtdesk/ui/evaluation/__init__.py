"""The Results tab (Ctrl+3): accuracy table, plots, pairwise comparison, re-scoring.

``install(window)`` adds the tab and returns its :class:`ResultsView` (``window.evaluation``).
"""

from __future__ import annotations

from thoughtdesk.ui.app.window_api import WindowApi
from thoughtdesk.ui.evaluation.view import ResultsView

__all__ = ["ResultsView", "install"]


def install(window: WindowApi) -> ResultsView:
    """Add the Results tab (Ctrl+3)."""
    view = ResultsView(window)
    window.add_tab(view, "Results", "Ctrl+3")
    return view
