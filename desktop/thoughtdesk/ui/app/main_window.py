"""The main window: the tabs, the File and Help menus, the status bar, and the signals and
services the features use (it implements :class:`~thoughtdesk.ui.base.window_api.WindowApi`).

The features are installed by typed code, in tab order: each package's ``install(window)``
adds its tab, menus and actions and returns its controller, kept as a typed attribute
(``window.samples``, ``window.review``, ``window.evaluation``, ``window.importing``,
``window.settings``, ``window.generation``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.library.file_faults import library_error
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings import registry
from thoughtdesk.ui.app.about import AboutDialog, app_icon
from thoughtdesk.ui.app.crash import set_crash_library
from thoughtdesk.ui.app.shortcuts import ShortcutsDialog
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.base.window_api import Keys
from thoughtdesk.ui.base.write_wait import GUI_WRITE_PATIENCE, waiting_text, write_wait_relay
from thoughtdesk.ui.evaluation import install as install_evaluation
from thoughtdesk.ui.generation import install as install_generation
from thoughtdesk.ui.importing import install as install_importing
from thoughtdesk.ui.models import install as install_models
from thoughtdesk.ui.qt import (
    QAction,
    QActionGroup,
    QByteArray,
    QCloseEvent,
    QFileDialog,
    QKeySequence,
    QMainWindow,
    QMenu,
    QMessageBox,
    QShortcut,
    Qt,
    QTabWidget,
    QWidget,
    Signal,
)
from thoughtdesk.ui.reports import install as install_reports
from thoughtdesk.ui.review import install as install_review
from thoughtdesk.ui.samples import install as install_samples
from thoughtdesk.ui.settings import install as install_settings
from thoughtdesk.ui.settings import options as settings_options
from thoughtdesk.ui.widgets.signals import blocked
from thoughtdesk.ui.widgets.sizing import fit_to_screen

if TYPE_CHECKING:
    from thoughtdesk.ui.evaluation import ResultsView

T = TypeVar("T")


#: The Samples tab's detail pane (generated-CoT cards and their verdicts). Set on the window, not
#: the tab: a style sheet changes how every widget under it is drawn (margins, frames), and the
#: other tabs are laid out with it.
STYLE = """
QFrame#cotCard { border: 1px solid palette(mid); border-radius: 6px; padding: 4px; }
QLabel#heading { margin-top: 8px; }
QLabel#cotAnswer[correct="true"] { color: #1b7f3b; }
QLabel#cotAnswer[correct="false"] { color: #b3261e; }
"""


class MainWindow(QMainWindow):
    """The main window (see the module docstring and :class:`WindowApi` for what features use)."""

    #: ``(Library)``: another library was opened (also emitted once at start).
    library_changed = Signal(object)
    #: ``(DataChanges)``: something wrote to the library.
    data_changed = Signal(object)
    #: ``(int | None)``: the sample shown in the Samples tab's detail pane.
    sample_selected = Signal(object)
    #: Edit ▸ Settings saved new settings.
    settings_changed = Signal()
    #: ``(QWidget)``: another tab is shown.
    tab_changed = Signal(object)
    #: The window is closing.
    closing = Signal()

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowIcon(app_icon())
        self.library: Library | None = None
        self._tasks: set[Task[object]] = set()
        # Actions that write to the library (WindowApi.writing): disabled while it is read-only.
        self._writing = QActionGroup(self)
        self._writing.setExclusionPolicy(QActionGroup.ExclusionPolicy.None_)
        self._writing_tips: dict[QAction, tuple[str, str]] = {}
        self._tab_targets: dict[QWidget, list[QWidget]] = {}
        write_wait_relay().waiting.connect(self._write_waiting)  # any thread's wait, said here
        self._build()
        self.samples = install_samples(self)
        self.samples.sample_selected.connect(self.sample_selected)
        self.review = install_review(self)
        self._evaluation = install_evaluation(self)  # built when first needed (``evaluation``)
        self.importing = install_importing(self)
        self.reports = install_reports(self)
        self.settings = install_settings(self)
        self.models = install_models(self)
        self.generation = install_generation(self)
        self.file_menu.addSeparator()
        self.action_quit = self.add_action(self.file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        self.set_library(library)
        geometry = settings_options.read(registry.WINDOW_GEOMETRY)
        if geometry:
            self.restoreGeometry(QByteArray(geometry))
        else:
            fit_to_screen(self, 1400, 860)

    def _build(self) -> None:
        self.setStyleSheet(STYLE)
        self.tabs = QTabWidget(objectName="mainTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.currentChanged.connect(lambda index: self.tab_changed.emit(self.tabs.widget(index)))
        self.setCentralWidget(self.tabs)
        # File and Help; the features add their menus in between (see ``menu``) and their
        # entries to these, and Quit ends the File menu once they are installed.
        self.file_menu = self.menuBar().addMenu("&File")
        self.file_menu.setObjectName("menu_File")
        self.action_new = self.add_action(self.file_menu, "&New library…", "Ctrl+Shift+N", self.new_library_dialog)
        self.action_open = self.add_action(
            self.file_menu, "&Open library…", QKeySequence.StandardKey.Open, self.open_library_dialog
        )
        self.file_menu.addSeparator()
        self.help_menu = self.menuBar().addMenu("&Help")
        self.help_menu.setObjectName("menu_Help")
        self.action_shortcuts = self.add_action(self.help_menu, "&Keyboard shortcuts", "?", self.show_shortcuts)
        self.action_about = self.add_action(self.help_menu, "&About ThoughtDesk", None, self.show_about)

    @property
    def evaluation_built(self) -> bool:
        """Whether the Results tab's view exists yet (asking for :attr:`evaluation` builds it)."""
        return self._evaluation.built

    @property
    def evaluation(self) -> ResultsView:
        """The Results tab's view, built now if it was not yet (the tab is built on first use)."""
        return self._evaluation.view()

    # Tabs, menus, shortcuts, status bar (WindowApi) -------------------------------------------

    @property
    def dialog_parent(self) -> QWidget:
        """The window itself."""
        return self

    def add_tab(self, widget: QWidget, title: str, shortcut: str | None = None) -> int:
        """Add a view as a tab after the existing ones; ``shortcut`` (e.g. "Ctrl+3") switches to it."""
        index = self.tabs.addTab(widget, title)
        target = [widget]  # replace_tab points the shortcut at the view that takes the tab's place
        self._tab_targets[widget] = target
        if shortcut:
            self.add_shortcut(shortcut, lambda: self.tabs.setCurrentWidget(target[0]))
        return index

    def show_tab(self, widget: QWidget) -> None:
        """Switch to the tab showing ``widget``."""
        self.tabs.setCurrentWidget(widget)

    def replace_tab(self, old: QWidget, new: QWidget) -> None:
        """Put ``new`` in the tab of ``old`` (place, title, shortcut; shown if ``old`` was)."""
        index = self.tabs.indexOf(old)
        shown = self.tabs.currentIndex() == index
        title = self.tabs.tabText(index)
        target = self._tab_targets.pop(old)
        target[0] = new
        self._tab_targets[new] = target
        with blocked(self.tabs):  # no tab_changed for the stand-in's removal
            self.tabs.removeTab(index)
            self.tabs.insertTab(index, new, title)
            if shown:
                self.tabs.setCurrentIndex(index)
        if shown:
            self.tab_changed.emit(new)

    def menu(self, title: str) -> QMenu:
        """The menu bar menu called ``title`` ("&Generate"); a new one goes right after File when
        it is "&Edit" (as usual), else before Help."""
        name = "menu_" + title.replace("&", "")
        existing = self.menuBar().findChild(QMenu, name)
        if existing is not None:
            return existing
        menu = QMenu(title, self.menuBar())
        menu.setObjectName(name)
        before = self.help_menu.menuAction()
        if title == "&Edit":
            before = self.menuBar().actions()[1]  # the menu after File
        self.menuBar().insertMenu(before, menu)
        return menu

    def add_action(
        self, menu: QMenu, text: str, shortcut: Keys | None = None, slot: Callable[[], object] | None = None
    ) -> QAction:
        """An action at the end of ``menu`` whose shortcut also works anywhere in the window."""
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if slot is not None:
            action.triggered.connect(slot)
        menu.addAction(action)
        self.addAction(action)
        return action

    def add_shortcut(self, keys: str, slot: Callable[[], object]) -> QShortcut:
        """A window-wide shortcut without a menu entry."""
        return QShortcut(QKeySequence(keys), self, slot)

    def add_status_widget(self, widget: QWidget) -> None:
        """A permanent widget at the right of the status bar."""
        self.statusBar().addPermanentWidget(widget)

    def writing(self, *actions: QAction) -> None:
        """Mark ``actions`` as writing to the library (disabled with the reason while it is read-only)."""
        for action in actions:
            self._writing.addAction(action)
            self._writing_tips[action] = (
                action.toolTip() if action.toolTip() != action.iconText() else "",
                action.statusTip(),
            )
            for menu in action.associatedObjects():
                if isinstance(menu, QMenu):
                    menu.setToolTipsVisible(True)
        self._apply_read_only()

    def read_only_reason(self) -> str | None:
        """Why the open library cannot be written, or None."""
        return self.library.read_only_reason if self.library is not None else None

    def _apply_read_only(self) -> None:
        reason = self.read_only_reason()
        self._writing.setEnabled(reason is None)
        for action, (tip, status) in self._writing_tips.items():
            action.setToolTip(reason or tip)
            action.setStatusTip(reason or status)

    # Signals and work (WindowApi) -------------------------------------------------------------

    def open_sample(self, pk: int) -> bool:
        """Show sample ``pk`` in the Samples tab (switching collection and clearing filters if needed)."""
        self.show_tab(self.samples)
        return self.samples.open_sample(pk)

    def notify_data_changed(self, changes: DataChanges) -> None:
        """Tell every view what a write changed (``data_changed``)."""
        self.data_changed.emit(changes)

    def notify_settings_changed(self) -> None:
        """Tell every view that settings were saved (``settings_changed``)."""
        self.settings_changed.emit()

    def run_task(self, label: str, work: Callable[[TaskContext], T], on_success: Callable[[T], object]) -> Task[T]:
        """Run ``work(ctx)`` in the background with a progress dialog and Cancel; ``on_success(result)``
        after; a failure is shown (a cancellation only in the status bar)."""
        task = (
            Task(work)
            .with_progress(label, self)
            .on_success(on_success)
            .on_failure(lambda error: self._task_failed(label, error))
            .tracked_in(self._tasks)
        )
        return task.start()

    def _task_failed(self, label: str, error: BaseException) -> None:
        if isinstance(error, Cancelled):
            self.show_status(str(error), 10000)
        elif isinstance(error, (ThoughtDeskError, OSError)):
            self.show_error(f"{label.rstrip('…')}: failed", str(error))
        elif isinstance(error, sqlite3.Error) and self.library is not None and library_error(error, self.library.path):
            self.show_error(f"{label.rstrip('…')}: failed", str(library_error(error, self.library.path)))
        else:
            self.show_error("Unexpected error", f"{type(error).__name__}: {error}")

    # Library ----------------------------------------------------------------------------------

    def set_library(self, library: Library) -> None:
        """Show ``library`` (closing the one shown before)."""
        if self.library is not None and self.library is not library:
            self.library.close()
        self.library = library
        set_crash_library(library.path)
        library.set_write_patience(GUI_WRITE_PATIENCE)  # the GUI thread never waits long: a worker does
        self._apply_read_only()
        read_only = " (read-only: changes cannot be saved)" if library.read_only else ""
        self.setWindowTitle(f"ThoughtDesk — {library.path.name}{read_only}")
        if library.read_only:
            self.show_status(
                f"{library.path} is read-only (its file or folder cannot be written): browsing, search, "
                "evaluation and export work; changes are refused with a message",
                0,
            )
        self.samples.set_library(library)
        self.library_changed.emit(library)
        self.samples.show_first_collection()

    def open_library(self, path: Path) -> bool:
        """Open the library at ``path``; False (and a message) when it cannot be opened."""
        try:
            library = Library.open(path)
        except ThoughtDeskError as error:
            self.show_error("Cannot open the library", str(error))
            return False
        self.set_library(library)
        return True

    def open_handed_over(self, path: Path | None) -> None:
        """A second launch handed over ``path`` (None: no file): open it unless it is the
        library shown, and come to the front."""
        shown = self.library.path.resolve() if self.library is not None else None
        if path is not None and path.resolve() != shown:
            from thoughtdesk.ui.app.missing_library import confirm_library

            chosen = confirm_library(path, self, quit_text="&Cancel")  # a missing file: asked first
            if chosen is not None:
                self.open_library(chosen)
        if self.isMinimized():
            self.showNormal()
        self.raise_()
        self.activateWindow()

    def new_library_dialog(self) -> None:
        """File ▸ New library…"""
        path, _ = QFileDialog.getSaveFileName(
            self,
            "New library",
            str(Path.home() / "library.thoughtdesk"),
            "ThoughtDesk libraries (*.thoughtdesk);;All files (*)",
        )
        if path:
            if Path(path).exists():
                self.show_error("New library", f"{path} already exists; use File > Open library to open it.")
                return
            self.open_library(Path(path))

    def open_library_dialog(self) -> None:
        """File ▸ Open library…"""
        path, _ = QFileDialog.getOpenFileName(
            self, "Open library", str(Path.home()), "ThoughtDesk libraries (*.thoughtdesk *.sqlite *.db);;All files (*)"
        )
        if path:
            self.open_library(Path(path))

    # Messages ---------------------------------------------------------------------------------

    def show_error(self, title: str, text: str) -> None:
        """A warning box (plain text) and the text in the status bar."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setObjectName("errorBox")
        self.statusBar().showMessage(text, 15000)
        box.open()

    def _write_waiting(self, seconds: float, what: str | None) -> None:
        """A write of this process waits for another process: said until the next report."""
        self.show_status(waiting_text(seconds, what) + "; this window stays usable", 12000)

    def show_status(self, text: str, timeout_ms: int = 10000) -> None:
        """A message in the status bar for ``timeout_ms``."""
        self.statusBar().showMessage(text, timeout_ms)

    def show_about(self) -> AboutDialog:
        """Help ▸ About: version, libraries and licences (scrollable plain text)."""
        about = AboutDialog(self)
        about.open()
        return about

    def show_shortcuts(self) -> ShortcutsDialog:
        """Help ▸ Keyboard shortcuts (two aligned columns)."""
        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def closeEvent(self, event: QCloseEvent) -> None:  # Qt API
        self.closing.emit()
        for task in list(self._tasks):
            task.cancel()
        settings_options.write(registry.WINDOW_GEOMETRY, bytes(self.saveGeometry().data()))
        super().closeEvent(event)
