"""Sentence splitting: offsets, abbreviations, decimals, lists, line breaks, reference steps."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thoughtdesk.core.review.compare.sentences import cot_segments, split_sentences


def texts(text: str) -> list[str]:
    return [span.text for span in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("Take e.g. aspirin. Then stop.", ["Take e.g. aspirin.", "Then stop."]),
        ("Give it, i.e. the drug, now. Done.", ["Give it, i.e. the drug, now.", "Done."]),
        ("Dr. Smith saw Mr. Jones. He was fine.", ["Dr. Smith saw Mr. Jones.", "He was fine."]),
        ("The dose is 3.5 mg. It is safe.", ["The dose is 3.5 mg.", "It is safe."]),
        ("The answer is D. So we choose it.", ["The answer is D.", "So we choose it."]),
        ("Costs approx. three dollars. Next.", ["Costs approx. three dollars.", "Next."]),
        ("Apples, pears, etc. are fruit. Yes.", ["Apples, pears, etc. are fruit.", "Yes."]),
        ("See Fig. 3 and No. 5 here. Then go.", ["See Fig. 3 and No. 5 here.", "Then go."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("Wait... Really?! Yes.", ["Wait...", "Really?!", "Yes."]),
        ("Total is 5. 5 + 3 = 8.", ["Total is 5.", "5 + 3 = 8."]),
        ("1. First step.\n2. Second step.", ["1. First step.", "2. Second step."]),
        ("a. alpha\nb. beta", ["a. alpha", "b. beta"]),
        ("A) carpet\nB) floor", ["A) carpet", "B) floor"]),
        ("Line one\nline two\n\n\nline three", ["Line one", "line two", "line three"]),
        ("Windows\r\nline endings.\r\n", ["Windows", "line endings."]),
        ("", []),
        ("   \n\t ", []),
    ],
)
def test_split_sentences_cases(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_spans_are_offsets_into_the_original_text() -> None:
    text = "  First sentence.   Second one!\n\n  Third (with e.g. this) here.  "
    spans = split_sentences(text)
    assert [text[s.start : s.end] for s in spans] == [s.text for s in spans]
    assert [s.text for s in spans] == ["First sentence.", "Second one!", "Third (with e.g. this) here."]


@given(st.text(alphabet=st.sampled_from(list("ab .!?\n\r3e.gDr)")), max_size=80))
def test_spans_are_trimmed_ordered_and_faithful(text: str) -> None:
    spans = split_sentences(text)
    position = 0
    for span in spans:
        assert span.start >= position
        assert text[span.start : span.end] == span.text
        assert span.text and span.text == span.text.strip()
        position = span.end
    # Nothing but whitespace is left out.
    covered = set()
    for span in spans:
        covered.update(range(span.start, span.end))
    assert all(text[i].isspace() for i in range(len(text)) if i not in covered)


def test_reference_steps_stay_whole_and_map_into_joined_text() -> None:
    steps = ["Kittens need grip. They use claws.", "  Carpet gives grip ", "", "So carpet."]
    text, spans = cot_segments(steps)
    assert text == "Kittens need grip. They use claws.\n  Carpet gives grip \n\nSo carpet."
    assert [s.text for s in spans] == ["Kittens need grip. They use claws.", "Carpet gives grip", "So carpet."]
    assert all(text[s.start : s.end] == s.text for s in spans)


def test_bad_input_types_are_named() -> None:
    with pytest.raises(TypeError, match="str"):
        split_sentences(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="step 1"):
        cot_segments(["fine", 3])  # type: ignore[list-item]
