"""A keyboard-only annotation session on the fixture, checking what is stored after each step."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.ui.review.conftest import REVIEWER

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
CTRL, SHIFT, ALT = (
    Qt.KeyboardModifier.ControlModifier,
    Qt.KeyboardModifier.ShiftModifier,
    Qt.KeyboardModifier.AltModifier,
)


def stored_rows(session, cot_pk: int) -> list[tuple]:
    from thoughtdesk.core.library.store import Library

    with Library.open(session.path) as library:
        return library.conn.execute(
            "SELECT author, date, key, value FROM annotation WHERE cot_pk = ? ORDER BY id", (cot_pk,)
        ).fetchall()


def test_keyboard_only_session_with_undo_and_redo(session, qtbot) -> None:
    view = session.view
    first_sample = view.stored.pk
    generated = [pk for pk in view.cot_pks if pk is not None]
    assert view.cot_pks[0] is None  # the reference comes first and is not annotated
    assert view.current_cot_pk() == generated[0]

    # 1: "Incorrect reasoning" on the first generated CoT, saved at once with author and time.
    session.key(Qt.Key.Key_1)
    assert session.review(generated[0]).labels == {"Incorrect reasoning": True}
    author, date, key, value = stored_rows(session, generated[0])[0]
    assert (author, key, value) == (REVIEWER, "Incorrect reasoning", "true") and ISO_UTC.match(date)
    assert view.panel.checks["Incorrect reasoning"].isChecked()
    assert "Incorrect reasoning" in view.compare.panels[1].note.text()

    # 1 again: ThoughtSource's unchecked box ("false"), not a deletion.
    session.key(Qt.Key.Key_1)
    assert session.review(generated[0]).labels == {"Incorrect reasoning": False}

    # j: next CoT; 2 and 4 there.
    session.key(Qt.Key.Key_J)
    assert view.current_cot_pk() == generated[1]
    session.key(Qt.Key.Key_2)
    session.key(Qt.Key.Key_4)
    assert session.review(generated[1]).labels == {"Insufficient knowledge": True, "Too verbose": True}

    # s: preferred; Alt+4: quality 4.
    session.key(Qt.Key.Key_S)
    session.key(Qt.Key.Key_4, ALT)
    review = session.review(generated[1])
    assert review.preferred is True and review.quality == 4
    assert view.panel.quality_buttons[3].isChecked() and view.panel.preferred.isChecked()

    # c: the comment editor; typed text, Ctrl+Return saves.
    session.key(Qt.Key.Key_C)
    dialog = view.edits.comment_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.keyClicks(dialog.editor, "Skips the X-ray")
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Return, CTRL)
    assert not dialog.isVisible()
    assert session.review(generated[1]).comment == "Skips the X-ray"

    # Ctrl+Z undoes the comment, then the score; Ctrl+Shift+Z redoes the score.
    session.key(Qt.Key.Key_Z, CTRL)
    assert session.review(generated[1]).comment == ""
    session.key(Qt.Key.Key_Z, CTRL)
    assert session.review(generated[1]).quality is None
    assert not any(b.isChecked() for b in view.panel.quality_buttons)
    session.key(Qt.Key.Key_Z, CTRL | SHIFT)
    assert session.review(generated[1]).quality == 4
    assert view.undo_stack.undoText().startswith("Quality 4")

    # k: back to the first CoT; the j/k keys do not move the Samples table.
    session.key(Qt.Key.Key_K)
    assert view.current_cot_pk() == generated[0]
    assert view.stored.pk == first_sample

    # n / p: next and previous sample of the Samples tab's list.
    model = session.window.samples.model
    session.key(Qt.Key.Key_N)
    second_sample = view.stored.pk
    assert second_sample == model.key_at(model.row_of(first_sample) + 1)
    session.key(Qt.Key.Key_1)  # on the new sample's first generated CoT
    new_first = view.current_cot_pk()
    assert new_first not in generated and session.review(new_first).labels == {"Incorrect reasoning": True}
    session.key(Qt.Key.Key_P)
    assert view.stored.pk == first_sample
    # What was stored on the first sample is shown again.
    assert view.current_cot_pk() == generated[0]
    assert not view.panel.checks["Incorrect reasoning"].isChecked()  # "false" after the second 1
    # Undo reaches across samples: the view first goes to the second sample and its CoT, so the
    # reviewer sees the label go; redo stays there and puts it back.
    session.key(Qt.Key.Key_Z, CTRL)
    assert session.review(new_first).labels == {}
    assert view.stored.pk == second_sample and view.current_cot_pk() == new_first
    assert not view.panel.checks["Incorrect reasoning"].isChecked()
    session.key(Qt.Key.Key_Z, CTRL | SHIFT)
    assert session.review(new_first).labels == {"Incorrect reasoning": True}
    assert view.panel.checks["Incorrect reasoning"].isChecked()
    # Undo of the first sample's change goes back there, to the CoT it was made on.
    session.key(Qt.Key.Key_Z, CTRL)  # the label on the second sample again
    session.key(Qt.Key.Key_Z, CTRL)  # quality 4 on the first sample's second CoT
    assert view.stored.pk == first_sample and view.current_cot_pk() == generated[1]
    assert session.review(generated[1]).quality is None


def test_digits_typed_in_the_comment_editor_are_text(session, qtbot) -> None:
    view = session.view
    cot_pk = view.current_cot_pk()
    session.key(Qt.Key.Key_C)
    dialog = view.edits.comment_dialog
    qtbot.keyClicks(dialog.editor, "1 j n 2")
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Z, CTRL)  # the editor's own undo, not the review's
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Escape)
    assert session.review(cot_pk).labels == {} and session.review(cot_pk).comment == ""
    assert view.current_cot_pk() == cot_pk


def test_span_label_from_a_selection(session) -> None:
    view = session.view
    index = view.compare.current_index()
    panel = view.compare.panels[index]
    text = panel.cot.text
    start = text.index("fever and cough")
    end = start + len("fever and cough")
    panel.select_range(start, end)
    session.key(Qt.Key.Key_3)
    review = session.review(view.current_cot_pk())
    assert review.labels == {}  # a span label, not a whole-CoT one
    [(key, span)] = review.spans
    assert (key, span.start, span.end, span.text) == ("Incorrect reading comprehension", start, end, "fever and cough")
    assert panel.selected_range() is None  # selection dropped so the mark shows
    assert view.panel.span_list.count() == 1 and "fever and cough" in view.panel.span_list.item(0).text()
    assert "1 span label" in panel.note.text()
    # Removing it from the list is undoable too.
    view.panel.span_list.setCurrentRow(0)
    view.panel.remove_span_button.click()
    assert session.review(view.current_cot_pk()).spans == []
    session.key(Qt.Key.Key_Z, CTRL)
    assert len(session.review(view.current_cot_pk()).spans) == 1


def test_unknown_digit_and_reference_are_refused_without_writing(session) -> None:
    view = session.view
    session.key(Qt.Key.Key_9)  # no label on 9 in the ThoughtSource set
    assert all(session.review(pk).touched is False for pk in view.cot_pks if pk is not None)
    view.compare.set_current(0)  # the reference
    view._show_current()
    session.key(Qt.Key.Key_1)
    assert not view.panel.isEnabled()
    assert all(session.review(pk).touched is False for pk in view.cot_pks if pk is not None)


def test_the_review_keys_watch_the_application_only_while_the_tab_is_shown(session, qtbot) -> None:
    # Hidden, the Review tab must cost the other tabs nothing: an application-wide event filter
    # is a Python call for every event of every widget (about 15 ms per Results redraw).
    view, keys = session.view, session.view.keys
    calls: list[int] = []
    original = keys.eventFilter

    def counting(obj, event):
        if obj is not view:  # the view's own events (Show, Hide, layout) are watched always
            calls.append(int(event.type().value))
        return original(obj, event)

    keys.eventFilter = counting  # the instance's, seen by Qt's dispatch
    session.window.tabs.setCurrentIndex(0)  # Samples
    qtbot.waitUntil(lambda: not view.isVisible())
    calls.clear()
    samples = session.window.samples
    samples.update()
    QTest.keyClick(samples, Qt.Key.Key_Down)
    QApplication.processEvents()
    assert calls == []
    QTest.keyClick(session.window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(view.isVisible)
    before = view.current_cot_pk()
    session.key(Qt.Key.Key_J)  # the review's keys work again
    assert view.current_cot_pk() != before
