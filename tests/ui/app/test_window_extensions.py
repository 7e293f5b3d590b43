"""The main window's extension points that other views use (tabs, menus, signals, open_sample)."""

from __future__ import annotations

from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.qt import QLabel, QMenu


def test_add_tab_and_shortcut_switch(window, qtbot):
    extra = QLabel("extra view")
    index = window.add_tab(extra, "Extra", "Ctrl+9")
    assert window.tabs.tabText(index) == "Extra"
    assert window.tabs.currentIndex() == 0
    window.show_tab(extra)
    assert window.tabs.currentWidget() is extra


def test_menu_is_created_once_before_help(window):
    menu = window.menu("&Tools")
    assert window.menu("&Tools") is menu
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles.index("&Tools") == titles.index("&Help") - 1
    assert isinstance(menu, QMenu)


def test_open_sample_switches_collection_and_clears_filters(window, qtbot):
    lib = window.library
    pk = lib.conn.execute("SELECT id FROM sample ORDER BY id DESC LIMIT 1").fetchone()[0]
    window.samples.search.setText("zzzz-no-such-text")
    window.samples.apply_filter()
    assert window.samples.model.rowCount() == 0
    with qtbot.waitSignal(window.sample_selected, timeout=5000, check_params_cb=lambda key: key == pk):
        assert window.open_sample(pk)
    assert window.samples.current_sample_key() == pk
    assert window.samples.search.text() == ""
    assert window.open_sample(10**9) is False


def test_data_changed_after_notify_carries_what_changed(window, qtbot):
    changes = DataChanges(annotations=True, initiator=window)
    with qtbot.waitSignal(window.data_changed, timeout=10000) as sent:
        window.notify_data_changed(changes)
    assert sent.args == [changes] and sent.args[0].initiator is window


def _tree_names(window):
    root = window.samples.tree.model_.invisibleRootItem()
    return {root.child(r, 0).text(): int(root.child(r, 1).text()) for r in range(root.rowCount())}


def test_notify_refreshes_in_the_background_and_keeps_the_selected_sample(window, qtbot):
    from tests.ui.app.test_main_window import EDGE
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.core.library.store import Library

    with Library.open(window.library.path) as other:
        import_thoughtsource(other, EDGE, collection="first")
    with qtbot.waitSignal(window.samples.browse_refreshed, timeout=10000):
        window.notify_data_changed(DataChanges.imported())
    assert window.samples.tree.select_collection("first")
    assert window.samples.model.rowCount() > 3
    window.samples.table.selectRow(3)
    chosen = window.samples.current_sample_key()
    node = window.samples.tree.current_node()
    shown = window.samples.detail.widget()

    with Library.open(window.library.path) as other:
        import_thoughtsource(other, EDGE, collection="second")
    assert "second" not in _tree_names(window)
    with qtbot.waitSignal(window.samples.browse_refreshed, timeout=10000):
        window.notify_data_changed(DataChanges.imported())
        window.notify_data_changed(DataChanges.imported())  # folded into one more refresh
    names = _tree_names(window)
    assert names["second"] == names["first"] > 3
    assert window.samples.tree.current_node() == node
    assert window.samples.current_sample_key() == chosen  # not back to row 0
    assert window.samples.table.currentIndex().row() == 3
    assert window.samples.detail.widget() is shown  # the sample did not change: not rebuilt


def test_started_tasks_belong_to_the_application_until_they_finish(window, qtbot):
    import gc

    from shiboken6 import isValid

    from thoughtdesk.ui.base.tasks import Task, running_tasks
    from thoughtdesk.ui.qt import QCoreApplication

    tasks = [Task(lambda ctx: sum(range(1000))) for _ in range(5)]
    for task in tasks:
        task.signals.succeeded.connect(lambda _r, t=task: t)  # a cycle through the slot
        task.start()
        assert task.signals.parent() is QCoreApplication.instance()
    signals = [t.signals for t in tasks]
    qtbot.waitUntil(lambda: running_tasks() == 0, timeout=10000)
    del tasks
    gc.collect()
    qtbot.waitUntil(lambda: not any(isValid(s) for s in signals), timeout=5000)
