"""The compare view, with real widgets offscreen: highlights, slider, filters, diff, layouts."""

from __future__ import annotations

import json

import pytest

from tests.helpers.screenshots import save_screenshot
from thoughtdesk.ui.review.compare.view import CompareView, CotView

HOSTILE_PIECES = ["<b>abnormal</b>", "<img src=x>", '<a href="file:///etc/passwd">this</a>', "&amp;"]


@pytest.fixture
def sample_cots(fixtures_dir) -> list[CotView]:
    data = json.loads((fixtures_dir / "workbench" / "compare_sample.json").read_text(encoding="utf-8"))
    cots = [CotView(id="reference", text=data["reference"], is_reference=True)]
    for item in data["cots"]:
        cots.append(
            CotView(
                id=item["id"],
                text=item["text"],
                model=item["model"],
                prompt_keys=tuple(item["prompt_keys"]),
                answer=item["answer"],
                correct=item["correct"],
            )
        )
    return cots


@pytest.fixture
def view(qtbot, sample_cots) -> CompareView:
    widget = CompareView(threshold=50)
    qtbot.addWidget(widget)
    widget.resize(1600, 900)
    widget.set_cots(sample_cots)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def backgrounds(text_view) -> dict[str, str]:
    """Background colour name of every highlighted fragment, by fragment text."""
    found = {}
    block = text_view.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            brush = fragment.charFormat().background()
            if brush.style() != brush.style().NoBrush:
                found[fragment.text()] = brush.color().name()
            iterator += 1
        block = block.next()
    return found


def test_text_is_shown_literally_and_stats_are_right(view, sample_cots) -> None:
    hostile = view.panels[3]
    shown = hostile.text_view.document().toPlainText()
    assert shown == sample_cots[3].text
    for piece in HOSTILE_PIECES:
        assert piece in shown
    assert "answer: D · incorrect" in hostile.stats.text()
    assert "3 steps" in view.panels[0].stats.text()  # reference steps
    assert "answer" not in view.panels[0].stats.text()
    assert "answer: (none) · not scored" in view.panels[4].stats.text()


def test_aligned_sentences_share_a_colour_and_the_slider_regroups(view, qtbot) -> None:
    reference_colours = backgrounds(view.panels[0].text_view)
    first_cot_colours = backgrounds(view.panels[1].text_view)
    shared = "Fever and cough with a lobar consolidation point to pneumonia."
    assert shared in reference_colours
    assert first_cot_colours["Fever and cough with a consolidation point to pneumonia."] == reference_colours[shared]
    groups_at_50 = len(view.alignment.groups)
    with qtbot.waitSignal(view.thresholdChanged, timeout=10000):
        view.slider.setValue(100)  # a user drag: coalesced, then applied
    assert view.alignment.threshold == 100
    assert len(view.alignment.groups) < groups_at_50
    assert shared not in backgrounds(view.panels[0].text_view)
    view.set_threshold(50)
    assert backgrounds(view.panels[0].text_view) == reference_colours


def test_filters_hide_cards_but_keep_the_reference(view) -> None:
    view.set_filters(model="gpt-3.5-turbo")
    assert [p.isVisible() for p in view.panels] == [True, False, True, True, False]
    view.set_filters(correct=False)
    assert [p.isVisible() for p in view.panels] == [True, False, False, True, False]
    view.set_filters(prompt="zhou-01")
    assert [p.isVisible() for p in view.panels] == [True, False, True, False, True]
    view.set_filters()
    assert all(p.isVisible() for p in view.panels)


def test_word_diff_panel_marks_changes_literally(view) -> None:
    view.show_diff(1, 3)
    assert view.diff.a.document().toPlainText() == view.alignment.texts[1]
    assert view.diff.b.document().toPlainText() == view.alignment.texts[3]
    inserted = "".join(backgrounds(view.diff.b))
    assert "<img src=x>" in inserted
    assert view.diff.summary.text().startswith("−")


def test_layout_toggle_keeps_panels_and_screenshot(view, qtbot, tmp_path) -> None:
    columns_x = [p.x() for p in view.panels]
    assert len(set(columns_x)) == len(view.panels)  # side by side
    view.set_layout_mode("cards")
    qtbot.wait(50)
    assert len({p.x() for p in view.panels}) == 1  # stacked
    assert view.mode_box.currentText() == "Cards"
    view.set_layout_mode("columns")
    qtbot.wait(50)
    save_screenshot(view, tmp_path, "compare_view")
    with pytest.raises(ValueError):
        view.set_layout_mode("grid")  # a wrong mode on purpose


def test_dark_palette_uses_dark_highlights(qtbot, sample_cots) -> None:
    from PySide6.QtGui import QColor, QPalette

    widget = CompareView(threshold=50)
    qtbot.addWidget(widget)
    palette = widget.palette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#202020"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#ffffff"))
    widget.setPalette(palette)
    widget.set_cots(sample_cots)
    assert widget.theme() == "dark"
    from thoughtdesk.core.review.compare.colours import contrast_ratio

    for colour in backgrounds(widget.panels[0].text_view).values():
        assert contrast_ratio(colour, "#ffffff") >= 4.5


def test_panels_out_of_view_are_repainted_when_scrolled_to(qtbot, sample_cots) -> None:
    widget = CompareView(threshold=50)
    qtbot.addWidget(widget)
    widget.resize(700, 600)  # room for about two columns
    widget.set_cots(sample_cots)
    widget.show()
    qtbot.waitExposed(widget)
    last = widget.panels[4].text_view  # "Fever and cough are present." groups with CoT 2 at 50 %
    # Out of view at first: painted when the event loop is idle.
    qtbot.waitUntil(lambda: "Fever and cough are present." in backgrounds(last), timeout=10000)
    widget.set_threshold(100)
    assert 4 in widget.painter.stale  # out of view, so not repainted yet
    bar = widget.scroll_area.horizontalScrollBar()
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: "Fever and cough are present." not in backgrounds(last), timeout=10000)
    assert widget.panels[4].text_view.document().toPlainText() == sample_cots[4].text


def test_layout_mode_before_any_sample_is_harmless(qtbot) -> None:
    widget = CompareView()
    qtbot.addWidget(widget)
    widget.set_layout_mode("cards")
    widget.set_threshold(80)
    assert widget.alignment is None and widget.layout_mode() == "cards"
