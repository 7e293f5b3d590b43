"""What scoring remembers between answers (issue 27, point 6: a million answers within 50x one bare
``re.search`` each) never changes a result.

- ``extract._decided_by_output``: whole results decided by the answer-extraction output alone,
  reused for an answer with the same type, output, choices and gold answers, whatever its CoT;
- ``extract._gold_number``: a gold answer's number, parsed once per question;
- ``text.normalized``: ``normalize_text`` remembered (gold answers, F1, containment);
- and a pre-check: ``choice._NEGATION_HINT`` before the slow ``_NEGATED_BEFORE`` search.

The property tests score streams of answers that share outputs, choices and gold answers but
differ in their CoTs (as the conditions of one question do) and compare each result with the
careful path run afresh (``_extract``, no memo, no safety net).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.evaluation.answers.test_robustness import ANSWERY, TYPES
from thoughtdesk.core.evaluation.answers import extract, extract_answer
from thoughtdesk.core.evaluation.answers.choice import _NEGATED_AFTER, _NEGATED_BEFORE, negated
from thoughtdesk.core.evaluation.answers.extract import _extract, _gold_number
from thoughtdesk.core.evaluation.answers.number import DEFAULT_REL_TOL, numbers_in
from thoughtdesk.core.evaluation.answers.text import normalize_text, normalized

OUTPUTS = st.one_of(
    st.sampled_from(["B", "(B)", "B) door.", "Option B", "The answer is B.", "door", "B or C", "", "  ", "Yes."]),
    st.sampled_from(["No.", "yes", "B) False.", "N/A", "18", "$18.00", "18 or 19", "1 1/2.", "none of the above."]),
    ANSWERY,
)
COTS = st.one_of(st.none(), st.sampled_from(["So the answer is (C) hallway.", "#### 18", "so yes."]), ANSWERY)
OPTION_LISTS = st.sampled_from(
    [
        ["floor", "door", "hallway", "porch", "garden"],
        ["True", "False"],
        ["yes", "no", "maybe"],
        [],
        ["door", 1],  # not all strings: never remembered
        ("floor", "door"),
    ]
)
GOLDS = st.one_of(
    st.sampled_from([["door"], ["B"], ["True"], ["no"], ["18"], ["1.5"], ["river bank"], [], ["1e999"], [1], None]),
    st.lists(st.text(max_size=8), max_size=2),
)
ANSWER = st.tuples(TYPES, OUTPUTS, COTS, OPTION_LISTS, GOLDS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ANSWER, min_size=1, max_size=12), st.data())
def test_a_remembered_result_is_what_the_careful_path_gives(answers, data):
    extract._decided_by_output.clear()
    # Each answer twice or more, the second time with another CoT (a remembered result is
    # reused for any CoT, so it must not depend on it).
    stream = answers + [(t, o, data.draw(COTS), c, g) for t, o, _, c, g in answers]
    for answer_type, output, cot, choices, gold in data.draw(st.permutations(stream)):
        scored = extract_answer(answer_type, extraction_output=output, cot=cot, choices=choices, gold=gold)
        try:
            careful = _extract(answer_type, output, cot, choices, gold, DEFAULT_REL_TOL)
        except Exception:  # the safety net answered: checked below
            assert scored.method == "error"
            continue
        assert scored == careful, (answer_type, output, cot, choices, gold)


def test_an_answer_decided_by_its_output_is_scored_once_per_question():
    """The second condition answering "(B)" to the same question gets the first one's result
    (the same object), whatever its CoT; an answer that needed its CoT is not remembered."""
    extract._decided_by_output.clear()
    options, gold = ["floor", "door", "hallway"], ["door"]
    first = extract_answer("multiplechoice", extraction_output="(B)", cot="A long CoT.", choices=options, gold=gold)
    again = extract_answer("multiplechoice", extraction_output="(B)", cot="Other. (A)", choices=options, gold=gold)
    assert again is first and first.outcome == "correct"
    from_cot = extract_answer("multiplechoice", extraction_output="", cot="So (C).", choices=options, gold=gold)
    other_cot = extract_answer("multiplechoice", extraction_output="", cot="So (B).", choices=options, gold=gold)
    assert (from_cot.letter, other_cot.letter) == ("C", "B")


def test_the_memo_is_bounded():
    extract._decided_by_output.clear()
    for i in range(extract.OUTPUT_MEMO_SIZE + 10):
        extract_answer("number", extraction_output=str(i), cot=None, choices=None, gold=["5"])
    assert 0 < len(extract._decided_by_output) <= extract.OUTPUT_MEMO_SIZE


@settings(max_examples=200, deadline=None)
@given(st.one_of(ANSWERY, st.text(max_size=20)))
def test_remembered_gold_numbers_and_normalised_texts_are_the_plain_ones(text):
    try:
        parsed = numbers_in(text)
    except ValueError:
        with pytest.raises(ValueError):
            _gold_number(text)
    else:
        assert _gold_number(text) == (parsed[0] if parsed else None)
    assert normalized(text) == normalize_text(text)


NEGATIONS = st.sampled_from(
    [
        "not",
        "NOT",
        "Not",
        "n't",
        "N’T",
        "never",
        "Rather than",
        "instead of",
        "İnstead of",  # U+0130: the pattern ignores case with its own folding
        "ınstead of",
        "except",
        "Except for",
        "nor",
        "no longer",
        "exclude",
        "Eliminate",
        "rule out",
        "RULE OUT",
        "other than",
        "don",
        "K",
        "ſ",
        "",
    ]
)
FILLERS = st.lists(st.sampled_from(["the", "option", "is", "just", "only", "a", "it", "be", "x"]), max_size=4)
#: Texts before a mention that are, or nearly are, a negation: junk, a negation word, spaces,
#: up to four filler words, opening quotes or brackets.
BEFORE = st.builds(
    lambda junk, word, space, fillers, quote: junk + word + space + "".join(f + " " for f in fillers) + quote,
    st.text(max_size=6),
    NEGATIONS,
    st.sampled_from([" ", "  ", "\n", "", "\t"]),
    FILLERS,
    st.sampled_from(["", "(", '"', "“", "*", "([", "x"]),
)


@settings(max_examples=1500, deadline=None)
@given(BEFORE, st.sampled_from(["anxiety", "(B)", "C"]), st.sampled_from(["", " is not", ") is incorrect", "."]))
def test_the_negation_precheck_skips_only_texts_without_a_negation(before, mention, after):
    text = before + mention + after
    start, end = len(before), len(before) + len(mention)
    window = text[max(0, start - 48) : start]
    plain = (
        bool(_NEGATED_BEFORE.search(window)) or _NEGATED_AFTER.match(text, end, min(len(text), end + 48)) is not None
    )
    assert negated(text, start, end, 0) == plain, text
