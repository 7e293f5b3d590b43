"""The thinking in the Review tab (issue 24, point 6): a collapsed section above each CoT's
visible text; "Thinking" compares the thinking (similarity and word diff) instead of the answers,
and span labels stay on the visible text."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.ui.review.conftest import REVIEWER, Session, make_library
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.registry import USER_NAME
from thoughtdesk.ui.settings.options import write

CUT = 1  # the CoT whose generation stopped at the token limit


def _thinking(cot_pk: int) -> str:
    return f"Thinking of CoT {cot_pk}: the fever matters.\n\nWait, the cough matters more.\n\nLet me check the dose."


@pytest.fixture
def session(qtbot, tmp_path):
    write(USER_NAME, REVIEWER)
    path = make_library(tmp_path / "review.thoughtdesk")
    with Library.open(path) as lib, lib.transaction() as conn:
        for (pk,) in conn.execute("SELECT id FROM generated_cot").fetchall():
            conn.execute(
                "UPDATE generated_cot SET reasoning = ?, reasoning_tokens = ?, finish_reason = ? WHERE id = ?",
                (_thinking(pk), 20 + pk, "length" if pk == CUT else "stop", pk),
            )
    opened = Session(qtbot, path)
    yield opened
    opened.close()


def test_each_cot_has_its_thinking_collapsed_above_its_text(session):
    view = session.view
    panels = [p for p, pk in zip(view.compare.panels, view.cot_pks, strict=False) if pk is not None]
    assert panels and CUT in view.cot_pks
    for panel, pk in zip(panels, [pk for pk in view.cot_pks if pk is not None], strict=False):
        thinking = panel.thinking
        assert thinking.isVisible() and not thinking.is_open()
        assert thinking.toggle.text().startswith(f"Thinking · {20 + pk} tokens")
        assert ("truncated" in thinking.toggle.text()) == ("truncated" in panel.stats.text()) == (pk == CUT)
        assert thinking.geometry().bottom() < panel.text_view.geometry().top()
    reference = view.compare.panels[view.cot_pks.index(None)] if None in view.cot_pks else None
    assert reference is None or not reference.thinking.isVisible()
    panels[0].thinking.set_open(True)
    assert panels[0].thinking.shown_text() == _thinking(view.cot_pks[view.compare.panels.index(panels[0])])
    assert panels[0].thinking.marks() == ["Wait", "Let me check"]


def test_thinking_compared_on_request_and_span_labels_stay_on_the_visible_text(session, qtbot):
    view = session.view
    compare = view.compare
    visible = [p.cot.text for p in compare.panels]
    compare.thinking_button.setChecked(True)
    pks = view.cot_pks
    qtbot.waitUntil(
        lambda: all(p.cot.shows_thinking for p, pk in zip(compare.panels, pks, strict=False) if pk), timeout=5000
    )
    texts = [p.cot.text for p in compare.panels]
    assert texts == [_thinking(pk) if pk is not None else shown for pk, shown in zip(pks, visible, strict=True)]
    assert compare.alignment is not None  # similarity on the thinking
    assert [t for t in compare.alignment.texts if "Thinking of CoT" in t] == [_thinking(pk) for pk in pks if pk]
    assert all(not p.thinking.isVisible() for p in compare.panels)  # the text is the thinking
    first, second = [i for i, pk in enumerate(pks) if pk][:2]
    compare.diff.show_pair(first, second)  # the word diff of two thinkings
    assert "Thinking of CoT" in compare.diff.a.toPlainText() and "Thinking of CoT" in compare.diff.b.toPlainText()
    assert compare.diff.summary.text() == "−1 words, +1 words"  # only the CoT numbers differ
    # A selection in the thinking is not a span of the CoT: refused, nothing written.
    index = compare.current_index()
    panel = compare.panels[index]
    start = panel.cot.text.index("cough")
    panel.select_range(start, start + len("cough"))
    session.key(Qt.Key.Key_3)
    review = session.review(view.current_cot_pk())
    assert review.spans == [] and review.labels == {}
    compare.thinking_button.setChecked(False)
    qtbot.waitUntil(lambda: not any(p.cot.shows_thinking for p in compare.panels), timeout=5000)
    assert [p.cot.text for p in compare.panels] == visible
