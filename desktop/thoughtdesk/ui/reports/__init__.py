"""Review reports in the GUI: File > Export report… (HTML or PDF of a collection, a review
queue or the samples shown) and the PDF writer the command line uses too (docs/reports.md).

``install(window)`` adds the menu entry and returns the :class:`ReportsController`
(``window.reports``).
"""

from __future__ import annotations

from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.reports.dialog import ReportsController

__all__ = ["ReportsController", "install"]


def install(window: WindowApi) -> ReportsController:
    """Add File > Export report… and return its controller."""
    return ReportsController(window)
