"""Untrusted text shows literally: in plain escaping, in highlights and in diffs (also in Qt)."""

from __future__ import annotations

import pytest

from thoughtdesk.core.review.compare.similarity import align_sentences, group_colours, word_diff
from thoughtdesk.ui.review.compare.safe_text import (
    diff_side_html,
    highlighted_cot_html,
    highlighted_span,
    safe_colour,
    to_html_escaped,
)

HOSTILE = [
    "<img src=x>",
    '<a href="file:///etc/passwd">click</a>',
    "<b>bold</b>",
    "&amp;",
    "<script>alert(1)</script>",
    '<span style="background:red">x</span>',
]
HOSTILE_COT = (
    'Look at <img src=x> first. Then open <a href="file:///etc/passwd">this</a>. '
    "It is <b>bold</b> &amp; safe.\nNext line   with  spaces."
)


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_html_has_no_markup_from_the_data(text: str) -> None:
    escaped = to_html_escaped(text)
    assert "<" not in escaped and ">" not in escaped and '"' not in escaped
    assert escaped.count("&") == text.count("&") + text.count("<") + text.count(">") + text.count('"')


def test_line_breaks_become_br() -> None:
    assert to_html_escaped("a\nb\r\nc\u2028d") == "a<br/>b<br/>c<br/>d"


def test_colour_cannot_carry_markup() -> None:
    with pytest.raises(ValueError):
        safe_colour('#fff"><img src=x>')
    with pytest.raises(ValueError):
        highlighted_span("x", "red", "#000000")


def qt_plain_text_and_formats(qapp, html: str):
    """Render with Qt's rich-text engine; return its plain text and any anchors/images/bold."""
    from PySide6.QtGui import QFont, QTextDocument

    document = QTextDocument()
    document.setHtml(html)
    live = []
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            fmt = fragment.charFormat()
            if fmt.isAnchor() or fmt.isImageFormat() or fmt.fontWeight() > QFont.Weight.Normal.value:
                live.append(fragment.text())
            iterator += 1
        block = block.next()
    return document.toPlainText(), live


def test_highlighted_cot_shows_hostile_text_literally_in_qt(qapp) -> None:
    alignment = align_sentences([HOSTILE_COT, HOSTILE_COT], threshold=50)
    assert alignment.groups, "identical CoTs must align"
    colours = group_colours(12, "light")
    html = highlighted_cot_html(alignment.texts[0], alignment.sentences[0], alignment.group_of[0], colours)
    for needle in ("<img", "<a ", "<b>", "<script"):
        assert needle not in html
    plain, live = qt_plain_text_and_formats(qapp, html)
    assert plain.replace("\u2028", "\n") == HOSTILE_COT
    assert live == []
    assert "&amp;amp;" in html  # the literal "&amp;" survives as text


def test_word_diff_html_shows_hostile_text_literally_in_qt(qapp) -> None:
    a = "Safe <b>text</b> and &amp; here."
    b = 'Safe <img src=x> text and <a href="file:///etc/passwd">x</a> here.'
    ops = word_diff(a, b)
    for side, expected in (("a", a), ("b", b)):
        html = diff_side_html(ops, side)
        plain, live = qt_plain_text_and_formats(qapp, html)
        assert plain == expected
        assert live == []
    assert "<s>" in diff_side_html(ops, "a") and "<u>" in diff_side_html(ops, "b")


def test_highlight_html_checks_its_spans() -> None:
    alignment = align_sentences(["One. Two.", "One. Three."], threshold=90)
    with pytest.raises(ValueError, match="group entries"):
        highlighted_cot_html(alignment.texts[0], alignment.sentences[0], (), ["#ffffff"])
