"""The Samples table on a laptop (issue 16, point 2): the question takes the spare width, the
other columns stay compact with their headers whole, and widths the user sets are remembered."""

from __future__ import annotations

from tests.helpers.window import close_window
from thoughtdesk.ui.samples.sample_model import COLUMNS
from thoughtdesk.ui.samples.tab import COMPACT_MAX, QUESTION_COLUMN
from thoughtdesk.ui.settings.options import column_widths
from thoughtdesk.ui.widgets.sizing import LAPTOP_CLIENT


def shown_table(qtbot, window):
    tab = window.samples
    qtbot.waitUntil(lambda: tab.model.rowCount() > 0, timeout=10000)
    qtbot.wait(50)
    return tab.table


def test_the_question_takes_the_spare_width_and_no_header_is_cut(make_window, window_library, qtbot):
    window = make_window(window_library, size=(LAPTOP_CLIENT.width(), LAPTOP_CLIENT.height()))
    table = shown_table(qtbot, window)
    header = table.horizontalHeader()
    widths = [table.columnWidth(c) for c in range(len(COLUMNS))]
    question = widths[QUESTION_COLUMN]
    # Was about 50 px at the default size: now the widest column by far.
    assert question >= 240, widths
    assert question == max(widths) and question >= 0.3 * table.viewport().width(), widths
    for column, (title, _key, _tip) in enumerate(COLUMNS):
        assert widths[column] >= header.sectionSizeHint(column), f"the {title!r} header is cut: {widths}"
        if column != QUESTION_COLUMN:
            assert widths[column] <= max(COMPACT_MAX[column], header.sectionSizeHint(column)), (title, widths)
    # The question column fills the table: no empty strip, no horizontal scrolling.
    assert sum(widths) <= table.viewport().width() + 1
    assert table.horizontalScrollBar().maximum() == 0
    # The first question is readable, not "…".
    first = table.model().index(0, QUESTION_COLUMN).data()
    shown = table.fontMetrics().elidedText(first, table.textElideMode(), question - 8)
    assert len(shown) >= 30, shown


def test_column_widths_set_by_the_user_are_remembered(make_window, window_library, qtbot):
    window = make_window(window_library, size=(1350, 690))
    table = shown_table(qtbot, window)
    assert column_widths("sampleTable") == []  # nothing saved until the user resizes
    table.horizontalHeader().resizeSection(0, 230)  # as dragging the header's edge does
    table.horizontalHeader().resizeSection(3, 61)
    assert column_widths("sampleTable")[0] == 230
    close_window(window)

    again = make_window(window_library, size=(1350, 690))
    table = shown_table(qtbot, again)
    assert table.columnWidth(0) == 230 and table.columnWidth(3) >= 61
    assert table.columnWidth(QUESTION_COLUMN) >= 120  # still stretched over what is left


def test_cut_ids_keep_their_ends_and_show_whole_in_a_tooltip(make_window, window_library, qtbot):
    # Issue 28: ids like "med_qa_train_10001" and "med_qa_train_10002" were cut at the end, so
    # the rows looked the same. The id column cuts in the middle; the tooltip has the whole id.
    from thoughtdesk.ui.qt import QStyleOptionViewItem, Qt

    window = make_window(window_library, size=(LAPTOP_CLIENT.width(), LAPTOP_CLIENT.height()))
    table = shown_table(qtbot, window)
    index = table.model().index(0, 0)
    option = QStyleOptionViewItem()
    option.textElideMode = table.textElideMode()  # as the view sets it before its delegate
    assert option.textElideMode == Qt.TextElideMode.ElideRight
    table.itemDelegateForColumn(0).initStyleOption(option, index)
    assert option.textElideMode == Qt.TextElideMode.ElideMiddle
    assert option.text == index.data()
    tip = index.data(Qt.ItemDataRole.ToolTipRole)
    assert tip == f"<p>{index.data()}</p>"
    assert table.itemDelegateForColumn(3) is None  # the other columns as before (cut at the end)
