"""The main window: collections on the left, samples in the middle, the selected sample right."""

from __future__ import annotations

import importlib
from pathlib import Path

from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.importing.importer import ImportReport
from thoughtdesk.core.library.queries import Correctness, SampleFilter, sample_collection_name, sample_keys
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.library.records import ANSWER_TYPES
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.app.dialogs import about_text, shortcuts_text
from thoughtdesk.ui.app.tasks import Task
from thoughtdesk.ui.importing.actions import ImportExportMixin
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QAction,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QKeySequence,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QSettings,
    QShortcut,
    QSplitter,
    Qt,
    QTableView,
    QTabWidget,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.samples.collection_tree import CollectionTree, TreeNode
from thoughtdesk.ui.samples.sample_detail import SampleDetail
from thoughtdesk.ui.samples.sample_model import SampleTableModel

STYLE = """
QFrame#cotCard { border: 1px solid palette(mid); border-radius: 6px; padding: 4px; }
QLabel#heading { margin-top: 8px; }
QLabel#cotAnswer[correct="true"] { color: #1b7f3b; }
QLabel#cotAnswer[correct="false"] { color: #b3261e; }
"""


#: Modules that add views, menus and actions to the main window: each has ``install(window)``.
#: They use the extension points below (``add_tab``, ``menu``, the signals, ``run_task``).
INSTALLERS: list[str] = [
    # one line per module, e.g. "thoughtdesk.ui.evaluation.view",
    "thoughtdesk.ui.review.view",
    "thoughtdesk.ui.evaluation.view",
    "thoughtdesk.ui.importing.dataset_dialog",
    "thoughtdesk.ui.settings.controller",
    "thoughtdesk.ui.generation.controller",
]


class MainWindow(ImportExportMixin, QMainWindow):
    """The main window.

    Extension points for views defined in other modules (see :data:`INSTALLERS`):

    - ``add_tab(widget, title, shortcut)``: a tab next to "Samples";
    - ``menu(title)``: a menu bar menu, created before "Help" when it does not exist;
    - ``library_changed(Library)``: another library was opened (also emitted once at start);
    - ``data_changed()``: samples, CoTs, answers or annotations were written (call
      ``notify_data_changed()`` after writing);
    - ``sample_selected(int | None)``: the sample (primary key) shown in the detail pane;
    - ``open_sample(pk)``: show one sample in the Samples tab;
    - ``run_task(label, work, on_success)``: background work with a progress dialog and Cancel.
    """

    library_changed = Signal(object)
    data_changed = Signal()
    sample_selected = Signal(object)
    #: The tree and table were refreshed after ``notify_data_changed`` (in the background).
    browse_refreshed = Signal()

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.library: Library | None = None
        self.tasks: set[Task[object]] = set()
        self._browse_tasks: set[Task[object]] = set()
        self._browse_again = False
        self.last_message: QMessageBox | None = None
        self.last_report: ImportReport | None = None
        self._build()
        self._build_actions()
        self.installed: dict[str, object] = {}
        for name in INSTALLERS:
            self.installed[name] = importlib.import_module(name).install(self)
        self.set_library(library)
        settings = QSettings()
        geometry = settings.value("mainWindow/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1400, 860)

    # Layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        self.setStyleSheet(STYLE)
        self.tree = CollectionTree()
        self.tree.selectionModel().currentChanged.connect(lambda *_: self._apply_filter())

        self.search = QLineEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search questions, reference and generated CoTs  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self._search_timer = QTimer(self, singleShot=True, interval=150)
        self._search_timer.timeout.connect(self._apply_filter)
        self.search.textChanged.connect(lambda _: self._search_timer.start())

        self.type_filter = QComboBox(objectName="typeFilter")
        self.type_filter.addItem("All types", None)
        for t in ANSWER_TYPES:
            self.type_filter.addItem(t, t)
        self.cots_filter = QComboBox(objectName="cotsFilter")
        for label, value in (
            ("With or without CoTs", None),
            ("Has generated CoTs", True),
            ("No generated CoTs", False),
        ):
            self.cots_filter.addItem(label, value)
        self.correct_filter = QComboBox(objectName="correctFilter")
        for label, value in (
            ("Any correctness", Correctness.ANY),
            ("Has a correct answer", Correctness.HAS_CORRECT),
            ("Has an incorrect answer", Correctness.HAS_INCORRECT),
            ("Not scored", Correctness.UNSCORED),
        ):
            self.correct_filter.addItem(label, value.value)
        for combo in (self.type_filter, self.cots_filter, self.correct_filter):
            combo.currentIndexChanged.connect(lambda _: self._apply_filter())

        self.model = SampleTableModel()
        self.table = QTableView(objectName="sampleTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for column, width in ((0, 150), (2, 100), (3, 140), (4, 50), (5, 64), (6, 74)):
            self.table.setColumnWidth(column, width)
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        self.count_label = QLabel(objectName="countLabel")

        centre = QWidget()
        centre_layout = QVBoxLayout(centre)
        centre_layout.setContentsMargins(0, 0, 0, 0)
        filters = QHBoxLayout()
        filters.addWidget(self.search, 3)
        filters.addWidget(self.type_filter)
        filters.addWidget(self.cots_filter)
        filters.addWidget(self.correct_filter)
        centre_layout.addLayout(filters)
        centre_layout.addWidget(self.table)
        centre_layout.addWidget(self.count_label)

        self.detail = SampleDetail()
        self.detail.setObjectName("sampleDetailPane")
        self.splitter = QSplitter()
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(centre)
        self.splitter.addWidget(self.detail)
        self.splitter.setSizes([260, 640, 500])
        self.tabs = QTabWidget(objectName="mainTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.splitter, "Samples")
        QShortcut(QKeySequence("Ctrl+1"), self, activated=lambda: self.tabs.setCurrentIndex(0))
        self.setCentralWidget(self.tabs)

    def _build_actions(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.setObjectName("menu_File")
        self.action_new = self._action(file_menu, "&New library…", "Ctrl+Shift+N", self.new_library_dialog)
        self.action_open = self._action(
            file_menu, "&Open library…", QKeySequence.StandardKey.Open, self.open_library_dialog
        )
        file_menu.addSeparator()
        self.action_import = self._action(file_menu, "&Import…", "Ctrl+I", self.import_dialog)
        self.action_export = self._action(file_menu, "&Export collection…", "Ctrl+E", self.export_dialog)
        file_menu.addSeparator()
        self.action_quit = self._action(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.setObjectName("menu_Help")
        self.help_menu = help_menu
        self.action_shortcuts = self._action(help_menu, "&Keyboard shortcuts", "?", self.show_shortcuts)
        self.action_about = self._action(help_menu, "&About ThoughtDesk", None, self.show_about)
        QShortcut(QKeySequence("Ctrl+F"), self, activated=self.focus_search)
        QShortcut(QKeySequence("J"), self, activated=lambda: self.move_selection(+1))
        QShortcut(QKeySequence("K"), self, activated=lambda: self.move_selection(-1))
        QShortcut(QKeySequence("Escape"), self.search, activated=self.search.clear)

    # Extension points -------------------------------------------------------------------

    def add_tab(self, widget: QWidget, title: str, shortcut: str | None = None) -> int:
        """Add a view as a tab after the existing ones; ``shortcut`` (e.g. "Ctrl+3") switches to it."""
        index = self.tabs.addTab(widget, title)
        if shortcut:
            QShortcut(QKeySequence(shortcut), self, activated=lambda: self.tabs.setCurrentWidget(widget))
        return index

    def show_tab(self, widget: QWidget) -> None:
        self.tabs.setCurrentWidget(widget)

    def menu(self, title: str) -> QMenu:
        """The menu bar menu called ``title`` ("&Generate"); created before Help when missing."""
        name = "menu_" + title.replace("&", "")
        existing = self.menuBar().findChild(QMenu, name)
        if existing is not None:
            return existing
        menu = QMenu(title, self.menuBar())
        menu.setObjectName(name)
        self.menuBar().insertMenu(self.help_menu.menuAction(), menu)
        return menu

    def add_action(self, menu: QMenu, text: str, shortcut, slot) -> QAction:
        """A menu action that also works as a window-wide shortcut."""
        return self._action(menu, text, shortcut, slot)

    def notify_data_changed(self) -> None:
        """Refresh the tree and table counts after something wrote to the library.

        The counts and the table's keys are computed in a worker (a large library takes a
        scan), then swapped in on the GUI thread, keeping the selected node and sample. Calls
        while a refresh runs are folded into one more refresh after it.
        """
        self.data_changed.emit()
        self.refresh_browse()

    def refresh_browse(self) -> None:
        """Recount the tree and re-query the table in a worker (see ``notify_data_changed``)."""
        if self.library is None:
            return
        if self._browse_tasks:
            self._browse_again = True
            return
        self._browse_again = False
        path = self.library.path
        shown = self.current_filter()
        sort, descending = self.model.sort_order

        def work():
            with Library.open(path) as lib:
                return lib.tree_stats(), sample_keys(lib, shown, sort, descending)

        def done(result) -> None:
            if self.library is not None and self.library.path == path:
                self._swap_browse(*result, shown, (sort, descending))
            self._browse_finished()

        def failed(error: BaseException) -> None:
            self.statusBar().showMessage(f"Could not refresh the sample list: {error}", 10000)
            self._browse_finished()

        Task(lambda _ctx: work()).on_success(done).on_failure(failed).owned_by(self, self._browse_tasks).start()

    def _browse_finished(self) -> None:
        if self._browse_again:
            QTimer.singleShot(0, self.refresh_browse)
        else:
            self.browse_refreshed.emit()

    def _swap_browse(self, stats, keys, shown: SampleFilter, order) -> None:
        """Show precomputed tree counts and table keys, keeping the selected node and sample."""
        node = self.tree.current_node()
        sample = self.current_sample_key()
        self._populate_tree(stats, lambda: node is not None and self.tree.select_node(node))
        if self.current_filter() != shown or self.model.sort_order != order:
            self._apply_filter()  # the user changed the view meanwhile: query it afresh
            return
        self.model.set_filter(shown, keys)
        self._update_count()
        row = self.model.row_of(sample) if sample is not None else None
        if row is not None:
            self.table.selectionModel().blockSignals(True)
            try:
                self.table.selectRow(row)
            finally:
                self.table.selectionModel().blockSignals(False)
            self.table.viewport().update()
            stored = load_sample(self.library, sample)
            if stored != self.detail.current:  # its CoTs or answers changed: show them
                self.detail.show_sample(stored)
        elif self.model.rowCount():
            self.table.selectRow(0)
        else:
            self.detail.clear()

    def _populate_tree(self, stats, select) -> None:
        """Rebuild the tree from precomputed counts and ``select()`` a node, without the
        selection change re-querying the table (the caller sets its keys)."""
        self.tree.blockSignals(True)
        self.tree.selectionModel().blockSignals(True)
        try:
            self.tree.populate(self.library, stats)
            select()
        finally:
            self.tree.selectionModel().blockSignals(False)
            self.tree.blockSignals(False)
        self.tree.viewport().update()

    def current_sample_key(self) -> int | None:
        index = self.table.currentIndex()
        return self.model.key_at(index.row()) if index.isValid() else None

    def open_sample(self, pk: int) -> bool:
        """Show sample ``pk`` in the Samples tab (switching collection and clearing filters if needed)."""
        self.tabs.setCurrentIndex(0)
        row = self.model.row_of(pk)
        if row is None and self.library is not None:
            found = sample_collection_name(self.library, pk)
            if found is None:
                return False
            self.search.clear()
            for combo in (self.type_filter, self.cots_filter, self.correct_filter):
                combo.setCurrentIndex(0)
            self.tree.select_collection(found)
            self._apply_filter()
            row = self.model.row_of(pk)
        if row is None:
            return False
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))
        return True

    def run_task(self, label: str, work, on_success) -> Task:
        """Run ``work(ctx)`` in the background with a progress dialog; ``on_success(result)`` after."""
        return self._run(label, work, on_success)

    def _action(self, menu, text: str, shortcut, slot) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        self.addAction(action)
        return action

    # Library ----------------------------------------------------------------------------

    def set_library(self, library: Library) -> None:
        if self.library is not None and self.library is not library:
            self.library.close()
        self.library = library
        self.setWindowTitle(f"ThoughtDesk — {library.path.name}")
        self.model.set_library(library)
        self.refresh_collections()
        self.library_changed.emit(library)
        root = self.tree.model_.invisibleRootItem()
        if root.rowCount() and not self.tree.currentIndex().isValid():
            self.tree.setCurrentIndex(root.child(0, 0).index())
        self._apply_filter()

    def refresh_collections(self) -> None:
        self.tree.populate(self.library)

    def open_library(self, path: Path) -> bool:
        try:
            library = Library.open(path)
        except ThoughtDeskError as error:
            self.show_error("Cannot open the library", str(error))
            return False
        self.set_library(library)
        return True

    def new_library_dialog(self) -> None:
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
        path, _ = QFileDialog.getOpenFileName(
            self, "Open library", str(Path.home()), "ThoughtDesk libraries (*.thoughtdesk *.sqlite *.db);;All files (*)"
        )
        if path:
            self.open_library(Path(path))

    # Filtering and selection ------------------------------------------------------------

    def current_filter(self) -> SampleFilter:
        node: TreeNode | None = self.tree.current_node()
        return SampleFilter(
            collection_id=node.collection_id if node else -1,
            dataset=node.dataset if node else None,
            split=node.split if node else None,
            search=self.search.text(),
            answer_type=self.type_filter.currentData(),
            has_cots=self.cots_filter.currentData(),
            correctness=Correctness(self.correct_filter.currentData() or Correctness.ANY.value),
        )

    def _apply_filter(self) -> None:
        self.model.set_filter(self.current_filter())
        n = self._update_count()
        if n and not self.table.currentIndex().isValid():
            self.table.selectRow(0)
        elif not n:
            self.detail.clear()

    def _update_count(self) -> int:
        n = self.model.rowCount()
        self.count_label.setText(f"{n:,} sample{'s' if n != 1 else ''}")
        return n

    def _row_changed(self, current, _previous=None) -> None:
        key = self.model.key_at(current.row()) if current.isValid() else None
        if key is None or self.library is None:
            self.detail.clear()
            self.sample_selected.emit(None)
            return
        self.detail.show_sample(load_sample(self.library, key))
        self.sample_selected.emit(key)

    def move_selection(self, step: int) -> None:
        rows = self.model.rowCount()
        if not rows:
            return
        row = self.table.currentIndex().row()
        row = 0 if row < 0 else max(0, min(rows - 1, row + step))
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def _run(self, label: str, work, on_success) -> Task:
        task = (
            Task(work)
            .with_progress(label, self)
            .on_success(on_success)
            .on_failure(lambda error: self._task_failed(label, error))
            .tracked_in(self.tasks)
        )
        return task.start()

    def _task_failed(self, label: str, error: BaseException) -> None:
        if isinstance(error, Cancelled):
            self.statusBar().showMessage(str(error), 10000)
        elif isinstance(error, (ThoughtDeskError, OSError)):
            self.show_error(f"{label.rstrip('…')}: failed", str(error))
        else:
            self.show_error("Unexpected error", f"{type(error).__name__}: {error}")

    # Messages ---------------------------------------------------------------------------

    def show_error(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setObjectName("errorBox")
        self.last_message = box
        self.statusBar().showMessage(text, 15000)
        box.open()

    def _info(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, title, text, QMessageBox.StandardButton.Ok, self)
        box.setTextFormat(Qt.TextFormat.PlainText)
        self.last_message = box
        box.open()

    def show_about(self) -> None:
        self._info("About ThoughtDesk", about_text())

    def show_shortcuts(self) -> None:
        self._info("Keyboard shortcuts", shortcuts_text())

    def closeEvent(self, event) -> None:
        for task in list(self.tasks):
            task.context.cancel()
        QSettings().setValue("mainWindow/geometry", self.saveGeometry())
        super().closeEvent(event)
