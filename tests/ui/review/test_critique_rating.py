"""Critiques in the Review tab and keyboard-first human rating: what is stored after each key,
undo and redo restoring exactly the previous rating, blind mode, flaw quotes marked in the CoT."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.helpers.widgets import content
from tests.ui.review.conftest import REVIEWER, Session
from thoughtdesk.core.critiques import (
    DIMENSIONS,
    ELEMENTS,
    Critique,
    ElementOutcome,
    ParsedCritique,
    add_critique,
    set_explanation_rating,
)
from thoughtdesk.core.library.store import Library

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
MODELS = ("critic-a", "critic-b", "critic-c")


def seed_critiques(path) -> None:
    """Three critiques of every generated CoT; the first quotes the CoT's first words."""
    with Library.open(path) as library:
        cots = library.conn.execute("SELECT id, cot FROM generated_cot ORDER BY id").fetchall()
        with library.transaction() as conn:
            for cot_pk, text in cots:
                words = " ".join((text or "").split()[:4])
                for number, model in enumerate(MODELS):
                    flaw = f'The explanation says "{words.upper()}" without support' if number == 0 else "None"
                    parsed = ParsedCritique(
                        flaw,
                        DIMENSIONS[number],
                        f"General feedback {number}",
                        f"Specific feedback {number}",
                        float(number + 1),
                        {e: ElementOutcome("parsed") for e in ELEMENTS},
                    )
                    add_critique(conn, Critique(cot_pk, model, f"raw {number}", parsed))


@pytest.fixture
def rated_session(qtbot, library_path):
    seed_critiques(library_path)
    opened = Session(qtbot, library_path)
    yield opened
    opened.close()


def explanation_rows(session, cot_pk: int) -> list[tuple]:
    with Library.open(session.path) as library:
        return library.conn.execute(
            "SELECT author, score, dimensions FROM explanation_rating WHERE cot_pk = ? ORDER BY id", (cot_pk,)
        ).fetchall()


def critique_rows(session, cot_pk: int) -> list[tuple]:
    with Library.open(session.path) as library:
        return library.conn.execute(
            "SELECT c.critique_model, r.author, r.score FROM critique_rating r JOIN critique c ON r.critique_pk = c.id "
            "WHERE c.cot_pk = ? ORDER BY r.id",
            (cot_pk,),
        ).fetchall()


def test_keyboard_rating_with_undo_and_redo(rated_session) -> None:
    session, view = rated_session, rated_session.view
    cot = view.current_cot_pk()
    assert cot is not None
    panel = view.rating_panel
    assert view.side_tabs.currentIndex() == 0  # the Annotations tab: the rating panel waits

    # e 4: explanation score 4, saved at once under the Settings user name.
    session.key(Qt.Key.Key_E)
    assert panel.hint.text().startswith("Explanation score") and view.side_tabs.currentIndex() == 1
    assert [c.critique_model for c in panel.critique_list.critiques] == list(MODELS)
    session.key(Qt.Key.Key_4)
    assert explanation_rows(session, cot) == [(REVIEWER, 4, "[]")]
    assert panel.score_buttons[4].isChecked() and panel.hint.isHidden()
    assert "my rating 4/5" in view.compare.panels[view.compare.current_index()].note.text()

    # d 5 and d 1: two flaw dimensions, in the paper's order.
    for digit in (Qt.Key.Key_5, Qt.Key.Key_1):
        session.key(Qt.Key.Key_D)
        session.key(digit)
    assert explanation_rows(session, cot) == [(REVIEWER, 4, '["misunderstanding", "incorrect_reasoning"]')]
    assert panel.dimension_checks["incorrect_reasoning"].isChecked()

    # f: the second critique; r 2 rates it; f, r 3 the third; r Delete clears that again.
    session.key(Qt.Key.Key_F)
    session.key(Qt.Key.Key_R)
    session.key(Qt.Key.Key_2)
    session.key(Qt.Key.Key_F)
    session.key(Qt.Key.Key_R)
    session.key(Qt.Key.Key_3)
    assert critique_rows(session, cot) == [("critic-b", REVIEWER, 2), ("critic-c", REVIEWER, 3)]
    assert "your rating: 3/3" in panel.critique_list.cards[2].ratings.text()
    session.key(Qt.Key.Key_R)
    session.key(Qt.Key.Key_Delete)
    assert critique_rows(session, cot) == [("critic-b", REVIEWER, 2)]

    # Undo restores exactly the previous ratings, step by step; the critique regains focus.
    session.key(Qt.Key.Key_Z, CTRL)
    assert critique_rows(session, cot) == [("critic-b", REVIEWER, 2), ("critic-c", REVIEWER, 3)]
    session.key(Qt.Key.Key_Z, CTRL)
    session.key(Qt.Key.Key_Z, CTRL)
    assert critique_rows(session, cot) == []
    session.key(Qt.Key.Key_Z, CTRL)  # d 1
    assert explanation_rows(session, cot) == [(REVIEWER, 4, '["incorrect_reasoning"]')]
    session.key(Qt.Key.Key_Z, CTRL)
    session.key(Qt.Key.Key_Z, CTRL)  # e 4: no rating at all again
    assert explanation_rows(session, cot) == []
    assert not any(b.isChecked() for b in panel.score_buttons)

    # Redo twice: the score and the first dimension come back.
    session.key(Qt.Key.Key_Z, CTRL | SHIFT)
    session.key(Qt.Key.Key_Z, CTRL | SHIFT)
    assert explanation_rows(session, cot) == [(REVIEWER, 4, '["incorrect_reasoning"]')]

    # e Delete clears the score, the dimension stays; d 0 clears the dimensions: the row goes.
    session.key(Qt.Key.Key_E)
    session.key(Qt.Key.Key_Delete)
    assert explanation_rows(session, cot) == [(REVIEWER, None, '["incorrect_reasoning"]')]
    session.key(Qt.Key.Key_D)
    session.key(Qt.Key.Key_0)
    assert explanation_rows(session, cot) == []


def test_escape_cancels_a_prefix_and_other_keys_still_work(rated_session) -> None:
    session, view = rated_session, rated_session.view
    cot = view.current_cot_pk()
    messages: list[str] = []
    view.message.connect(messages.append)
    session.key(Qt.Key.Key_E)
    session.key(Qt.Key.Key_7)  # out of range: said, nothing stored
    session.key(Qt.Key.Key_R)
    session.key(Qt.Key.Key_9)
    assert messages[-2:] == ["An explanation score is 0–5, not 7", "A critique rating is 0–3, not 9"]
    assert explanation_rows(session, cot) == [] and critique_rows(session, cot) == []
    session.key(Qt.Key.Key_E)
    session.key(Qt.Key.Key_Escape)
    session.key(Qt.Key.Key_3)  # now a label toggle, not a score
    assert explanation_rows(session, cot) == []
    assert session.review(cot).labels
    session.key(Qt.Key.Key_E)
    session.key(Qt.Key.Key_J)  # another review key: the prefix is cancelled and j moves on
    assert view.current_cot_pk() != cot and view.keys.pending is None
    assert view.rating_panel.hint.isHidden()
    assert explanation_rows(session, cot) == []


def test_undo_of_a_rating_on_another_sample_shows_that_sample_first(rated_session) -> None:
    session, view = rated_session, rated_session.view
    first_sample, cot = view.stored.pk, view.current_cot_pk()
    session.key(Qt.Key.Key_E)
    session.key(Qt.Key.Key_2)
    session.key(Qt.Key.Key_N)
    assert view.stored.pk != first_sample
    session.key(Qt.Key.Key_Z, CTRL)
    assert view.stored.pk == first_sample and view.current_cot_pk() == cot
    assert explanation_rows(session, cot) == []


def test_flaw_quotes_are_marked_and_blind_mode_hides_critique_models(rated_session) -> None:
    session, view = rated_session, rated_session.view
    index = view.compare.current_index()
    panel = view.compare.panels[index]
    flaws = [m for m in panel.marks if m.flaw]
    text = panel.cot.text
    assert len(flaws) == 1 and flaws[0].start == 0
    assert " ".join(text[flaws[0].start : flaws[0].end].split()) == " ".join(text.split()[:4])
    assert "critic-a" in flaws[0].tooltip
    assert "critiques 1/5 2/5 3/5" in panel.stats.text()

    view.side_tabs.setCurrentIndex(1)
    session.controller.blind_action.setChecked(True)
    shown = "\n".join(view.rating_panel.critique_list.texts())
    assert not any(model in shown for model in MODELS)
    current = view.compare.panels[view.compare.current_index()]
    assert all("critic" not in m.tooltip for m in current.marks)
    session.controller.blind_action.setChecked(False)
    assert "critic-a" in "\n".join(view.rating_panel.critique_list.texts())


def test_other_reviewers_ratings_are_shown_and_never_changed(rated_session, library_path) -> None:
    session, view = rated_session, rated_session.view
    cot = view.current_cot_pk()
    with Library.open(library_path) as library, library.transaction() as conn:
        set_explanation_rating(conn, cot, "bob", 1, ("irrelevant",))
    view.reload()
    view.side_tabs.setCurrentIndex(1)  # the panel is filled when its tab is shown
    assert "bob: 1/5 (irrelevant)" in view.rating_panel.others.text()
    session.key(Qt.Key.Key_E)
    session.key(Qt.Key.Key_5)
    assert sorted(explanation_rows(session, cot)) == [(REVIEWER, 5, "[]"), ("bob", 1, '["irrelevant"]')]


def test_screenshots_at_1366x768_fit(qtbot, library_path, tmp_path) -> None:
    """The Review tab with the Critiques & rating pane, and the Samples detail with critique
    cards, at 1366x768 (THOUGHTDESK_SCREENSHOTS=DIR collects the PNGs): nothing wider than the
    screen, the rating controls reachable in the pane."""
    from tests.helpers.screenshots import save_screenshot

    seed_critiques(library_path)
    session = Session(qtbot, library_path)
    try:
        window, view = session.window, session.view
        window.resize(1366, 768)
        for key in (Qt.Key.Key_E, Qt.Key.Key_3, Qt.Key.Key_D, Qt.Key.Key_5, Qt.Key.Key_F):
            session.key(key)
        qtbot.wait(50)
        assert view.side_tabs.currentIndex() == 1
        assert window.minimumSizeHint().width() <= 1366 and window.minimumSizeHint().height() <= 768
        assert view.side_tabs.width() >= view.rating_panel.critique_list.minimumSizeHint().width()
        save_screenshot(window, tmp_path, "review-critiques")
        window.tabs.setCurrentWidget(window.samples)
        qtbot.wait(50)
        detail = window.samples.detail
        assert content(detail).minimumSizeHint().width() <= detail.viewport().width()
        save_screenshot(window, tmp_path, "samples-critiques")
    finally:
        session.close()
