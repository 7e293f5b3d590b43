"""The Review tab (Ctrl+2) and the Review menu: compare a sample's CoTs and annotate them.

``install(window)`` adds the tab and the menu and returns the :class:`ReviewController`
(``window.review``; the tab's widget is ``window.review.view``).
"""

from __future__ import annotations

from thoughtdesk.ui.app.window_api import WindowApi
from thoughtdesk.ui.review.controller import ReviewController
from thoughtdesk.ui.review.view import ReviewView

__all__ = ["ReviewController", "install"]


def install(window: WindowApi) -> ReviewController:
    """Add the Review tab (Ctrl+2) and the Review menu."""
    view = ReviewView()
    window.add_tab(view, "Review", "Ctrl+2")
    return ReviewController(window, view)
