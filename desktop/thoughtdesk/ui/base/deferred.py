"""A tab whose view, and the modules behind it, are built and imported when first needed.

The Results and Runs tabs import pyqtgraph, scipy, the run engine and the backends: building
them before the window is shown cost most of the cold start (issue 27, point 2). A feature
adds a :class:`DeferredTab` instead: an empty page with the tab's title and shortcut. The real
view is built the first time it is asked for (:meth:`DeferredTab.view`: the feature's typed
attribute, a click on the tab, its shortcut) and then takes the page's place
(``WindowApi.replace_tab``: same index, title and shortcut), so the window and the tests see the
view itself as the tab.

Tried and not kept (``bench_cold_start.py --stalls``, load 9-24): building the views right after
the first paint held the GUI thread 0.3-1.4 s (the Results view's widgets alone); importing
their modules in a pool thread after the paint still stalled the GUI thread 58-85 ms at a time
(an import holds the GIL through a C extension's initialisation), against 3-23 ms without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from thoughtdesk.ui.qt import QWidget

if TYPE_CHECKING:
    from thoughtdesk.ui.base.window_api import WindowApi

V = TypeVar("V", bound=QWidget)


class DeferredTab(Generic[V]):
    """A tab of ``window`` titled ``title`` whose view ``build()`` makes when first needed."""

    def __init__(self, window: WindowApi, title: str, shortcut: str | None, build: Callable[[], V]) -> None:
        self._window = window
        self._build = build
        self._view: V | None = None
        self.page = QWidget(objectName=f"deferred{title.replace(' ', '')}")
        window.add_tab(self.page, title, shortcut)
        window.tab_changed.connect(self._tab_changed)

    @property
    def built(self) -> bool:
        """Whether the view exists (nothing to stop or refresh before)."""
        return self._view is not None

    def view(self) -> V:
        """The view, built now if it was not yet (on the GUI thread)."""
        if self._view is None:
            view = self._build()
            self._view = view
            self._window.replace_tab(self.page, view)
            self.page.deleteLater()
        return self._view

    def _tab_changed(self, widget: QWidget) -> None:
        if widget is self.page:
            self.view()
