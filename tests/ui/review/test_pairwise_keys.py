"""Pairwise preferences from the keyboard in the Review tab (issue 26, point 3): `[` / `]` / `=`
on the current CoT and the next one, blind by default, stored per reviewer in stored order,
taken back with the same key, undone with Ctrl+Z, shown in the notes and listed under `?`."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.helpers.screenshots import save_screenshot
from tests.ui.review.conftest import REVIEWER
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.preferences import preference_of
from thoughtdesk.core.settings.registry import PAIRWISE_BLIND
from thoughtdesk.ui.app.shortcuts import SHORTCUTS
from thoughtdesk.ui.settings.options import write

CTRL = Qt.KeyboardModifier.ControlModifier


def stored(session, a: int, b: int, author: str = REVIEWER):
    with Library.open(session.path) as library:
        return preference_of(library.conn, author, a, b)


def test_bracket_keys_state_blind_undoable_pairwise_preferences(session, qtbot, tmp_path) -> None:
    view = session.view
    assert not view.blind
    first = view.current_cot_pk()
    # Models are shown: the first key hides them and asks again; nothing is stored.
    session.key(Qt.Key.Key_BracketLeft)
    assert view.blind
    qtbot.waitUntil(lambda: view.stored is not None and view.current_cot_pk() is not None, timeout=5000)
    pair = view.preferences.pair()
    assert pair is not None
    left, right, left_title, right_title = pair
    assert stored(session, left, right) is None
    # [ prefers the left CoT of the pair (the current one and the next to its right).
    session.key(Qt.Key.Key_BracketLeft)
    verdict = stored(session, left, right)
    assert verdict is not None and verdict.preferred_cot_pk == left and verdict.blind
    assert verdict.pair == (min(left, right), max(left, right))
    panel = view.compare.panels[view.cot_pks.index(left)]
    assert "pairwise: preferred 1×" in panel.note.text()
    assert "other preferred 1×" in view.compare.panels[view.cot_pks.index(right)].note.text()
    # ] replaces it; = makes it a tie; = again takes it back.
    session.key(Qt.Key.Key_BracketRight)
    assert stored(session, left, right).preferred_cot_pk == right
    session.key(Qt.Key.Key_Equal)
    assert stored(session, left, right).preferred_cot_pk is None
    assert "tie 1×" in panel.note.text()
    session.key(Qt.Key.Key_Equal)
    assert stored(session, left, right) is None
    # Ctrl+Z walks back: the tie, then ], then [; Ctrl+Shift+Z redoes.
    session.key(Qt.Key.Key_Z, CTRL)
    assert stored(session, left, right).preferred_cot_pk is None
    session.key(Qt.Key.Key_Z, CTRL)
    assert stored(session, left, right).preferred_cot_pk == right
    session.key(Qt.Key.Key_Z, CTRL)
    assert stored(session, left, right).preferred_cot_pk == left
    session.key(Qt.Key.Key_Z, CTRL)
    assert stored(session, left, right) is None
    assert "pairwise" not in panel.note.text()
    session.key(Qt.Key.Key_Z, CTRL | Qt.KeyboardModifier.ShiftModifier)
    assert stored(session, left, right).preferred_cot_pk == left
    assert stored(session, left, right, author="someone else") is None  # per reviewer
    session.window.resize(1366, 768)
    assert save_screenshot(session.window, tmp_path, "review-pairwise").stat().st_size > 10_000
    assert "[ / ] / = prefer left / right / tie" in view.panel.help.text()
    assert any(keys.startswith("Review: [ / ] / =") for keys, _ in SHORTCUTS)
    assert first is not None


def test_with_pairwise_blind_off_the_models_stay_shown_and_the_verdict_says_so(qtbot, library_path) -> None:
    from tests.ui.review.conftest import Session

    write(PAIRWISE_BLIND, False)
    session = Session(qtbot, library_path)
    try:
        view = session.view
        pair = view.preferences.pair()
        assert pair is not None
        left, right, _l, _r = pair
        session.key(Qt.Key.Key_BracketRight)
        assert not view.blind
        verdict = stored(session, left, right)
        assert verdict.preferred_cot_pk == right and not verdict.blind
    finally:
        session.close()
