"""Step labels by keyboard in the Review tab: move, rate, first error, flag, corrected step,
finish reason, undo, per reviewer, blind, time spent; what is stored is read through a second
connection after each key."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.ui.review.conftest import REVIEWER
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.store import StepReview, StepTarget, review_of
from thoughtdesk.ui.app.shortcuts import SHORTCUTS

CTRL, SHIFT, ALT = (
    Qt.KeyboardModifier.ControlModifier,
    Qt.KeyboardModifier.ShiftModifier,
    Qt.KeyboardModifier.AltModifier,
)


def stored(session, cot_pk: int, author: str = REVIEWER) -> StepReview | None:
    with Library.open(session.path) as library:
        sample_pk = library.conn.execute("SELECT sample_pk FROM generated_cot WHERE id = ?", (cot_pk,)).fetchone()[0]
        return review_of(library.conn, StepTarget(sample_pk, cot_pk), author)


def ratings(review: StepReview | None) -> list[tuple[int, int | None]]:
    return [(x.step, x.rating) for x in review.labels] if review is not None else []


def test_keyboard_step_labelling_with_undo(session, qtbot) -> None:
    view = session.view
    cot = view.current_cot_pk()
    assert cot is not None
    assert view.steps.stale  # not split until the Steps tab is shown
    # + rates the first step; the Steps tab comes to the front with the CoT's steps.
    session.key(Qt.Key.Key_Plus)
    assert view.side_tabs.currentWidget() is view.steps_panel
    assert [s.text for s in view.steps.steps] == [
        "The patient has fever and cough.",
        "Fever and cough with a consolidation point to pneumonia.",
        "So the answer is B.",
    ]
    assert ratings(stored(session, cot)) == [(0, 1)]
    assert "[+1]" in view.steps_panel.list.item(0).text()
    # Alt+Down, 0; Alt+Down, -; Alt+Up back to step 2, + there.
    session.key(Qt.Key.Key_Down, ALT)
    session.key(Qt.Key.Key_0)
    session.key(Qt.Key.Key_Down, ALT)
    session.key(Qt.Key.Key_Minus)
    assert ratings(stored(session, cot)) == [(0, 1), (1, 0), (2, -1)]
    session.key(Qt.Key.Key_Up, ALT)
    session.key(Qt.Key.Key_Plus, SHIFT)  # + as most keyboards send it: Shift held
    assert ratings(stored(session, cot)) == [(0, 1), (1, 1), (2, -1)]
    # u flags step 2; o 2 sets the finish reason "solution"; x marks step 2 the first error.
    session.key(Qt.Key.Key_U)
    session.key(Qt.Key.Key_O)
    session.key(Qt.Key.Key_2)
    review = stored(session, cot)
    assert review is not None and review.label(1).flagged is True and review.finish_reason == "solution"  # type: ignore[union-attr]
    session.key(Qt.Key.Key_X)
    review = stored(session, cot)
    assert review is not None and review.first_error == 1 and ratings(review)[1] == (1, -1)
    assert "first error" in view.steps_panel.list.item(1).text()
    # Ctrl+Z undoes the mark as one change (the rating of step 2 is +1 again); the flag stays.
    session.key(Qt.Key.Key_Z, CTRL)
    review = stored(session, cot)
    assert review is not None and review.first_error is None and ratings(review)[1] == (1, 1)
    assert review.label(1).flagged is True  # type: ignore[union-attr]
    session.key(Qt.Key.Key_Z, CTRL | SHIFT)
    assert stored(session, cot).first_error == 1  # type: ignore[union-attr]
    # Another reviewer's labels are theirs: nothing of alice's is bob's.
    assert stored(session, cot, "bob") is None
    # j: the next CoT; alice's time on the first is recorded (she labelled it).
    session.key(Qt.Key.Key_J)
    assert view.current_cot_pk() != cot
    qtbot.waitUntil(lambda: (stored(session, cot).time_ms or 0) > 0, timeout=2000)  # type: ignore[union-attr]
    # Shift+X there: no step is wrong, every step +1, finish reason solution.
    other = view.current_cot_pk()
    session.key(Qt.Key.Key_X, SHIFT)
    review = stored(session, other)
    assert review is not None and review.first_error == -1 and {r for _, r in ratings(review)} == {1}
    assert review.finish_reason == "solution"


def test_blind_labels_are_marked_blind(session) -> None:
    view = session.view
    view.set_blind(True)
    cot = view.current_cot_pk()
    session.key(Qt.Key.Key_Minus)
    review = stored(session, cot)
    assert review is not None and review.blind is True


def test_the_keys_are_in_the_shortcuts_list() -> None:
    keys = [k for k, _ in SHORTCUTS]
    for wanted in ("Review: Alt+Down / Alt+Up", "Review: - / 0 / +", "Review: x / Shift+X", "Review: u / w"):
        assert wanted in keys


def test_the_step_count_is_the_step_list_the_labels_use(qtbot, library_path) -> None:
    """Issue 25: a CoT's "N steps" counted its sentences, while its step labels go by its step
    list (core/steps/split.py): its own list (a ProcessBench import), else its paragraphs when it
    has several. Both differ from the sentence count here."""
    import json

    from tests.ui.review.conftest import Session

    own = ["The patient has fever and cough. Fever and cough with a consolidation point to pneumonia.", "So B."]
    with Library.open(library_path) as library:
        library.conn.execute("UPDATE generated_cot SET extra = ? WHERE id = 1", (json.dumps({"steps": own}),))
        library.conn.execute(
            "UPDATE generated_cot SET cot = ? WHERE id = 2",
            ("Fever and cough are present. A consolidation suggests pneumonia.\n\nThe answer is B.",),
        )
        library.conn.commit()
    session = Session(qtbot, library_path)
    try:
        view = session.view
        panels = {panel.cot.key: panel for panel in view.compare.panels}
        assert " · 2 steps" in panels[1].stats.text()  # its own list (3 sentences)
        assert " · 2 steps" in panels[2].stats.text()  # its paragraphs (3 sentences)
        assert " · 4 steps" in panels[3].stats.text()  # one paragraph: its sentences, as before
        # the Steps tab lists as many
        session.key(Qt.Key.Key_Plus)
        assert len(view.steps.steps) == 2
    finally:
        session.close()
