"""Highlight colours (WCAG contrast in both themes) and the word diff."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thoughtdesk.core.review.compare.colours import TEXT_COLOUR, contrast_ratio, group_colours, relative_luminance
from thoughtdesk.core.review.compare.word_diff import tokenize_words, word_diff
from thoughtdesk.ui.review.compare.safe_text import DIFF_COLOURS


def test_wcag_reference_values() -> None:
    # Black on white is the maximum, 21:1; equal colours are 1:1.
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#123456", "#123456") == pytest.approx(1.0)
    # #767676 is the lightest grey that passes AA on white (4.54:1); #777777 just fails (4.48:1).
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    # Pure green's luminance is its 0.7152 channel weight.
    assert relative_luminance("#00ff00") == pytest.approx(0.7152)


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("n", [1, 5, 12, 40])
def test_group_colours_are_readable_and_distinct(theme: str, n: int) -> None:
    colours = group_colours(n, theme)  # type: ignore[arg-type]  # theme comes from parametrize as str
    assert len(colours) == n
    assert len(set(colours)) == n
    for colour in colours:
        assert contrast_ratio(colour, TEXT_COLOUR[theme]) >= 4.5, colour
    # Adding groups does not recolour the existing ones.
    assert group_colours(n + 3, theme)[:n] == colours  # type: ignore[arg-type]  # as above


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_diff_colours_are_readable(theme: str) -> None:
    for colour in DIFF_COLOURS[theme]:
        assert contrast_ratio(colour, TEXT_COLOUR[theme]) >= 4.5


def test_bad_theme_and_colour_are_refused() -> None:
    with pytest.raises(ValueError, match="theme"):
        group_colours(3, "sepia")  # type: ignore[arg-type]  # an unknown theme on purpose
    with pytest.raises(ValueError, match="#rrggbb"):
        contrast_ratio("red", "#000000")


def test_word_diff_known_case() -> None:
    ops = word_diff("The red car is fast.", "The blue bike is fast!")
    assert [(op.kind, op.text) for op in ops] == [
        ("equal", "The "),
        ("delete", "red car"),
        ("insert", "blue bike"),
        ("equal", " is fast"),
        ("delete", "."),
        ("insert", "!"),
    ]
    delete = ops[1]
    assert (delete.a_start, delete.a_end, delete.b_start, delete.b_end) == (4, 11, 4, 4)
    insert = ops[2]
    assert (insert.a_start, insert.a_end, insert.b_start, insert.b_end) == (11, 11, 4, 13)


def test_word_diff_keeps_whitespace() -> None:
    ops = word_diff("a  b\n\nc", "a b\nc")
    assert [(op.kind, op.text) for op in ops] == [
        ("equal", "a"),
        ("delete", "  "),
        ("insert", " "),
        ("equal", "b"),
        ("delete", "\n\n"),
        ("insert", "\n"),
        ("equal", "c"),
    ]


def test_tokens_join_back() -> None:
    text = "Dose: 3.5 mg/kg,\tthen   <b>stop</b>!"
    assert "".join(tokenize_words(text)) == text


@given(
    st.text(alphabet=st.sampled_from(list("ab c\n.,<&")), max_size=60),
    st.text(alphabet=st.sampled_from(list("ab c\n.,<&")), max_size=60),
)
def test_word_diff_rebuilds_both_texts_with_right_offsets(a: str, b: str) -> None:
    ops = word_diff(a, b)
    assert "".join(op.text for op in ops if op.kind != "insert") == a
    assert "".join(op.text for op in ops if op.kind != "delete") == b
    for op in ops:
        assert op.text
        assert a[op.a_start : op.a_end] == ("" if op.kind == "insert" else op.text)
        assert b[op.b_start : op.b_end] == ("" if op.kind == "delete" else op.text)
    if a == b:
        assert all(op.kind == "equal" for op in ops)
