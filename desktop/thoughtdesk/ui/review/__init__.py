"""The Review tab (Ctrl+2) and the Review menu: compare a sample's CoTs and annotate them.

``install(window)`` adds the tab and the menu and returns the :class:`ReviewController`
(``window.review``; the tab's widget is ``window.review.view``, built when first needed).
"""

from __future__ import annotations

from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.review.controller import ReviewController

__all__ = ["ReviewController", "install"]


def install(window: WindowApi) -> ReviewController:
    """Add the Review tab (Ctrl+2) and the Review menu; the tab's view is built when first needed."""
    return ReviewController(window)
