"""The Samples tab (Ctrl+1): collections on the left, the sample table in the middle, the
selected sample on the right, search and filters above the table.

The table shows the samples of the tree's current row that match the search and filters
(:class:`~thoughtdesk.core.library.queries.SampleFilter`). After a write
(``window.data_changed``) the tree's counts and the table's keys are computed in a worker, then
swapped in on the GUI thread, keeping the selected row and sample; requests while a refresh runs
are folded into one more refresh after it. Other features see the tab as a
:class:`~thoughtdesk.ui.base.window_api.SampleBrowser`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from thoughtdesk.core.critiques import critiques_for_cots, explanation_ratings_for_cots
from thoughtdesk.core.library.queries import (
    Browse,
    BrowseState,
    Correctness,
    SampleFilter,
    browse,
    sample_collection_name,
)
from thoughtdesk.core.library.reader import StoredSample, cot_annotations, load_sample
from thoughtdesk.core.library.records import ANSWER_TYPES, CollectionInfo, SplitStats
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.base.throttle import Throttle
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QComboBox,
    QCoreApplication,
    QEvent,
    QHBoxLayout,
    QHeaderView,
    QKeySequence,
    QLabel,
    QLineEdit,
    QModelIndex,
    QPersistentModelIndex,
    QShortcut,
    QSplitter,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    Qt,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.samples.collection_tree import CollectionTree, TreeNode
from thoughtdesk.ui.samples.sample_detail import ANNOTATION_CHARS, SampleDetail
from thoughtdesk.ui.samples.sample_model import COLUMNS, SampleTableModel
from thoughtdesk.ui.settings.options import column_widths, save_column_widths
from thoughtdesk.ui.widgets.signals import blocked

#: Milliseconds between the last key typed in the search box and the query.
SEARCH_DELAY_MS = 150
#: The table's stretched column, and the most each other column gets when fitted to its rows
#: (a long id or gold answer is elided; the question keeps the width).
QUESTION_COLUMN = 1
COMPACT_MAX = {0: 120, 2: 100, 3: 110, 4: 60, 5: 72, 6: 84}
#: Posted to the tab to show the selected sample once the first rows of a large result painted.
_SHOW_DETAIL = QEvent.Type(QEvent.registerEventType())


class _ElideMiddle(QStyledItemDelegate):
    """Cuts a cell's text in the middle: sample ids differ at their ends."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle


class SamplesTab(QSplitter):
    """The Samples tab's widget and what it offers other features (see the module docstring)."""

    #: ``(int | None)``: the sample (primary key) shown in the detail pane.
    sample_selected = Signal(object)
    #: ``(str | None)``: the tree's current row changed (its collection's name).
    collection_selected = Signal(object)
    #: The tree and table were refreshed after a change (in the background) and none is waiting.
    browse_refreshed = Signal()

    def __init__(self, window: WindowApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("samplesTab")
        self._window = window
        # A row change whose sample pane waits for the first rows to paint (_row_changed).
        self._detail_pending = False
        self._build()
        self._search_throttle = Throttle(self, self.apply_filter, delay_ms=SEARCH_DELAY_MS)
        self.search.textChanged.connect(lambda _: self._search_throttle.request())
        self._refresh = Throttle(self, self._browse_task, delay_ms=None)
        self._refresh.idle.connect(self.browse_refreshed)
        window.data_changed.connect(self._data_changed)

    # Layout -----------------------------------------------------------------------------------

    def _build(self) -> None:
        self.tree = CollectionTree()
        self.tree.selectionModel().currentChanged.connect(lambda *_: self._tree_changed())

        self.search = QLineEdit()
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Search questions, reference and generated CoTs  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        QShortcut(QKeySequence("Escape"), self.search, self.search.clear)

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
        for label, correctness in (
            ("Any correctness", Correctness.ANY),
            ("Has a correct answer", Correctness.HAS_CORRECT),
            ("Has an incorrect answer", Correctness.HAS_INCORRECT),
            ("Not scored", Correctness.UNSCORED),
        ):
            self.correct_filter.addItem(label, correctness.value)
        for combo in (self.type_filter, self.cots_filter, self.correct_filter):
            combo.currentIndexChanged.connect(lambda _: self.apply_filter())

        self.model = SampleTableModel()
        # The first rows come at once, the full count when the worker has listed every key.
        self.model.keys_loaded.connect(self._update_count)
        self.model.keys_failed.connect(lambda message: self._window.show_status(message, 10000))
        self.table = QTableView(objectName="sampleTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setWordWrap(False)
        # Ids share long prefixes ("med_qa_train_10001"): cut at the end, rows looked the same.
        self.table.setItemDelegateForColumn(0, _ElideMiddle(self.table))
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self._setup_columns()
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
        self.detail.trajectory_requested.connect(self._open_trajectory)
        self.addWidget(self.tree)
        self.addWidget(centre)
        self.addWidget(self.detail)
        # The table gets the most: the question is what people read in it.
        self.setSizes([185, 815, 350])

    def _open_trajectory(self, cot_pk: int) -> None:
        """A guided CoT's trajectory (its module, and the run engine's, imported when first opened)."""
        from thoughtdesk.ui.trajectories.view import open_trajectory

        open_trajectory(self, self._window.library, cot_pk)

    # Columns ----------------------------------------------------------------------------------

    def _setup_columns(self) -> None:
        """The Question column takes the spare width; the others are compact: their header's
        width at least, fitted to the first rows shown once, at most :data:`COMPACT_MAX`. Widths
        the user drags are remembered (``columns/sampleTable``) and win over the fitted ones."""
        header = self.table.horizontalHeader()
        header.setMinimumSectionSize(36)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(QUESTION_COLUMN, QHeaderView.ResizeMode.Stretch)
        saved = column_widths(self.table.objectName())
        self._fitting = False
        self._columns_fitted = len(saved) == len(COLUMNS)
        for column in COMPACT_MAX:
            width = saved[column] if self._columns_fitted else header.sectionSizeHint(column)
            self.table.setColumnWidth(column, max(width, header.sectionSizeHint(column)))
        header.sectionResized.connect(self._column_resized)
        self.model.modelReset.connect(self._fit_columns_once)

    def _fit_columns_once(self) -> None:
        """Fit the compact columns to the first rows shown (once; not on every refresh, which
        would make the columns jump while the user browses)."""
        if self._columns_fitted or self.model.rowCount() == 0:
            return
        self._columns_fitted = True
        header = self.table.horizontalHeader()
        self._fitting = True  # not the user's resizing: nothing to remember
        try:
            for column, most in COMPACT_MAX.items():
                fitted = min(self.table.sizeHintForColumn(column), most)
                self.table.setColumnWidth(column, max(fitted, header.sectionSizeHint(column)))
        finally:
            self._fitting = False

    def _column_resized(self, column: int, _old: int, _new: int) -> None:
        if column == QUESTION_COLUMN or self._fitting:  # the stretched column follows the window
            return
        save_column_widths(self.table.objectName(), [self.table.columnWidth(c) for c in range(len(COLUMNS))])

    # Library ----------------------------------------------------------------------------------

    def set_library(self, library: Library) -> None:
        """Show ``library``'s collections (the window calls this before ``library_changed``)."""
        self.model.set_library(library)
        self.tree.populate(library)

    def show_first_collection(self) -> None:
        """Select the first collection unless a row is selected (after ``library_changed``)."""
        root = self.tree.model_.invisibleRootItem()
        if root.rowCount() and not self.tree.currentIndex().isValid():
            self.tree.setCurrentIndex(root.child(0, 0).index())
        self.apply_filter()

    # What other features see (SampleBrowser) ----------------------------------------------------

    def current_node(self) -> TreeNode | None:
        """The tree's current row: a collection, or a dataset or split inside it."""
        return self.tree.current_node()

    def current_collection(self) -> str | None:
        """The collection of the tree's current row."""
        node = self.tree.current_node()
        return node.collection if node is not None else None

    def current_filter(self) -> SampleFilter:
        """The samples the table shows (tree row, search and filters)."""
        node = self.tree.current_node()
        return SampleFilter(
            collection_id=node.collection_id if node else -1,
            dataset=node.dataset if node else None,
            split=node.split if node else None,
            search=self.search.text(),
            answer_type=self.type_filter.currentData(),
            has_cots=self.cots_filter.currentData(),
            correctness=Correctness(self.correct_filter.currentData() or Correctness.ANY.value),
        )

    def browse_state(self) -> BrowseState:
        """The filters and order shown."""
        sort, descending = self.model.sort_order
        return BrowseState(self.current_filter(), sort, descending)

    def current_sample_key(self) -> int | None:
        """The sample (primary key) selected in the table."""
        index = self.table.currentIndex()
        return self.model.key_at(index.row()) if index.isValid() else None

    def neighbour(self, pk: int | None, step: int) -> int | None:
        """The sample ``step`` rows after ``pk`` (the first when ``pk`` is not shown)."""
        row = self.model.row_of(pk) if pk is not None else None
        if row is None:
            return self.model.key_at(0)
        return self.model.key_at(row + step)

    def select_sample(self, pk: int) -> bool:
        """Select ``pk`` in the table as it is; False when the table does not show it."""
        row = self.model.row_of(pk)
        if row is None:
            return False
        self.table.selectRow(row)
        return True

    def open_sample(self, pk: int) -> bool:
        """Select sample ``pk``, switching collection and clearing the filters if needed."""
        row = self.model.row_of(pk)
        library = self._window.library
        if row is None and library is not None:
            collection = sample_collection_name(library, pk)
            if collection is None:
                return False
            self.search.clear()
            for combo in (self.type_filter, self.cots_filter, self.correct_filter):
                combo.setCurrentIndex(0)
            self.tree.select_collection(collection)
            self.apply_filter()
            row = self.model.row_of(pk)
        if row is None:
            return False
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))
        return True

    def show_browse(self, browse: Browse, collection: str) -> None:
        """Show counts and keys computed in a worker (after an import), ``collection`` selected."""
        self._populate_tree(browse.tree, lambda: self.tree.select_collection(collection))
        self.model.set_filter(browse.state.filter, browse.keys)
        self.apply_filter()

    # Keyboard ---------------------------------------------------------------------------------

    def move_selection(self, step: int) -> None:
        """J / K: the next or previous row."""
        rows = self.model.rowCount()
        if not rows:
            return
        row = self.table.currentIndex().row()
        row = 0 if row < 0 else max(0, min(rows - 1, row + step))
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))

    def focus_search(self) -> None:
        """Ctrl+F: the search box, its text selected."""
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    # Filtering and selection ------------------------------------------------------------------

    def apply_filter(self) -> None:
        """Query the table for the current filters now (the search box waits for a pause)."""
        self.model.set_filter(self.current_filter())
        n = self._update_count()
        if n and not self.table.currentIndex().isValid():
            self.table.selectRow(0)
        elif not n:
            self.detail.clear()

    def _tree_changed(self) -> None:
        self.apply_filter()
        self.collection_selected.emit(self.current_collection())

    def _update_count(self) -> int:
        n = self.model.rowCount()
        if self.model.complete:
            self.count_label.setText(f"{n:,} sample{'s' if n != 1 else ''}")
        else:
            self.count_label.setText(f"{n:,}+ samples (counting…)")
        return n

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex | None = None) -> None:
        if current.isValid() and not self.model.complete:
            # A large result (its keys still being listed): the table paints its first rows
            # before the sample pane is built (tens of milliseconds of widgets and layout on a
            # laptop). The event is low-priority, as Qt's repaint requests are, and posted after
            # them, so the pane follows the rows' paint, showing the row current by then.
            if not self._detail_pending:
                self._detail_pending = True
                QCoreApplication.postEvent(self, QEvent(_SHOW_DETAIL), Qt.EventPriority.LowEventPriority.value)
            return
        self._detail_pending = False
        self._show_row(current)

    def customEvent(self, event: QEvent) -> None:
        if event.type() == _SHOW_DETAIL:
            if self._detail_pending:  # not shown meanwhile by a row change on a complete table
                self._detail_pending = False
                self._show_row(self.table.currentIndex())
        else:
            super().customEvent(event)

    def _show_row(self, current: QModelIndex) -> None:
        """Show the sample on row ``current`` in the detail pane (or clear it) and say so."""
        key = self.model.key_at(current.row()) if current.isValid() else None
        library = self._window.library
        if key is None or library is None:
            self.detail.clear()
            self.sample_selected.emit(None)
            return
        self._show_detail(library, self.read_sample(library, key))
        self.sample_selected.emit(key)

    def read_sample(self, library: Library, pk: int) -> StoredSample | None:
        """Sample ``pk`` as the detail pane shows it: long annotation texts read cut (its "Show
        all" reads them whole through ``detail.whole_annotations``)."""
        self.detail.whole_annotations = partial(cot_annotations, library)
        return load_sample(library, pk, annotation_chars=ANNOTATION_CHARS)

    def _show_detail(self, library: Library, stored: StoredSample | None) -> None:
        """Show a sample with its CoTs' critiques and ratings (one query each for the sample)."""
        if stored is None:
            self.detail.show_sample(None)
            return
        critiques = critiques_for_cots(library, stored.cot_pks, for_view=True)
        ratings = explanation_ratings_for_cots(library, stored.cot_pks)
        if stored != self.detail.current or critiques != self.detail.critiques or ratings != self.detail.ratings:
            self.detail.show_sample(stored, critiques, ratings)

    # Refresh after a change -------------------------------------------------------------------

    def _data_changed(self, changes: DataChanges) -> None:
        if changes.initiator is self:
            return  # already shown (an import's result, computed in its worker)
        if changes.collections or changes.sample_contents:
            self.refresh()

    def refresh(self) -> None:
        """Recount the tree and re-query the table in a worker; ``browse_refreshed`` after."""
        self._refresh.request()

    def _browse_task(self) -> Task[Browse] | None:
        library = self._window.library
        if library is None:
            return None
        path = library.path
        state = self.browse_state()

        def work(_ctx: TaskContext) -> Browse:
            # A reader: Library.open's integrity check reads the whole file (seconds at 1M samples).
            with Library.open_reader(path) as lib:
                return browse(lib, state)

        def done(result: Browse) -> None:
            current = self._window.library
            if current is not None and current.path == path:
                self._swap_browse(result)

        def failed(error: BaseException) -> None:
            self._window.show_status(f"Could not refresh the sample list: {error}", 10000)

        return Task(work).on_success(done).on_failure(failed).owned_by(self)

    def _swap_browse(self, result: Browse) -> None:
        """Show precomputed tree counts and table keys, keeping the selected node and sample."""
        node = self.tree.current_node()
        sample = self.current_sample_key()
        self._populate_tree(result.tree, lambda: node is not None and self.tree.select_node(node))
        if self.browse_state() != result.state:
            self.apply_filter()  # the user changed the view meanwhile: query it afresh
            return
        self.model.set_filter(result.state.filter, result.keys)
        self._update_count()
        row = self.model.row_of(sample) if sample is not None else None
        library = self._window.library
        if row is not None and library is not None and sample is not None:
            with blocked(self.table.selectionModel()):
                self.table.selectRow(row)
            self.table.viewport().update()
            # Shown again only if its CoTs, answers, critiques or ratings changed.
            self._show_detail(library, self.read_sample(library, sample))
        elif self.model.rowCount():
            self.table.selectRow(0)
        else:
            self.detail.clear()

    def _populate_tree(
        self, stats: list[tuple[CollectionInfo, list[SplitStats]]], select: Callable[[], object]
    ) -> None:
        """Rebuild the tree from precomputed counts and ``select()`` a node, without the
        selection change re-querying the table (the caller sets its keys)."""
        with blocked(self.tree, self.tree.selectionModel()):  # populate keeps the one model
            self.tree.populate(self._window.library, stats)
            select()
        self.tree.viewport().update()
