"""Data text in a report: escaped, invisible characters shown, big text cut with a note."""

from __future__ import annotations

from thoughtdesk.core.reports.escape import cut, escaped, text_html


def test_markup_is_escaped_and_line_breaks_become_br():
    out = escaped("<script>alert(\"x\")</script>\n<img src=x onerror='y'>\u2028&amp;")
    assert "<script" not in out and "<img" not in out
    assert out == (
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<br/>&lt;img src=x onerror=&#x27;y&#x27;&gt;<br/>&amp;amp;"
    )


def test_a_bidi_override_cannot_reverse_the_text():
    out = escaped("invoice\u202egnp.exe")
    assert "\u202e" not in out and out == "invoice&lt;U+202E&gt;gnp.exe"


def test_big_text_is_cut_with_a_note_saying_how_much():
    text = "x" * 25_000
    assert cut(text, 20_000) == ("x" * 20_000, 5_000)
    assert cut(text, 0) == (text, 0)
    out = text_html(text, 20_000)
    assert out.count("x") < 20_100 and "5,000 more characters not shown" in out and "25,000 characters" in out
    assert text_html(None) == "" and text_html("short", 20_000) == "short"
