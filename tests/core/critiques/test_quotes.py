"""Finding the CoT text a critique's main flaw quotes (for highlighting it in the CoT)."""

from __future__ import annotations

import pytest

from thoughtdesk.core.critiques.quotes import MIN_QUOTE_CHARS, QuoteSpan, find_quote_spans, flaw_quotes

COT = "First, the liver\nmakes  Insulin. Then the pancreas stores glucose. So the answer is (B)."


def quoted(cot: str, spans: list[QuoteSpan]) -> list[str]:
    return [cot[s.start : s.end] for s in spans]


def test_a_double_quoted_passage_is_found_case_and_whitespace_insensitively():
    flaw = 'The explanation claims "the liver makes insulin", which is false.'
    spans = find_quote_spans(flaw, COT)
    # The span is the CoT's own text: its case, its line break and its double space.
    assert quoted(COT, spans) == ["the liver\nmakes  Insulin"]
    assert spans[0].quote == "the liver makes insulin"


@pytest.mark.parametrize(
    "flaw",
    [
        "It says “the pancreas stores glucose” wrongly.",
        "It says ‘the pancreas stores glucose’ wrongly.",
        "It says « the pancreas stores glucose » wrongly.",
        "It says 'the pancreas stores glucose' wrongly.",
        'It says "the pancreas stores glucose!" wrongly.',  # punctuation inside the quote marks
        'It says "...the pancreas stores glucose..." wrongly.',  # ellipses
    ],
)
def test_every_kind_of_quotation_mark_is_read(flaw):
    assert quoted(COT, find_quote_spans(flaw, COT)) == ["the pancreas stores glucose"]


def test_apostrophes_are_not_quotes():
    flaw = "The explanation doesn't say why the answer isn't (A)."
    assert flaw_quotes(flaw) == []
    assert find_quote_spans(flaw, COT) == []


def test_quotes_that_are_not_in_the_cot_or_too_short_are_left_out():
    assert find_quote_spans('It assumes "the kidney filters bile".', COT) == []
    assert find_quote_spans('The word "is" is wrong.', COT) == []
    assert len("is") < MIN_QUOTE_CHARS


def test_several_quotes_come_back_in_cot_order_without_overlaps():
    flaw = 'Both "the pancreas stores glucose" and "the liver makes insulin" are wrong; "liver makes" too.'
    spans = find_quote_spans(flaw, COT)
    assert quoted(COT, spans) == ["the liver\nmakes  Insulin", "the pancreas stores glucose"]
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:], strict=False))


def test_no_flaw_no_cot_or_no_quotes_give_nothing():
    assert find_quote_spans(None, COT) == []
    assert find_quote_spans("", COT) == []
    assert find_quote_spans('"the liver"', "") == []
    assert find_quote_spans("The reasoning skips a step.", COT) == []


def test_offsets_are_python_offsets_even_with_emoji_and_accents():
    cot = "🙂🙂 Élan VITAL\u00a0ist   nass. Fine."
    spans = find_quote_spans('It writes "élan vital ist nass"', cot)
    assert quoted(cot, spans) == ["Élan VITAL\u00a0ist   nass"]


def test_hostile_flaw_text_is_only_searched():
    cot = "<b>bold</b> claim here"
    spans = find_quote_spans('It says "<b>bold</b> claim"', cot)
    assert quoted(cot, spans) == ["<b>bold</b> claim"]
