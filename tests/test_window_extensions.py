"""The main window's extension points that other views use (tabs, menus, signals, open_sample)."""

from __future__ import annotations

from thoughtdesk.ui.qt import QLabel, QMenu

from .test_main_window import window  # noqa: F401 - the fixture


def test_add_tab_and_shortcut_switch(window, qtbot):  # noqa: F811
    extra = QLabel("extra view")
    index = window.add_tab(extra, "Extra", "Ctrl+9")
    assert window.tabs.tabText(index) == "Extra"
    assert window.tabs.currentIndex() == 0
    window.show_tab(extra)
    assert window.tabs.currentWidget() is extra


def test_menu_is_created_once_before_help(window):  # noqa: F811
    menu = window.menu("&Tools")
    assert window.menu("&Tools") is menu
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles.index("&Tools") == titles.index("&Help") - 1
    assert isinstance(menu, QMenu)


def test_open_sample_switches_collection_and_clears_filters(window, qtbot):  # noqa: F811
    lib = window.library
    pk = lib.conn.execute("SELECT id FROM sample ORDER BY id DESC LIMIT 1").fetchone()[0]
    window.search.setText("zzzz-no-such-text")
    window._apply_filter()
    assert window.model.rowCount() == 0
    with qtbot.waitSignal(window.sample_selected, timeout=5000, check_params_cb=lambda key: key == pk):
        assert window.open_sample(pk)
    assert window.current_sample_key() == pk
    assert window.search.text() == ""
    assert window.open_sample(10**9) is False


def test_data_changed_after_notify(window, qtbot):  # noqa: F811
    with qtbot.waitSignal(window.data_changed, timeout=2000):
        window.notify_data_changed()
