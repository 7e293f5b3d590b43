"""The one sentence splitter, on clinical, CoT and crowd-written text: where sentences end,
where they do not, and offsets that slice back to each sentence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thoughtdesk.core.sentences import split_sentences


def texts(text: str, **options: bool) -> list[str]:
    return [span.text for span in split_sentences(text, **options)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The sentence of the issue: each earlier splitter got one of the two stops wrong.
        (
            "Give 5 mg. Then wait 2 min. Check the pulse.",
            ["Give 5 mg.", "Then wait 2 min.", "Check the pulse."],
        ),
        # Units and doses: a stop after a unit ends the sentence before a capital, not before
        # a small letter; a decimal point never does.
        ("Give 0.5 mL IV. Repeat after 5 min. if needed.", ["Give 0.5 mL IV.", "Repeat after 5 min. if needed."]),
        ("The dose is 3.5 mg. It is safe.", ["The dose is 3.5 mg.", "It is safe."]),
        ("Start at .5 mg/kg. Then 1.25 mg/kg.", ["Start at .5 mg/kg.", "Then 1.25 mg/kg."]),
        ("Keep the max. dose low. Stop at 40 mg daily.", ["Keep the max. dose low.", "Stop at 40 mg daily."]),
        (
            "Limited to the T1w sequence at 3 T. There is no need.",
            ["Limited to the T1w sequence at 3 T.", "There is no need."],
        ),
        # Abbreviations.
        ("Take e.g. aspirin. Then stop.", ["Take e.g. aspirin.", "Then stop."]),
        ("Give it, i.e. the drug, now. Done.", ["Give it, i.e. the drug, now.", "Done."]),
        ("Some drugs (e.g. 15% of them) fail. Others work.", ["Some drugs (e.g. 15% of them) fail.", "Others work."]),
        ("Dr. Smith saw Mr. Jones. He was fine.", ["Dr. Smith saw Mr. Jones.", "He was fine."]),
        ("Compare A vs. B. Then decide.", ["Compare A vs. B.", "Then decide."]),
        ("Costs approx. three dollars. Next.", ["Costs approx. three dollars.", "Next."]),
        ("It takes approx. 10 min. Then it stops.", ["It takes approx. 10 min.", "Then it stops."]),
        ("Apples, pears, etc. are fruit. Yes.", ["Apples, pears, etc. are fruit.", "Yes."]),
        ("Shops sell food, drink, etc. Fish are not sold.", ["Shops sell food, drink, etc.", "Fish are not sold."]),
        ("See Fig. 3 and No. 5 here. Then go.", ["See Fig. 3 and No. 5 here.", "Then go."]),
        ("Smith et al. (2019) showed it. Then more.", ["Smith et al. (2019) showed it.", "Then more."]),
        ("E. coli grows here. It is common.", ["E. coli grows here.", "It is common."]),
        # An acronym is not the abbreviation it looks like.
        ("It is a sign of MS. The nerve is involved.", ["It is a sign of MS.", "The nerve is involved."]),
        ("Patients in a VS. All 5 improved.", ["Patients in a VS.", "All 5 improved."]),
        # Answer letters and options.
        ("The answer is D. So we choose it.", ["The answer is D.", "So we choose it."]),
        ("Answer: B. Explanation follows.", ["Answer: B.", "Explanation follows."]),
        ("The answer is (D). So done.", ["The answer is (D).", "So done."]),
        ("(A) Aspirin. (B) Heparin. (C) Warfarin.", ["(A) Aspirin.", "(B) Heparin.", "(C) Warfarin."]),
        ("Vitamin D. It helps. Hepatitis B. It spreads.", ["Vitamin D.", "It helps.", "Hepatitis B.", "It spreads."]),
        # Enumerations, inline and one per line.
        (
            "1. First, check the airway. 2. Then give oxygen. 3. Finally reassess.",
            ["1. First, check the airway.", "2. Then give oxygen.", "3. Finally reassess."],
        ),
        ("1. First step.\n2. Second step.", ["1. First step.", "2. Second step."]),
        ("a. alpha\nb. beta", ["a. alpha", "b. beta"]),
        ("iv. Fourth point. Done.", ["iv. Fourth point.", "Done."]),
        ("A) carpet\nB) floor", ["A) carpet", "B) floor"]),
        ("Total is 5. 5 + 3 = 8.", ["Total is 5.", "5 + 3 = 8."]),
        # Quotes and brackets stay with their sentence.
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("It is called \u201cthe gate.\u201d We left.", ["It is called \u201cthe gate.\u201d", "We left."]),
        ("(See above.) Next step.", ["(See above.)", "Next step."]),
        ("Done [see 2.] Then more.", ["Done [see 2.]", "Then more."]),
        ("Wait... Really?! Yes\u2026 Next", ["Wait...", "Really?!", "Yes\u2026", "Next"]),
        # Line breaks always end a sentence; blank lines and whitespace give nothing.
        ("Line one\nline two\n\n\nline three", ["Line one", "line two", "line three"]),
        ("Windows\r\nline endings.\r\n", ["Windows", "line endings."]),
        ("Old Mac\rline\u2028separators", ["Old Mac", "line", "separators"]),
        ("A stop at the end of a line.\nnext line", ["A stop at the end of a line.", "next line"]),
        ("No space after a stop.Is one sentence.", ["No space after a stop.Is one sentence."]),
        ("", []),
        ("   \n\t ", []),
        ("...", ["..."]),
    ],
)
def test_where_sentences_end(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # ECQA's crowd workers start sentences in lower case...
        ("Kids play outside. they like fun.", ["Kids play outside.", "they like fun."]),
        # ...but never after "etc.", and abbreviations still hold.
        ("Buy cloth, cotton etc. from a store. done.", ["Buy cloth, cotton etc. from a store.", "done."]),
        ("Take e.g. aspirin. then stop.", ["Take e.g. aspirin.", "then stop."]),
    ],
)
def test_lowercase_starts_for_crowd_written_text(text: str, expected: list[str]) -> None:
    assert texts(text, lowercase_starts=True) == expected
    assert len(texts(text)) < len(expected)  # the default keeps a lower-case word in the sentence


def test_spans_are_offsets_into_the_original_text() -> None:
    text = "  First sentence.   Second one!\n\n  Third (with e.g. this) here.  "
    spans = split_sentences(text)
    assert [text[s.start : s.end] for s in spans] == [s.text for s in spans]
    assert [s.text for s in spans] == ["First sentence.", "Second one!", "Third (with e.g. this) here."]
    assert [(s.start, s.end) for s in spans] == [(2, 17), (20, 31), (35, 63)]


@given(st.text(alphabet=st.sampled_from(list('ab AD .!?\n\r\u2028\t3e.gDr)("mgl:')), max_size=80), st.booleans())
def test_spans_are_trimmed_ordered_and_faithful(text: str, lowercase_starts: bool) -> None:
    spans = split_sentences(text, lowercase_starts=lowercase_starts)
    position = 0
    for span in spans:
        assert span.start >= position
        assert text[span.start : span.end] == span.text
        assert span.text and span.text == span.text.strip()
        position = span.end
    # Nothing but whitespace is left out, and no sentence crosses a line break.
    covered: set[int] = set()
    for span in spans:
        covered.update(range(span.start, span.end))
        assert len(span.text.splitlines()) == 1
    assert all(text[i].isspace() for i in range(len(text)) if i not in covered)


def test_bad_input_type_is_named() -> None:
    with pytest.raises(TypeError, match="str"):
        split_sentences(None)  # type: ignore[arg-type]  # the point: a wrong type is refused by name
