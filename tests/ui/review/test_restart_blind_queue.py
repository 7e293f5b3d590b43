"""Span labels after a restart, blind mode, review queues with progress and resume."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QPlainTextEdit

from tests.helpers.window import last_message
from tests.ui.review.conftest import COLLECTION, REVIEWER, Session, shown_pk
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import QueueFilter, blind_order

MODELS = ("gpt-4", "gpt-3.5-turbo", "llama-3-8b")


def mark_backgrounds(text_view) -> dict[str, str]:
    """Underlined (span-marked) fragments of a document: text -> background colour."""
    found: dict[str, str] = {}
    block = text_view.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.charFormat().fontUnderline():
                found[fragment.text()] = fragment.charFormat().background().color().name()
            iterator += 1
        block = block.next()
    return found


def test_span_labels_survive_a_restart(qtbot, library_path) -> None:
    first = Session(qtbot, library_path)
    view = first.view
    sample_pk = shown_pk(view)
    panel = view.compare.panels[view.compare.current_index()]
    start = panel.cot.text.index("consolidation")
    panel.select_range(start, start + len("consolidation"))
    first.key(Qt.Key.Key_2)
    cot_pk = view.current_cot_pk()
    assert mark_backgrounds(panel.text_view) == {"consolidation": mark_backgrounds(panel.text_view)["consolidation"]}
    first.close()

    second = Session(qtbot, library_path)
    view = second.view
    if shown_pk(view) != sample_pk:
        view.show_sample(sample_pk)
    index = view.cot_pks.index(cot_pk)
    view.compare.set_current(index)
    view._show_current()
    panel = view.compare.panels[index]
    view.compare.paint_all()
    marks = mark_backgrounds(panel.text_view)
    assert list(marks) == ["consolidation"]
    assert panel.text_view.document().toPlainText() == panel.cot.text  # the mark adds no text
    assert "Insufficient knowledge" in view.panel.span_list.item(0).text()
    assert (panel.marks[0].start, panel.marks[0].end) == (start, start + len("consolidation"))
    second.close()


def visible_texts(view) -> list[str]:
    texts = [label.text() for label in view.findChildren(QLabel) if label.isVisibleTo(view)]
    texts += [edit.toPlainText() for edit in view.findChildren(QPlainTextEdit) if edit.isVisibleTo(view)]
    for box in view.findChildren(QComboBox):
        if box.isVisibleTo(view):
            texts += [box.itemText(i) for i in range(box.count())]
    return texts


def test_blind_mode_hides_models_and_uses_the_reviewers_order(session) -> None:
    view = session.view
    assert any(model in text for text in visible_texts(view) for model in MODELS)  # open review shows them
    session.controller.blind_action.setChecked(True)
    assert view.blind
    texts = visible_texts(view)
    assert not any(model in text for text in texts for model in MODELS)
    assert not any("kojima" in text or "zhou" in text for text in texts)  # prompt identity hidden too
    assert not view.compare.model_filter.isVisibleTo(view)
    generated = [pk for pk in view.cot_pks if pk is not None]
    assert generated == blind_order(generated, REVIEWER, shown_pk(view))
    titles = [p.title.text() for p in view.compare.panels[1:]]
    assert titles == ["CoT 1", "CoT 2", "CoT 3"]
    # Annotating in blind mode writes to the right CoT (the current one stays current on switching).
    view.compare.set_current(1)
    session.key(Qt.Key.Key_J)
    assert view.current_cot_pk() == generated[1]
    session.key(Qt.Key.Key_1)
    assert session.review(generated[1]).labels == {"Incorrect reasoning": True}
    assert "Incorrect reasoning" in view.compare.panels[2].note.text()
    session.controller.blind_action.setChecked(False)
    assert any(model in text for text in visible_texts(view) for model in MODELS)


def test_queue_progress_and_resume_after_restart(qtbot, library_path) -> None:
    first = Session(qtbot, library_path)
    queue = first.controller.create_queue(
        "MedQA errors", COLLECTION, QueueFilter(dataset="med_qa", has_incorrect=True), size=3, seed=11
    )
    assert queue is not None
    view = first.view
    with Library.open(library_path) as library:
        rows = dict(library.conn.execute("SELECT id, dataset FROM sample").fetchall())
        incorrect = {r[0] for r in library.conn.execute("SELECT id FROM sample WHERE n_incorrect > 0")}
    assert len(queue.sample_pks) == 3 and all(rows[pk] == "med_qa" and pk in incorrect for pk in queue.sample_pks)
    assert shown_pk(view) == queue.sample_pks[0]
    assert view.progress.text() == "Queue “MedQA errors”: sample 1 of 3 · 0 / 3 done"
    first.key(Qt.Key.Key_1)
    first.key(Qt.Key.Key_N)
    assert shown_pk(view) == queue.sample_pks[1]
    assert view.progress.text() == "Queue “MedQA errors”: sample 2 of 3 · 1 / 3 done"
    # Choosing a sample outside the queue in the Samples tab does not leave the queue.
    outside = next(pk for pk in rows if pk not in queue.sample_pks)
    first.window.sample_selected.emit(outside)
    assert shown_pk(view) == queue.sample_pks[1]
    first.close()

    second = Session(qtbot, library_path)  # a restart: the queue resumes where it was left
    view = second.view
    qtbot.waitUntil(lambda: view.queue is not None and shown_pk(view) == queue.sample_pks[1], timeout=5000)
    assert view.progress.text() == "Queue “MedQA errors”: sample 2 of 3 · 1 / 3 done"
    second.key(Qt.Key.Key_N)
    second.key(Qt.Key.Key_N)
    assert view.progress.text() == "Queue “MedQA errors”: sample 3 of 3 · 3 / 3 done"
    second.key(Qt.Key.Key_P)
    assert shown_pk(view) == queue.sample_pks[1]
    second.controller.leave_queue()
    assert not view.progress.isVisible() and view.queue is None
    second.close()


def test_a_queue_nothing_matches_is_reported(session) -> None:
    assert session.controller.create_queue("none", COLLECTION, QueueFilter(dataset="no_such"), 5, 1) is None
    box = last_message(session.window)
    assert box.isVisible() and "no sample" in box.text()
    assert session.view.queue is None


def test_a_blind_queue_resumed_at_start_up_turns_blind_mode_on_everywhere(qtbot, library_path) -> None:
    from thoughtdesk.core.settings.registry import REVIEW_BLIND
    from thoughtdesk.ui.settings.options import read, write

    first = Session(qtbot, library_path)
    first.controller.create_queue("blind", COLLECTION, QueueFilter(dataset="med_qa"), size=2, seed=3, blind=True)
    assert first.view.blind and first.controller.blind_action.isChecked()
    first.close()
    write(REVIEW_BLIND, False)  # blind mode was off when the app last closed

    second = Session(qtbot, library_path)
    qtbot.waitUntil(lambda: second.view.queue is not None, timeout=5000)
    assert second.view.blind
    assert second.controller.blind_action.isChecked()  # the menu says so too
    assert read(REVIEW_BLIND)
    second.close()


def test_leaving_a_blind_queue_gives_back_the_blind_mode_of_before(qtbot, library_path) -> None:
    from thoughtdesk.core.settings.registry import REVIEW_BLIND
    from thoughtdesk.ui.settings.options import read

    session = Session(qtbot, library_path)
    controller, view = session.controller, session.view
    assert not view.blind
    controller.create_queue("blind", COLLECTION, QueueFilter(dataset="med_qa"), size=2, seed=3, blind=True)
    assert view.blind and controller.blind_action.isChecked()
    controller.leave_queue()
    assert view.queue is None
    assert not view.blind and not controller.blind_action.isChecked()  # was on after leaving (issue 16)
    assert not read(REVIEW_BLIND)
    # A reviewer who worked blind before the queue still does after it.
    controller.blind_action.setChecked(True)
    controller.create_queue("blind 2", COLLECTION, QueueFilter(dataset="med_qa"), size=2, seed=4, blind=True)
    controller.leave_queue()
    assert view.blind and controller.blind_action.isChecked()
    session.close()


def test_the_queue_progress_is_shown_whole_on_a_laptop(qtbot, library_path) -> None:
    session = Session(qtbot, library_path)
    session.window.resize(1350, 690)
    queue = session.controller.create_queue(
        "Cardiology residents, second pass", COLLECTION, QueueFilter(dataset="med_qa"), size=3, seed=2
    )
    assert queue is not None
    qtbot.wait(50)
    progress = session.view.progress
    text = progress.text()
    assert text.startswith("Queue “Cardiology residents, second pass”: sample 1 of 3")
    # Was squeezed beside the reviewer status into a few characters per line.
    assert progress.width() >= progress.fontMetrics().horizontalAdvance(text)
    assert progress.height() < 2 * progress.fontMetrics().lineSpacing()
    session.close()
