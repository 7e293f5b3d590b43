"""What a feature may use of the main window: the one typed seam between ``ui/app`` and the
feature packages (``ui/samples``, ``ui/review``, ``ui/evaluation``, ``ui/generation``,
``ui/importing``, ``ui/settings``).

Each feature package has ``install(window: WindowApi) -> <its controller>``; the main window
calls them in order and keeps what they return as typed attributes (``window.review``...).
Features reach the window only through this protocol, and each other only through the
window's signals and the :class:`SampleBrowser` the Samples tab offers (``window.samples``).

Signals carry Python objects (Qt cannot type them); their payloads are given below and are
the only types sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from thoughtdesk.core.library.queries import Browse, BrowseState, SampleFilter
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.qt import QAction, QKeySequence, QMenu, QShortcut, QWidget, SignalInstance

T = TypeVar("T")

#: A key binding: "Ctrl+G", a QKeySequence or a standard key (QKeySequence.StandardKey.Open).
Keys = str | QKeySequence | QKeySequence.StandardKey


class SampleBrowser(Protocol):
    """What the Samples tab offers the other features (``WindowApi.samples``)."""

    @property
    def collection_selected(self) -> SignalInstance:
        """``(str | None)``: the collection tree's current row changed (its collection's name)."""
        ...

    def current_filter(self) -> SampleFilter:
        """The samples the table shows (tree row, search and filters)."""
        ...

    def current_collection(self) -> str | None:
        """The collection of the tree's current row."""
        ...

    def current_sample_key(self) -> int | None:
        """The sample (primary key) selected in the table."""
        ...

    def neighbour(self, pk: int | None, step: int) -> int | None:
        """The sample ``step`` rows after ``pk`` in the table's order (the first when ``pk`` is
        not shown); None past either end."""
        ...

    def select_sample(self, pk: int) -> bool:
        """Select ``pk`` in the table as it is (no filter change, no tab switch); False when
        the table does not show it."""
        ...

    def browse_state(self) -> BrowseState:
        """The filters and order shown, to compute a :class:`Browse` in a worker."""
        ...

    def show_browse(self, browse: Browse, collection: str) -> None:
        """Show counts and keys computed in a worker, with ``collection`` selected."""
        ...


class WindowApi(Protocol):
    """The main window as the features see it (see the module docstring)."""

    # Signals ---------------------------------------------------------------------------------

    @property
    def library_changed(self) -> SignalInstance:
        """``(Library)``: another library was opened (also emitted once at start)."""
        ...

    @property
    def data_changed(self) -> SignalInstance:
        """``(DataChanges)``: something wrote to the library (see :meth:`notify_data_changed`)."""
        ...

    @property
    def sample_selected(self) -> SignalInstance:
        """``(int | None)``: the sample (primary key) shown in the Samples tab's detail pane."""
        ...

    @property
    def settings_changed(self) -> SignalInstance:
        """``()``: Edit ▸ Settings saved new settings (the user's name, offline mode...)."""
        ...

    @property
    def tab_changed(self) -> SignalInstance:
        """``(QWidget)``: another tab is shown (its widget)."""
        ...

    @property
    def closing(self) -> SignalInstance:
        """``()``: the window is closing; stop sending, keep what is stored."""
        ...

    # State -----------------------------------------------------------------------------------

    @property
    def library(self) -> Library | None:
        """The open library (the GUI thread's connection; workers open their own)."""
        ...

    @property
    def samples(self) -> SampleBrowser:
        """The Samples tab: the current collection, filter and sample."""
        ...

    @property
    def dialog_parent(self) -> QWidget:
        """The widget to parent dialogs and file choosers to."""
        ...

    def isVisible(self) -> bool:  # Qt's name
        """The window is shown (False once it was closed)."""
        ...

    # Tabs, menus, shortcuts, status bar ------------------------------------------------------

    def add_tab(self, widget: QWidget, title: str, shortcut: str | None = None) -> int:
        """Add a tab after the existing ones; ``shortcut`` (e.g. "Ctrl+3") switches to it."""
        ...

    def show_tab(self, widget: QWidget) -> None:
        """Switch to the tab showing ``widget``."""
        ...

    def replace_tab(self, old: QWidget, new: QWidget) -> None:
        """Put ``new`` where the tab ``old`` is (same place, title and shortcut; shown if ``old``
        was): a view built on first use takes its stand-in's place (``ui/base/deferred.py``)."""
        ...

    def menu(self, title: str) -> QMenu:
        """The menu bar menu called ``title`` ("&Generate"), created in its usual place when new."""
        ...

    def add_action(
        self, menu: QMenu, text: str, shortcut: Keys | None = None, slot: Callable[[], object] | None = None
    ) -> QAction:
        """An action at the end of ``menu`` whose shortcut works anywhere in the window;
        ``slot()`` when triggered."""
        ...

    def add_shortcut(self, keys: str, slot: Callable[[], object]) -> QShortcut:
        """A window-wide shortcut without a menu entry."""
        ...

    def add_status_widget(self, widget: QWidget) -> None:
        """A permanent widget at the right of the status bar."""
        ...

    def writing(self, *actions: QAction) -> None:
        """Mark ``actions`` as writing to the library: while the open library is read-only they
        are disabled, with the reason as their tooltip and status tip (enabled again when a
        writable library is opened). Widgets that write follow :meth:`read_only_reason` in their
        own enabled state."""
        ...

    def read_only_reason(self) -> str | None:
        """Why the open library cannot be written (``Library.read_only_reason``), or None."""
        ...

    # Work and messages -----------------------------------------------------------------------

    def open_sample(self, pk: int) -> bool:
        """Show sample ``pk`` in the Samples tab (switching collection and clearing filters if
        needed); False when there is no such sample."""
        ...

    def run_task(self, label: str, work: Callable[[TaskContext], T], on_success: Callable[[T], object]) -> Task[T]:
        """Run ``work(context)`` in the background with a progress dialog and Cancel; failures
        are shown to the user; ``on_success(result)`` on the GUI thread. Cancelled at close."""
        ...

    def notify_data_changed(self, changes: DataChanges) -> None:
        """Tell every view what a write changed (emits :attr:`data_changed`)."""
        ...

    def notify_settings_changed(self) -> None:
        """Tell every view that settings were saved (emits :attr:`settings_changed`)."""
        ...

    def show_error(self, title: str, text: str) -> None:
        """A warning box (plain text) and the text in the status bar."""
        ...

    def show_status(self, text: str, timeout_ms: int = 10000) -> None:
        """A message in the status bar for ``timeout_ms``."""
        ...
