"""User-defined label sets through Review ▸ Edit label sets…, and the author following Settings."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.helpers.widgets import cell
from tests.ui.review.conftest import REVIEWER, Session
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import label_set, label_sets
from thoughtdesk.ui.review.label_set_editor import COLOUR_COLUMN, KEY_COLUMN, NAME_COLUMN, LabelSetEditor
from thoughtdesk.ui.settings.options import AppSettings, load_settings, save_settings


def _menu_action(session, text: str):
    return next(a for a in session.controller.menu.actions() if a.text().replace("&", "") == text)


def _set_cell(dialog: LabelSetEditor, row: int, column: int, text: str) -> None:
    cell(dialog.table, row, column).setText(text)


def test_a_copy_of_the_default_set_with_a_new_label_is_used_by_the_keys(session, qtbot) -> None:
    view = session.view
    _menu_action(session, "Edit label sets…").trigger()
    dialog = session.window.findChildren(LabelSetEditor)[-1]
    assert dialog.isVisible()
    # The built-in default set is shown as a copy to save under a new name.
    assert dialog.set_box.currentText() == "ThoughtSource"
    assert dialog.name.text() == "ThoughtSource (my copy)" and not dialog.delete_button.isEnabled()
    assert dialog.table.rowCount() == 4
    row = dialog.add_label()
    assert dialog.table.item(row, KEY_COLUMN).text() == "5"  # the first free number key
    _set_cell(dialog, row, NAME_COLUMN, "Missed <b>diagnosis</b> & co")
    dialog.name.setText("Ward 7")
    assert dialog.save() and not dialog.isVisible()

    # Stored, chosen in the panel, and number key 5 toggles it on the current CoT.
    with Library.open(session.path) as library:
        saved = label_set(library, "Ward 7")
    assert [lb.name for lb in saved.labels][-1] == "Missed <b>diagnosis</b> & co" and not saved.builtin
    assert view.label_set.name == "Ward 7" and view.panel.set_box.currentText() == "Ward 7"
    check = view.panel.checks["Missed <b>diagnosis</b> & co"]
    assert check.text() == "5  Missed <b>diagnosis</b> && co"  # plain text: '&' is not a mnemonic
    session.key(Qt.Key.Key_5)
    assert session.review(view.current_cot_pk()).labels == {"Missed <b>diagnosis</b> & co": True}
    assert check.isChecked()


def test_bad_labels_are_refused_in_the_dialog_and_nothing_is_saved(session, qtbot) -> None:
    dialog = session.controller.label_set_dialog()
    dialog.name.setText("Broken")
    _set_cell(dialog, 1, KEY_COLUMN, "1")  # the same key as label 1
    assert not dialog.save() and dialog.isVisible()
    assert "share a shortcut" in dialog.error.text()
    _set_cell(dialog, 1, KEY_COLUMN, "2")
    _set_cell(dialog, 2, COLOUR_COLUMN, "red")
    assert not dialog.save() and "label 3 (Incorrect reading comprehension): the colour" in dialog.error.text()
    _set_cell(dialog, 2, COLOUR_COLUMN, "#123456")
    dialog.name.setText("Clinical")  # a built-in set's name
    assert not dialog.save() and "already a built-in set called “Clinical”" in dialog.error.text()
    with Library.open(session.path) as library:
        assert [s.name for s in label_sets(library)] == ["ThoughtSource", "Clinical"]


def test_rename_keeps_label_keys_and_delete_falls_back(session, qtbot) -> None:
    view = session.view
    dialog = session.controller.label_set_dialog()
    dialog.new_set()
    _set_cell(dialog, 0, NAME_COLUMN, "Unsafe")
    dialog.name.setText("Mine")
    assert dialog.save()
    session.key(Qt.Key.Key_1)
    cot_pk = view.current_cot_pk()
    assert session.review(cot_pk).labels == {"Unsafe": True}

    # Renaming the set and its label: same set (no copy left behind), the key stays "Unsafe".
    dialog = session.controller.label_set_dialog()
    assert dialog.set_box.currentText() == "Mine" and dialog.delete_button.isEnabled()
    _set_cell(dialog, 0, NAME_COLUMN, "Unsafe advice")
    dialog.name.setText("Mine, renamed")
    assert dialog.save()
    with Library.open(session.path) as library:
        assert [s.name for s in label_sets(library)] == ["ThoughtSource", "Clinical", "Mine, renamed"]
        [label] = label_set(library, "Mine, renamed").labels
    assert (label.key, label.name) == ("Unsafe", "Unsafe advice")
    assert view.panel.checks["Unsafe"].text() == "1  Unsafe advice" and view.panel.checks["Unsafe"].isChecked()

    # Deleting it: the annotation stays, the view falls back to a set that exists.
    dialog = session.controller.label_set_dialog()
    assert dialog.delete_current(confirm=False)
    assert view.label_set.name == "ThoughtSource"
    assert session.review(cot_pk).labels == {"Unsafe": True}


def test_a_name_changed_in_settings_is_the_author_of_the_next_change(session, qtbot) -> None:
    view = session.view
    cot_pk = view.current_cot_pk()
    settings = load_settings()
    assert settings.user_name == REVIEWER
    dialog = session.window.settings.open_settings()
    dialog.forms.identity.name.setText("Dr Bob")
    dialog.accept()
    assert view.author == "Dr Bob" and "Reviewer: Dr Bob" in view.status.text()
    session.key(Qt.Key.Key_1)
    assert session.review(cot_pk, author="Dr Bob").labels == {"Incorrect reasoning": True}
    assert session.review(cot_pk, author=REVIEWER).labels == {}
    save_settings(AppSettings(user_name=REVIEWER))  # leave the name as the other tests expect


def test_label_sets_survive_a_restart(qtbot, library_path) -> None:
    first = Session(qtbot, library_path)
    dialog = first.controller.label_set_dialog()
    dialog.set_box.setCurrentText("Clinical")
    assert dialog.name.text() == "Clinical (my copy)" and dialog.table.rowCount() == 6
    dialog.remove_label()  # nothing current yet: nothing removed
    dialog.table.setCurrentCell(5, NAME_COLUMN)
    dialog.move_label(-1)
    dialog.table.setCurrentCell(0, NAME_COLUMN)
    dialog.remove_label()
    assert dialog.save()
    first.close()
    second = Session(qtbot, library_path)
    try:
        assert second.view.label_set is not None
        assert second.view.label_set.name == "Clinical (my copy)"  # remembered in the settings
        names = [lb.name for lb in second.view.label_set.labels]
        assert names == [
            "Hallucinated fact",
            "Outdated guideline",
            "Missed contraindication",
            "Incorrect reasoning",
            "Wrong dosage",
        ]
    finally:
        second.close()
