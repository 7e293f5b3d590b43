"""A tab whose view is built when it is first needed; its modules are imported after the first paint.

The Results and Runs tabs import pyqtgraph, scipy, the run engine and the backends: building
them before the window is shown cost most of the cold start (issue 27, point 2). A feature
adds a :class:`DeferredTab` instead: an empty page with the tab's title and shortcut. The real
view is built the first time it is asked for (:meth:`DeferredTab.view`: the feature's typed
attribute, a click on the tab, its shortcut) and then takes the page's place
(``WindowApi.replace_tab``: same index, title and shortcut), so the window and the tests see the
view itself as the tab. After the window's first paint the modules named in ``preload`` are
imported in a pool thread (pyqtgraph and scipy take hundreds of milliseconds to import), so the
first use only makes the widgets. Building the view right after the paint instead froze the new
window: the Results view's widgets alone took 0.3-1.4 s of the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Generic, TypeVar

from thoughtdesk.ui.app.tasks import Task, TaskContext
from thoughtdesk.ui.qt import QEvent, QObject, QWidget

if TYPE_CHECKING:
    from thoughtdesk.ui.app.window_api import WindowApi

V = TypeVar("V", bound=QWidget)


class DeferredTab(Generic[V]):
    """A tab of ``window`` titled ``title`` whose view ``build()`` makes when first needed."""

    def __init__(
        self,
        window: WindowApi,
        title: str,
        shortcut: str | None,
        build: Callable[[], V],
        *,
        preload: Sequence[str] = (),
    ) -> None:
        self._window = window
        self._build = build
        self._preload = tuple(preload)
        self._tasks: set[Task[object]] = set()
        self._view: V | None = None
        self.page = QWidget(objectName=f"deferred{title.replace(' ', '')}")
        window.add_tab(self.page, title, shortcut)
        window.tab_changed.connect(self._tab_changed)
        self._first_paint = _FirstPaint(window.dialog_parent, self._preload_soon)

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

    def _preload_soon(self) -> None:
        if self._view is not None or not self._preload:  # asked for before the first paint; nothing to load
            return
        modules = self._preload

        def load(_ctx: TaskContext) -> None:
            for name in modules:
                import_module(name)

        # An import that fails here fails again, and is reported, when the view is built.
        Task(load).owned_by(self._window.dialog_parent, self._tasks).start()


class _FirstPaint(QObject):
    """Calls ``then`` once, after ``window`` is first painted."""

    def __init__(self, window: QWidget, then: Callable[[], object]) -> None:
        super().__init__(window)
        self._then = then
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        if event.type() in (QEvent.Type.Paint, QEvent.Type.Expose) and isinstance(watched, QWidget):
            watched.removeEventFilter(self)
            self._then()
        return False
