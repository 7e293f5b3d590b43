"""Invisible characters in data are shown as escapes (issue 15: bidi overrides disguised text)."""

from __future__ import annotations

from thoughtdesk.core.visible_text import has_invisible, reveal, split_invisible

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


#: What is shown as it is: layout characters and the joiners scripts and emoji need.
SHOWN_AS_THEY_ARE = {
    "\t",
    "\n",
    "\r",
    "\v",
    "\f",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x85",
    "\u2028",
    "\u2029",
    "\u200c",
    "\u200d",
}


def test_every_control_format_and_surrogate_code_point_is_made_visible():
    import sys
    import unicodedata

    missed = []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if char in SHOWN_AS_THEY_ARE or unicodedata.category(char) not in ("Cc", "Cf", "Cs"):
            continue
        if reveal(char) != f"<U+{code:04X}>":
            missed.append(f"U+{code:04X}")
    assert not missed, f"shown as they are: {missed[:20]}"


def test_ordinary_text_is_left_alone():
    text = "Ärztin: 5 mg/kg, β-Blocker — עברית 中文 😀 \t tab \u200d"
    assert reveal(text) == text


def test_a_prefix_is_revealed_within_its_budget_and_escapes_are_never_cut() -> None:
    from thoughtdesk.core.visible_text import elide, reveal_prefix, shown_runs

    assert reveal_prefix("abcdef", 4) == ("abcd", 4)
    assert reveal_prefix("abc", 10) == ("abc", 3)
    # "ab" + "<U+202E>" is 10 shown characters; a budget of 9 stops before the escape.
    assert reveal_prefix("ab\u202ecd", 9) == ("ab", 2)
    assert reveal_prefix("ab\u202ecd", 11) == ("ab<U+202E>c", 4)
    assert shown_runs("\u202eab", 12) == ([("<U+202E>", True), ("ab", False)], 3)
    assert shown_runs("", 5) == ([], 0)
    assert elide("x" * 10, 4) == "xxxx … (6 more characters)"
    assert elide("short", 100) == "short"
    # 10 MB dense with bidi overrides: only the part shown is looked at.
    dense = "\u202eab" * 3_400_000
    shown, consumed = reveal_prefix(dense, 20_000)
    assert len(shown) <= 20_000 and shown.startswith("<U+202E>ab<U+202E>")
    assert "\u202e" not in shown and consumed == 6_000


def test_views_that_style_escapes_stop_at_a_number_of_them() -> None:
    from thoughtdesk.core.visible_text import STYLED_ESCAPES, fitting_prefix, shown_runs

    dense = "\u202eab" * 100_000
    runs, consumed = shown_runs(dense, 1_000_000, STYLED_ESCAPES)
    assert sum(escape for _, escape in runs) == STYLED_ESCAPES
    assert consumed == 3 * STYLED_ESCAPES  # the text up to the next escape
    assert fitting_prefix("ab\u202ecd\u202eef", 100, 1) == "ab\u202ecd"
