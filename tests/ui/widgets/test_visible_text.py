"""Invisible characters in data are shown as escapes (issue 15: bidi overrides disguised text)."""

from __future__ import annotations

from thoughtdesk.ui.review.compare.safe_text import INVISIBLE_STYLE, highlighted_cot_html, to_html_escaped
from thoughtdesk.ui.widgets.text_positions import PositionMap
from thoughtdesk.ui.widgets.visible_text import has_invisible, reveal, split_invisible

# "invoice_txt.exe" written so that it reads "invoice_exe.txt" where bidi controls are obeyed.
DISGUISED = "invoice_\u202etxt.exe"


def test_bidi_controls_and_zero_width_characters_become_escapes() -> None:
    assert reveal(DISGUISED) == "invoice_<U+202E>txt.exe"
    for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200B, 0x200E, 0x200F, 0xFEFF, 0x00, 0x1B, 0x7F]:
        assert reveal(f"a{chr(code)}b") == f"a<U+{code:04X}>b", hex(code)


def test_layout_characters_and_joiners_are_left_alone() -> None:
    # Tabs and breaks lay text out; ZWJ/ZWNJ are needed to read emoji sequences and Persian.
    for text in ["a\tb\nc\r\nd", "👩\u200d💻", "می\u200cخواهم", "plain <b>text</b> & more"]:
        assert reveal(text) is text
        assert not has_invisible(text)


def test_runs_split_each_invisible_character_out() -> None:
    assert split_invisible("a\u202eb\u2066") == [("a", False), ("\u202e", True), ("b", False), ("\u2066", True)]
    assert split_invisible("") == [("", False)]
    assert "".join(piece for piece, _ in split_invisible(DISGUISED)) == DISGUISED


def test_the_compare_view_html_shows_the_escape_in_its_own_style() -> None:
    html = to_html_escaped(DISGUISED + " <b>")
    assert "\u202e" not in html
    assert f'<span style="{INVISIBLE_STYLE}">&lt;U+202E&gt;</span>' in html
    assert "&lt;b&gt;" in html  # markup in data stays text
    # Inside a highlighted sentence too.
    from thoughtdesk.core.sentences import Span

    out = highlighted_cot_html(DISGUISED, [Span(0, len(DISGUISED), DISGUISED)], [0], ["#ffffff"])
    assert "\u202e" not in out and "&lt;U+202E&gt;" in out


def test_positions_count_the_escape_so_spans_stay_on_their_characters() -> None:
    text = "ab\u202ecd"
    positions = PositionMap.of(text)
    # "ab" then the eight characters of "<U+202E>", then "cd".
    assert [positions.to_document(i) for i in range(len(text) + 1)] == [0, 1, 2, 10, 11, 12]
    assert positions.to_offset(5) == 3  # inside the escape rounds up to the next character
    assert positions.to_range(10, 12) == (3, 5)


def test_the_document_matches_the_position_map(qtbot) -> None:
    from thoughtdesk.ui.qt import QTextDocument
    from thoughtdesk.ui.review.compare.safe_text import wrap_document

    text = "x\u202ey\u200bz"
    document = QTextDocument()
    document.setHtml(wrap_document(to_html_escaped(text)))
    shown = document.toPlainText()
    assert shown == "x<U+202E>y<U+200B>z"
    positions = PositionMap.of(text)
    assert shown[positions.to_document(2)] == "y" and shown[positions.to_document(4)] == "z"
