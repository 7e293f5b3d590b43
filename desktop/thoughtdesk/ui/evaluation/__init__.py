"""The Results tab (Ctrl+3): accuracy table, plots, pairwise comparison, re-scoring.

``install(window)`` adds the tab and returns it as a :class:`~thoughtdesk.ui.base.deferred.DeferredTab`:
the :class:`ResultsView` (``window.evaluation``) and with it pyqtgraph, scipy and the evaluation
core are built and imported when the tab is first needed, not before the window's first paint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thoughtdesk.ui.base.deferred import DeferredTab
from thoughtdesk.ui.base.window_api import WindowApi

if TYPE_CHECKING:
    from thoughtdesk.ui.evaluation.view import ResultsView

__all__ = ["ResultsView", "install"]


def install(window: WindowApi) -> DeferredTab[ResultsView]:
    """Add the Results tab (Ctrl+3); its view is built when first needed."""

    def build() -> ResultsView:
        from thoughtdesk.ui.evaluation.view import ResultsView

        view = ResultsView(window)
        if window.library is not None:  # the window's library_changed came before the view
            view.library_changed(window.library)
        return view

    return DeferredTab(window, "Results", "Ctrl+3", build)


def __getattr__(name: str) -> object:
    if name == "ResultsView":  # the package's name for it, imported when asked for
        from thoughtdesk.ui.evaluation.view import ResultsView

        return ResultsView
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
