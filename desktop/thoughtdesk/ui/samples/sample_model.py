"""The sample table: a lazily fetched ``QAbstractTableModel`` over SQL.

The model holds only the ordered keys of the matching samples; display rows are fetched a page
at a time when a view asks for them and kept in a small cache, so a 200,000-sample collection
opens as fast as a 20-sample one.
"""

from __future__ import annotations

import html
from collections import OrderedDict
from collections.abc import Sequence

from thoughtdesk.core.library.queries import SampleFilter, SampleRow, sample_keys, sample_rows
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.visible_text import reveal
from thoughtdesk.ui.qt import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

PAGE = 200
CACHED_PAGES = 50

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


class SampleTableModel(QAbstractTableModel):
    """Samples matching a :class:`SampleFilter`, sorted by one column."""

    def __init__(self, library: Library | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._library = library
        self._filter = SampleFilter(collection_id=-1)
        self._sort = "position"
        self._descending = False
        # A list, or the array('q') sample_keys returns (8 bytes a sample).
        self._keys: Sequence[int] = []
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

    def refresh(self, keys: Sequence[int] | None = None) -> None:
        """Re-run the query (after an import, an edit or a filter change)."""
        self.beginResetModel()
        self._pages.clear()
        if keys is not None:
            self._keys = keys
        elif self._library is None or self._filter.collection_id == -1:
            self._keys = []
        else:
            self._keys = sample_keys(self._library, self._filter, self._sort, self._descending)
        self.endResetModel()

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
        if not index.isValid():
            return None
        row = self.sample_row(index.row())
        if row is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, column)
        if role == Qt.ItemDataRole.ToolTipRole and column in (1, 3):
            # Qt guesses whether a tooltip is rich text: escaped in a paragraph, it never is.
            return f"<p>{html.escape(reveal(row.question if column == 1 else row.gold), quote=False)}</p>"
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
