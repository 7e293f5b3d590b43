"""The sample table: a lazily fetched ``QAbstractTableModel`` over SQL.

The model holds only the ordered keys of the matching samples; display rows are fetched a page
at a time when a view asks for them and kept in a small cache. On a new filter or order it first
reads the first :data:`FIRST_KEYS` keys (a LIMITed query, as fast for a million samples as for
a thousand), so the first rows paint at once, and lists all the keys in a worker; when they
arrive the rows after the first ones are appended (``rowsInserted``, the selection kept) and
``keys_loaded`` is emitted. Until then :attr:`SampleTableModel.complete` is False and the row
count is a lower bound. Asking for a sample not among the keys read so far (``row_of``) lists
them all at once on the calling thread, so callers never see a wrong answer.
"""

from __future__ import annotations

import html
from collections import OrderedDict
from collections.abc import Sequence

from thoughtdesk.core.library.queries import SampleFilter, SampleRow, first_sample_keys, sample_keys, sample_rows
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.visible_text import reveal
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.qt import (
    QAbstractTableModel,
    QCoreApplication,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QThreadPool,
    QTimer,
    Signal,
)

PAGE = 200
CACHED_PAGES = 50
#: Keys read on the GUI thread before the first paint (several screens of rows); a collection
#: with fewer matches is complete at once, a larger one gets the rest from a worker.
FIRST_KEYS = 1000
#: Milliseconds after a refresh when the worker starts listing the other keys if no view has
#: asked for a row by then (normally a view's paint starts it at once, after the paint).
LOAD_FALLBACK_MS = 150

COLUMNS = [
    # (header, sort key, tooltip)
    ("ID", "id", "the sample's id in its dataset"),
    ("Question", "question", "the question (first 400 characters)"),
    ("Type", "type", "the answer type"),
    ("Gold answer", "gold", "the reference answer"),
    ("CoTs", "cots", "number of generated CoTs"),
    ("Correct", "correct", "share of answers marked correct"),
    ("Annotated", "annotated", "whether any CoT has annotations"),
]
SAMPLE_KEY_ROLE = Qt.ItemDataRole.UserRole + 1
#: Posted to the model to start listing the keys once the views have painted the first rows.
_LOAD_KEYS = QEvent.Type(QEvent.registerEventType())
_ROLES = frozenset(
    {
        int(Qt.ItemDataRole.DisplayRole),
        int(Qt.ItemDataRole.ToolTipRole),
        int(Qt.ItemDataRole.TextAlignmentRole),
        int(SAMPLE_KEY_ROLE),
    }
)


class SampleTableModel(QAbstractTableModel):
    """Samples matching a :class:`SampleFilter`, sorted by one column."""

    #: All keys of the current filter and order are known (after the worker listed them).
    keys_loaded = Signal()
    #: ``(str)``: listing the keys in the worker failed; the first rows stay shown.
    keys_failed = Signal(str)

    def __init__(self, library: Library | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._library = library
        self._filter = SampleFilter(collection_id=-1)
        self._sort = "position"
        self._descending = False
        # A list, or the array('q') sample_keys returns (8 bytes a sample).
        self._keys: Sequence[int] = []
        self._complete = True
        # Bumped by every refresh: a worker's keys for an older one are thrown away.
        self._generation = 0
        # The refresh whose worker waits for a view's first data() call, and the one whose
        # start event is posted (-1: none).
        self._load_generation = -1
        self._posted_generation = -1
        self._loading: Task[object] | None = None
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._pages: OrderedDict[int, dict[int, SampleRow]] = OrderedDict()

    # Configuration ----------------------------------------------------------------------

    def set_library(self, library: Library | None) -> None:
        self._library = library
        self.refresh()

    @property
    def sample_filter(self) -> SampleFilter:
        return self._filter

    def set_filter(self, f: SampleFilter, keys: Sequence[int] | None = None) -> None:
        """Show the samples matching ``f``; ``keys`` (from ``sample_keys`` in display order,
        computed in a worker) saves the query on the GUI thread."""
        if keys is not None:
            self._filter = f
            self.refresh(keys)
        elif f != self._filter:
            self._filter = f
            self.refresh()

    @property
    def sort_order(self) -> tuple[str, bool]:
        """The sort key (a ``SORT_KEYS`` name) and whether it is descending."""
        return self._sort, self._descending

    @property
    def complete(self) -> bool:
        """True when every matching key is listed (``rowCount`` is the number of matches)."""
        return self._complete

    def refresh(self, keys: Sequence[int] | None = None) -> None:
        """Re-run the query (after an import, an edit or a filter change)."""
        self._stop_loading()
        self.beginResetModel()
        self._pages.clear()
        self._complete = True
        if keys is not None:
            self._keys = keys
        elif self._library is None or self._filter.collection_id == -1:
            self._keys = []
        else:
            self._keys = first_sample_keys(self._library, self._filter, self._sort, self._descending, FIRST_KEYS)
            self._complete = len(self._keys) < FIRST_KEYS
        self.endResetModel()
        if not self._complete:
            # Started after a view painted the first rows: a worker listing a million keys holds
            # the GIL most of the time, and a paint calls data() thousands of times, each waiting
            # for the GIL (the first rows took 0.5 s instead of 0.05 s). The first data() call
            # comes from the paint (or the layout before it); the event it posts at low priority
            # comes after the paint, as Qt's own repaint requests are low-priority events too.
            # Without a view asking (the tab hidden), a timer starts the worker.
            self._load_generation = self._generation
            QTimer.singleShot(LOAD_FALLBACK_MS, self, self._post_load)

    def _post_load(self) -> None:
        """Start listing the keys after the events already waiting (once per refresh)."""
        if self._load_generation == self._generation:
            self._load_generation = -1
            self._posted_generation = self._generation
            QCoreApplication.postEvent(self, QEvent(_LOAD_KEYS), Qt.EventPriority.LowEventPriority.value)

    def customEvent(self, event: QEvent) -> None:
        if event.type() == _LOAD_KEYS:
            if self._posted_generation == self._generation:  # not an older refresh's event
                self._posted_generation = -1
                self._start_loading(self._generation)
        else:
            super().customEvent(event)

    def load_all_keys(self) -> None:
        """List every key now, on this thread (when a caller needs a row beyond the first ones)."""
        if self._complete or self._library is None:
            return
        self._stop_loading()
        self._append_keys(sample_keys(self._library, self._filter, self._sort, self._descending))

    def _start_loading(self, generation: int) -> None:
        if generation != self._generation or self._library is None:
            return  # another refresh came first
        path = self._library.path
        f, sort, descending = self._filter, self._sort, self._descending

        def work(ctx: TaskContext) -> Sequence[int]:
            with Library.open_reader(path) as lib:
                return sample_keys(lib, f, sort, descending, cancelled=ctx.cancelled)

        def done(keys: Sequence[int]) -> None:
            if generation == self._generation:
                self._loading = None
                self._append_keys(keys)

        def failed(error: BaseException) -> None:
            if generation == self._generation:
                self._loading = None
                self.keys_failed.emit(f"Could not list all matching samples in {path}: {error}")

        # Not owned_by(self): a model deleted between the task's result and its ``finished``
        # crashed PySide in _release. The callbacks keep this model alive instead, and a
        # refresh (a new generation) makes them do nothing.
        # A pool of its own: listing keys takes well under a second, and must not queue behind
        # an import or a run's long work in the global pool (two threads on a 2-core laptop).
        self._loading = Task(work).on_success(done).on_failure(failed).start(self._pool)

    def _stop_loading(self) -> None:
        self._generation += 1
        if self._loading is not None:
            self._loading.cancel()
            self._loading = None

    def _append_keys(self, keys: Sequence[int]) -> None:
        """Show all the keys: the rows after the ones shown are inserted when the shown ones are
        their start (the usual case); otherwise (a write in between) the table is reset."""
        shown = len(self._keys)
        if len(keys) >= shown and list(keys[:shown]) == list(self._keys):
            # The page holding the last shown row may be cut short at it.
            self._pages.pop(shown // PAGE, None)
            if len(keys) > shown:
                self.beginInsertRows(QModelIndex(), shown, len(keys) - 1)
                self._keys = keys
                self.endInsertRows()
        else:
            self.beginResetModel()
            self._pages.clear()
            self._keys = keys
            self.endResetModel()
        self._complete = True
        self.keys_loaded.emit()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort = COLUMNS[column][1] if 0 <= column < len(COLUMNS) else "position"
        self._descending = order == Qt.SortOrder.DescendingOrder
        self.refresh()

    # Access -----------------------------------------------------------------------------

    def key_at(self, row: int) -> int | None:
        """The sample (primary key) on ``row``; None outside the table."""
        return self._keys[row] if 0 <= row < len(self._keys) else None

    def row_of(self, key: int) -> int | None:
        """The row showing sample ``key``; None when the table does not show it."""
        try:
            return self._keys.index(key)
        except ValueError:
            if self._complete:
                return None
        self.load_all_keys()
        try:
            return self._keys.index(key)
        except ValueError:
            return None

    def sample_row(self, row: int) -> SampleRow | None:
        """The display row on ``row`` (fetched with its page of rows when not cached)."""
        if not 0 <= row < len(self._keys) or self._library is None:
            return None
        page_no = row // PAGE
        page = self._pages.get(page_no)
        if page is None:
            start = page_no * PAGE
            keys = list(self._keys[start : start + PAGE])
            page = sample_rows(self._library, keys)
            self._pages[page_no] = page
            if len(self._pages) > CACHED_PAGES:
                self._pages.popitem(last=False)
        else:
            self._pages.move_to_end(page_no)
        return page.get(self._keys[row])

    # Qt model interface -----------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._keys)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return COLUMNS[section][0]
            if role == Qt.ItemDataRole.ToolTipRole:
                return COLUMNS[section][2]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        # A view asks for a dozen roles a cell each time it paints; only these few have answers,
        # so the others return before looking up the row.
        if not index.isValid() or role not in _ROLES:
            return None
        if self._load_generation == self._generation:
            self._post_load()  # a view is painting the first rows: list the others after it
        row = self.sample_row(index.row())
        if row is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, column)
        if role == Qt.ItemDataRole.ToolTipRole and column in (0, 1, 3):
            # Qt guesses whether a tooltip is rich text: escaped in a paragraph, it never is.
            text = (row.sample_id, row.question, row.gold)[(0, 1, 3).index(column)]
            return f"<p>{html.escape(reveal(text), quote=False)}</p>"
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (4, 5, 6):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == SAMPLE_KEY_ROLE:
            return row.pk
        return None

    @staticmethod
    def _display(row: SampleRow, column: int) -> str:
        # Cells come from bounded prefixes of the texts (queries.sample_rows), never whole texts.
        if column == 0:
            return reveal(row.sample_id)
        if column == 1:
            return reveal(" ".join(row.question.split()))
        if column == 2:
            return row.type
        if column == 3:
            return reveal(row.gold)
        if column == 4:
            return str(row.n_cots)
        if column == 5:
            share = row.share_correct
            return "" if share is None else f"{share:.0%}"
        if column == 6:
            return "yes" if row.n_annotations else ""
        return ""
