"""Invisible characters in the views: the escape drawn in its own style, positions kept."""

from __future__ import annotations

from thoughtdesk.ui.review.compare.safe_text import INVISIBLE_STYLE, highlighted_cot_html, to_html_escaped
from thoughtdesk.ui.widgets.text_positions import PositionMap

# "invoice_txt.exe" written so that it reads "invoice_exe.txt" where bidi controls are obeyed.
DISGUISED = "invoice_\u202etxt.exe"


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
