"""The thinking in the Samples detail (issue 24, point 6): a collapsed section above the answer
with its token count; opened, plain text with the self-corrections marked and navigation by
paragraph and by change of mind."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from tests.helpers.reasoning import long_trace, reasoning_cot, write_samples
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.samples.sample_detail import SampleDetail
from thoughtdesk.ui.widgets.thinking import ThinkingSection


def _detail(qtbot, tmp_path, cots) -> SampleDetail:
    path = write_samples(tmp_path / "lib.thoughtdesk", "c", [cots])
    with Library.open(path) as lib:
        stored = load_sample(lib, lib.conn.execute("SELECT id FROM sample").fetchone()[0])
    detail = SampleDetail()
    qtbot.addWidget(detail)
    detail.resize(700, 700)
    detail.show_sample(stored)
    detail.show()
    return detail


def test_the_thinking_is_collapsed_above_the_answer_with_its_tokens(qtbot, tmp_path):
    thinking = "First, 3 + 4.\n\nWait, <b>not</b> 8: it is 7.\n\nLet me check: 7 - 4 = 3. Yes."
    detail = _detail(
        qtbot,
        tmp_path,
        [
            reasoning_cot(0, "stop", True, reasoning=thinking, tokens=42),
            reasoning_cot(1, "length", False, reasoning="I keep thinking and", tokens=None),
            reasoning_cot(2, "stop", True, reasoning=None, tokens=None),
        ],
    )
    sections = detail.findChildren(ThinkingSection)
    shown = [s for s in sections if s.isVisible()]
    assert len(shown) == 2
    first, cut = shown
    assert not first.is_open() and first.view is None  # nothing of the trace laid out yet
    assert first.toggle.text() == "Thinking · 42 tokens" and f"{len(thinking)} characters" in first.toggle.toolTip()
    assert cut.toggle.text() == "Thinking · ~4 tokens · truncated" and "token limit" in cut.toggle.toolTip()
    answers = [label.text() for label in detail.findChildren(QLabel, "cotAnswer")]
    assert answers[1].endswith("✗ incorrect · truncated (left out of accuracy)") and "truncated" not in answers[0]
    # above the visible text of its CoT
    card = first.parentWidget()
    assert card is not None
    answer_text = next(w for w in card.findChildren(QLabel, "cotText"))
    assert first.geometry().bottom() < answer_text.geometry().top()

    first.toggle.click()
    assert first.is_open() and first.shown_text() == thinking  # plain text: "<b>" shown as it is
    marked = first.marks()
    assert marked == ["Wait", "Let me check"]
    view, body = first.view, first.body
    assert view is not None and body is not None
    first.move_correction(1)
    assert view.textCursor().selectedText() == "Wait"
    first.move_correction(1)
    assert view.textCursor().selectedText() == "Let me check"
    assert "change of mind 2 of 2: Let me check" in first.position.text()
    first.move_paragraph(-1)
    assert view.textCursor().position() == thinking.index("Wait")
    first.toggle.click()
    assert not body.isVisible()


def test_a_long_trace_opens_in_steps_and_navigates_past_what_is_loaded(qtbot, tmp_path):
    text = long_trace(400_000)
    detail = _detail(qtbot, tmp_path, [reasoning_cot(0, "stop", True, reasoning=text, tokens=100_000)])
    (section,) = [s for s in detail.findChildren(ThinkingSection) if s.isVisible()]
    section.set_open(True)
    assert 0 < section.loaded < len(text)  # the first part at once, the rest from the event loop
    qtbot.waitUntil(lambda: section.loaded == len(text), timeout=10000)
    assert section.shown_text() == text
    trace, view = section.trace, section.view
    assert trace is not None and view is not None
    assert len(section.marks()) == len(trace.corrections) > 100
    for _ in range(3):
        section.move_correction(1)
    third = trace.corrections[2]
    assert view.textCursor().selectionStart() == third.start


def test_a_huge_trace_shows_a_part_and_the_rest_in_the_viewer(qtbot, tmp_path, monkeypatch):
    from thoughtdesk.ui.widgets import thinking

    monkeypatch.setattr(thinking, "SHOWN_CHARS", 50_000)
    text = long_trace(120_000)
    detail = _detail(qtbot, tmp_path, [reasoning_cot(0, "stop", True, reasoning=text, tokens=None)])
    (section,) = [s for s in detail.findChildren(ThinkingSection) if s.isVisible()]
    section.set_open(True)
    section.load_all()
    assert section.shown_text() == text[:50_000] and section.show_all.isVisible()
    assert section.show_all.text().startswith("… 70,000 more characters")
    section.show_all.click()
    assert section.dialog is not None and section.dialog.text == text
