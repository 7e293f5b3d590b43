"""The Review tab is built on first use (issue 27, point 2), and its menu works before that:
blind mode, Undo and Redo, the entries that need the view (which build it)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.helpers.window import close_window, open_window
from tests.ui.review.conftest import REVIEWER, Session
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.registry import REVIEW_BLIND
from thoughtdesk.ui.qt import QWidget
from thoughtdesk.ui.settings.options import read


def _menu_texts(window) -> list[str]:
    return [action.text() for action in window.review.menu.actions() if not action.isSeparator()]


def test_the_window_starts_without_the_review_view_and_ctrl_2_builds_it(qtbot, library_path) -> None:
    window = open_window(qtbot, Library.open(library_path), size=(1500, 900), active=True)
    controller = window.review
    assert not controller.view_built
    page = window.tabs.widget(1)
    assert window.tabs.tabText(1) == "Review" and type(page) is QWidget  # a stand-in
    # The whole menu is there; Undo and Redo are disabled (nothing to undo yet).
    assert "&Undo" in _menu_texts(window) and "&Redo" in _menu_texts(window)
    assert not controller.undo_action.isEnabled() and not controller.redo_action.isEnabled()
    selected = window.samples.current_sample_key()
    assert selected is not None

    QTest.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert controller.view_built
    view = controller.view
    assert window.tabs.currentWidget() is view and window.tabs.indexOf(view) == 1
    assert window.tabs.tabText(1) == "Review"
    # It shows the sample the Samples tab had selected, reviewed by the user.
    qtbot.waitUntil(lambda: view.stored is not None, timeout=5000)
    assert view.stored.pk == selected and view.author == REVIEWER
    # Ctrl+1 and Ctrl+2 switch to the built view from now on.
    QTest.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is view
    close_window(window)


def test_blind_mode_chosen_before_the_tab_is_built_is_the_views(qtbot, library_path) -> None:
    window = open_window(qtbot, Library.open(library_path))
    controller = window.review
    assert not controller.blind_action.isChecked()
    controller.blind_action.setChecked(True)
    assert not controller.view_built  # the menu alone did it: kept in the settings
    assert read(REVIEW_BLIND)
    assert controller.view.blind and controller.blind_action.isChecked()
    controller.blind_action.setChecked(False)  # the view follows from now on
    assert not controller.view.blind and not read(REVIEW_BLIND)
    close_window(window)


def test_the_menus_undo_and_redo_follow_the_views_stack(qtbot, library_path) -> None:
    session = Session(qtbot, library_path)  # builds the view (Ctrl+2)
    controller, view = session.controller, session.view
    assert not controller.undo_action.isEnabled()
    cot_pk = view.current_cot_pk()
    assert cot_pk is not None
    session.key(Qt.Key.Key_1)  # toggles the first label on the current CoT
    label = next(k for k, on in session.review(cot_pk).labels.items() if on)
    assert controller.undo_action.isEnabled() and controller.undo_action.text().startswith("&Undo ")
    assert controller.undo_action.text() == f"&Undo {view.undo_stack.undoText()}"
    controller.undo_action.trigger()  # by mouse, from the menu
    assert not session.review(cot_pk).labels.get(label)
    assert not controller.undo_action.isEnabled() and controller.redo_action.isEnabled()
    assert controller.redo_action.text() == f"&Redo {view.undo_stack.redoText()}"
    controller.redo_action.trigger()
    assert session.review(cot_pk).labels.get(label)
    assert controller.undo_action.text().startswith("&Undo ") and controller.redo_action.text() == "&Redo"
    session.close()


def test_a_menu_entry_that_needs_the_view_builds_it(qtbot, library_path) -> None:
    window = open_window(qtbot, Library.open(library_path))
    controller = window.review
    assert not controller.view_built
    dialog = controller.label_set_dialog()  # Review ▸ Edit label sets… on the set in use
    assert controller.view_built and dialog.set_box.currentText() == controller.view.label_set.name
    dialog.reject()
    close_window(window)
