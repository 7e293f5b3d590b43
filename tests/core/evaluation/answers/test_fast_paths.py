"""The fast paths of answer extraction: each must fire on the inputs it is for, and give there what
the careful path gives; they exist only for speed (see tests/benchmarks/bench_scoring.py).

Fast paths for whole short extraction outputs, tried in ``extract.py`` before the careful path:

- multiple choice, ``choice.whole_letter``: "C", "(C)", "**C**", "C) inspiration." (< 160 chars);
- yes/no/maybe, ``choice.whole_label``: "Yes.", "false", "B) False." (< 40 chars);
- numbers, inline in ``extract._score_number``: one number in "18", "$18.00", "18 apples." (< 40
  chars, no "=").

Cheap pre-checks that skip a regex scan when the text cannot match (``segments.py``):
``prompt_echo_spans`` (no "(", "mong", "etween"), ``cue_segments`` (no "nswer"/"NSWER" and no
option/choice/response), ``cot_segments`` (no backslash: no ``\\boxed``; no "####").

A fast path switched off gives the same answers, only slower, so "the same answers" alone cannot
show that it works: the tests below also run extraction with the careful path made unavailable
(:func:`careful_path_unavailable`), where an input meant for a fast path must still be scored.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thoughtdesk.core.evaluation.answers import extract
from thoughtdesk.core.evaluation.answers.choice import (
    LABELS,
    find_choice,
    find_label,
    label_of,
    matcher,
    whole_label,
    whole_letter,
)
from thoughtdesk.core.evaluation.answers.extract import _extract, _in_segments
from thoughtdesk.core.evaluation.answers.number import DEFAULT_REL_TOL, ParsedNumber, find_number
from thoughtdesk.core.evaluation.answers.result import Extraction, Found, NotFound
from thoughtdesk.core.evaluation.answers.segments import (
    _PROMPT_ECHO,
    _STRONG_CUE,
    _WEAK_CUE,
    boxed_segment,
    cot_segments,
    cue_segments,
    hashes_segment,
    prompt_echo_spans,
)

CHOICES = ["sadness", "anxiety", "inspiration", "discomfort", "insights"]


@contextmanager
def careful_path_unavailable() -> Iterator[None]:
    """Within: the careful path (segment search) fails the test if extraction reaches it."""

    def careful_path(text, source, find):
        raise AssertionError(f"the careful path ran on {text!r} ({source})")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(extract, "_in_segments", careful_path)
        yield


def fast(answer_type: str, output: str, choices: list[str], gold: list[str]) -> Extraction:
    """Score ``output`` by its fast path alone (``_extract``: no safety net hides the failure)."""
    with careful_path_unavailable():
        return _extract(answer_type, output, None, choices, gold, DEFAULT_REL_TOL)


# -- multiple choice: whole_letter ----------------------------------------------------------


def _slice(span: tuple[int, int] | None) -> slice:
    assert span is not None, "no span"
    return slice(*span)


def careful_choice(text: str) -> Found | NotFound | None:
    m = matcher(tuple(CHOICES))
    masks = prompt_echo_spans(text)
    return _in_segments(text, "extraction", lambda t, s, e: find_choice(t, s, e, m, masks))


PRE = ["", " ", "(", "**", "[", "{", "**("]
CLOSE = ["", ")", ".", ":", "]", "}", "**", ")**"]
POST = ["", ".", " ", "\n", "**"]

#: What whole_letter is for: a letter among the choices, alone or with its own option text.
WHOLE_LETTERS = st.builds(
    lambda pre, index, close, own_text, case, post: (
        f"{pre}{'ABCDE'[index]}{close}{(' ' + case(CHOICES[index])) if own_text else ''}{post}",
        index,
    ),
    st.sampled_from(PRE),
    st.integers(0, len(CHOICES) - 1),
    st.sampled_from(CLOSE),
    st.booleans(),
    st.sampled_from([str, str.capitalize, str.upper]),
    st.sampled_from(POST),
)

#: Letter-like outputs the fast path is not for, mixed with ones it is for.
LETTER_OUTPUTS = st.builds(
    lambda pre, letter, close, text, post: f"{pre}{letter}{close}{text}{post}",
    st.sampled_from(PRE),
    st.sampled_from(list("ABCDEFabc")),
    st.sampled_from(CLOSE),
    st.sampled_from(["", " inspiration", " Inspiration", " sadness", " anxiety and more", "  insights"]),
    st.sampled_from(POST),
)


@settings(max_examples=300, deadline=None)
@given(WHOLE_LETTERS)
def test_whole_letter_scores_what_it_is_for_and_agrees_with_careful_path(case):
    text, index = case
    scored = fast("multiplechoice", text, CHOICES, [CHOICES[index]])
    assert (scored.outcome, scored.letter, scored.method) == ("correct", "ABCDE"[index], "extraction_output:letter")
    assert text[_slice(scored.span)] == "ABCDE"[index]
    careful = careful_choice(text)
    assert isinstance(careful, Found) and careful.value == index, (text, careful)


@settings(max_examples=400, deadline=None)
@given(LETTER_OUTPUTS)
def test_whole_letter_when_it_fires_agrees_with_careful_path(text):
    found = whole_letter(text, matcher(tuple(CHOICES)))
    careful = careful_choice(text)
    # It may decline (the careful path decides); whenever it answers, the answer is the same
    # option, and its span is the letter ("C inspiration": letter here, option text there).
    assert found is None or (isinstance(careful, Found) and careful.value == found.value), (text, careful)
    assert found is None or (
        isinstance(found.value, int) and text[found.start : found.end].upper() == "ABCDE"[found.value]
    )


@pytest.mark.parametrize("text", ["c", "(b)", "F", "C) anxiety", "C anxiety and more", "The answer is C"])
def test_whole_letter_leaves_other_outputs_to_the_careful_path(text):
    """Lower case, a letter that is no option, another option's text, a sentence: not for it."""
    assert whole_letter(text, matcher(tuple(CHOICES))) is None


def test_whole_letter_puts_the_span_on_the_letter():
    """Where it shows: "C inspiration" without punctuation is the letter C (the careful path
    would mark the option text), and an output at the length limit still takes the fast path."""
    result = extract.extract_answer(
        "multiplechoice", extraction_output="C inspiration", cot=None, choices=CHOICES, gold=["inspiration"]
    )
    assert (result.outcome, result.method, result.span) == ("correct", "extraction_output:letter", (0, 1))
    long_option = "x" * 150
    scored = fast("multiplechoice", f"B) {long_option}.", ["a", long_option], [long_option])
    assert (scored.outcome, scored.letter) == ("correct", "B")


# -- yes/no/maybe: whole_label --------------------------------------------------------------

OPTION_LISTS = st.sampled_from([["True", "False"], ["yes", "no", "maybe"], []])

LABEL_WORDS = ["yes", "Yes", "YES", "no", "No", "True", "true", "false", "FALSE", "maybe"]


@st.composite
def whole_labels(draw) -> tuple[list[str], str, str]:
    """What whole_label is for: a label word alone, or after the letter of the option it names."""
    options = draw(OPTION_LISTS)
    word = draw(st.sampled_from(LABEL_WORDS))
    letters = ["ABC"[i] for i, option in enumerate(options) if label_of(option) == LABELS[word.lower()]]
    if letters and draw(st.booleans()):
        lead = draw(st.sampled_from(["{}) ", "({}) ", "{}. ", "{}: ", " {})"])).format(letters[0])
    else:
        lead = draw(st.sampled_from(["", " ", "**"]))
    return options, word, lead + word + draw(st.sampled_from(["", ".", "!", " ", "**", ".\n"]))


LABEL_OUTPUTS = st.builds(
    lambda pre, word, post: f"{pre}{word}{post}",
    st.sampled_from(["", " ", "A) ", "B) ", "(A) ", "**", "B. ", "C) "]),
    st.sampled_from(["yes", "Yes", "NO", "no", "True", "false", "maybe"]),
    st.sampled_from(["", ".", "!", " ", "**", ".\n"]),
)


def careful_label(text: str) -> Found | NotFound | None:
    return _in_segments(text, "extraction", lambda t, s, e: find_label(t, s, e, prompt_echo_spans(t)))


@settings(max_examples=300, deadline=None)
@given(whole_labels())
def test_whole_label_scores_what_it_is_for_and_agrees_with_careful_path(case):
    options, word, text = case
    label = LABELS[word.lower()]
    scored = fast("bool", text, options, [label])
    assert (scored.outcome, scored.value, scored.method) == ("correct", label, "extraction_output:label"), text
    assert text[_slice(scored.span)] == word
    careful = careful_label(text)
    assert isinstance(careful, Found) and careful.value == label, (text, careful)


@settings(max_examples=300, deadline=None)
@given(LABEL_OUTPUTS, OPTION_LISTS)
def test_whole_label_when_it_fires_agrees_with_careful_path(text, options):
    found = whole_label(text, options)
    careful = careful_label(text)
    assert found is None or (isinstance(careful, Found) and careful.value == found.value), (text, careful)


@pytest.mark.parametrize("text", ["A) False", "C) yes", "Yes, because it floats.", "not true"])
def test_whole_label_leaves_other_outputs_to_the_careful_path(text):
    """A letter naming the other label (or no option), a sentence, a negation: not for it."""
    assert whole_label(text, ["True", "False"]) is None


def test_whole_label_puts_the_span_on_the_label():
    """Where it shows: in "B) False." the span is the word False (the careful path would mark B)."""
    result = extract.extract_answer(
        "bool", extraction_output="B) False.", cot=None, choices=["True", "False"], gold=["False"]
    )
    assert (result.outcome, result.method, result.span) == ("correct", "extraction_output:label", (3, 8))


# -- numbers --------------------------------------------------------------------------------

#: What the number fast path is for: one number, with its sign, currency, unit or full stop.
WHOLE_NUMBERS = st.builds(
    lambda pre, number, post: (f"{pre}{number[0]}{post}", number[1]),
    st.sampled_from(["", "$", "€ ", "-", "−", " ", "**"]),
    st.sampled_from(
        [
            ("18", 18.0),
            ("18.00", 18.0),
            ("1,234", 1234.0),
            ("3/4", 0.75),
            ("1 1/2", 1.5),
            ("2.5e3", 2500.0),
            ("\\frac{3}{4}", 0.75),
            ("25%", 25.0),
            (".5", 0.5),
        ]
    ),
    st.sampled_from(["", ".", " apples.", " dollars", " cups", "**", "\n"]),
)
WHOLE_NUMBERS |= st.sampled_from([("eighteen", 18.0), ("Twelve.", 12.0), ("$18", 18.0)])


@settings(max_examples=300, deadline=None)
@given(WHOLE_NUMBERS)
def test_number_fast_path_scores_what_it_is_for_and_agrees_with_careful_path(case):
    text, magnitude = case
    scored = fast("number", text, [], ["0"])
    assert scored.method == "extraction_output:number" and scored.source == "extraction", (text, scored)
    assert isinstance(scored.value, float) and abs(scored.value) == pytest.approx(magnitude)
    careful = _in_segments(text, "extraction", find_number)
    assert isinstance(careful, Found) and isinstance(careful.value, ParsedNumber), (text, careful)
    assert scored.span is not None
    assert (careful.value.value, careful.start, careful.end) == (scored.value, *scored.span), text


@pytest.mark.parametrize("text", ["5 + 3 = 8", "5 or 6", "It is 12, not 13.", "x" * 40 + " 18"])
def test_number_fast_path_leaves_other_outputs_to_the_careful_path(text):
    """An equation, two numbers, a long output: the careful path decides (and is reached)."""
    with pytest.raises(AssertionError, match="the careful path ran"):
        fast("number", text, [], ["8"])


# -- pre-checks before a regex scan ---------------------------------------------------------

CUE_PIECES = st.sampled_from(
    [
        "the answer is ",
        "The Answer: ",
        "THE ANSWER IS ",
        "Answer ",
        "answers are ",
        "correct option is ",
        "Best choice: ",
        "the right response would be ",
        "C",
        "(B)",
        ". ",
        "\n",
        "so ",
        "among A through E",
        "Among A through E, ",
        "AMONG A THROUGH E",
        "BETWEEN A AND E",
        "bEtWeEn A and C",
        "between A and C",
        "(Yes or No)",
        "(A-E)",
        "(arabic numerals)",
        "(",
        ")",
        "\\boxed{",
        "\\fbox{",
        "\\frac{1}{2}",
        "}",
        "####",
        "### ",
        " 42",
        "yes",
    ]
)
CUE_TEXTS = st.lists(st.one_of(CUE_PIECES, st.text(max_size=6)), max_size=10).map("".join)


@settings(max_examples=500, deadline=None)
@given(CUE_TEXTS)
def test_prompt_echo_precheck_skips_only_texts_without_an_echo(text):
    assert prompt_echo_spans(text) == [m.span() for m in _PROMPT_ECHO.finditer(text)]


@pytest.mark.parametrize(
    "text,span",
    [
        ("Therefore, among A through E, C.", (11, 28)),
        ("between A and E: C", (0, 15)),
        ("Options (A-E): C", (8, 13)),
        ("the answer (Yes or No) is yes", (11, 22)),
    ],
)
def test_prompt_echo_is_found_without_and_with_a_bracket(text, span):
    assert prompt_echo_spans(text) == [span]


@pytest.mark.parametrize("text", ["BETWEEN A AND E, I PICK C", "AMONG A THROUGH E: C", "BeTwEeN A and E"])
def test_prompt_echo_precheck_finds_every_case(text):
    """The pre-check looked for 'mong'/'etween' case-sensitively while the echo regex ignores
    case: 'BETWEEN A AND E, I PICK C' was ambiguous (C or E) and 'Between A and E, I pick C' was C."""
    spans = prompt_echo_spans(text)
    assert spans and spans == [m.span() for m in _PROMPT_ECHO.finditer(text)]


@settings(max_examples=500, deadline=None)
@given(CUE_TEXTS)
def test_cue_precheck_skips_only_texts_without_a_cue(text):
    segments = list(cue_segments(text))
    assert bool(segments) == bool(_STRONG_CUE.search(text) or _WEAK_CUE.search(text)), text


@pytest.mark.parametrize(
    "text,locator",
    [
        ("So the answer is C.", "the_answer_is"),
        ("THE ANSWER IS C.", "the_answer_is"),
        ("The correct option would be C.", "the_answer_is"),
        ("Best choice: C", "the_answer_is"),
        ("Answer C", "answer_letter"),
    ],
)
def test_cues_are_found_in_every_spelling(text, locator):
    assert [s.locator for s in cue_segments(text)][:1] == [locator]


@settings(max_examples=500, deadline=None)
@given(CUE_TEXTS)
def test_cot_segments_precheck_skips_only_texts_without_a_marker(text):
    locators = [s.locator for s in cot_segments(text)]
    assert ("boxed" in locators) == (boxed_segment(text) is not None), text
    assert ("####" in locators) == (hashes_segment(text) is not None), text


@pytest.mark.parametrize(
    "text,locator,answer",
    [("So \\boxed{42}.", "boxed", "42"), ("\\fbox{7}", "boxed", "7"), ("She has 3.\n#### 8", "####", "8")],
)
def test_cot_markers_are_found(text, locator, answer):
    first = next(cot_segments(text))
    assert (first.locator, text[first.start : first.end]) == (locator, answer)


# -- the bare-letter pattern, letter first ---------------------------------------------------

#: The bare-letter pattern as first written, its look-behind first (tried at every position).
_BARE_LOOKBEHIND_FIRST = r"(?<![\w'’\-./$])({both})(?![\w'’\-/]|\.\w)"


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.sampled_from(list("ABCDEFabcdef xyz.,'’-/$()[]*\n_1é") + ["İ", "ſ"]), max_size=14).map("".join),
    st.integers(0, 14),
    st.integers(0, 14),
    st.sampled_from([2, 3, 5, 26]),
)
def test_the_bare_letter_pattern_finds_what_its_look_behind_first_form_finds(text, start, length, count):
    """``choice._letter_patterns`` puts the letter before the look-behind (a pattern that starts
    with its character class is scanned quickly, issue 27 point 6): the same matches and letter
    spans, from any start offset (the look-behind sees the characters before it)."""
    import re
    import string

    from thoughtdesk.core.evaluation.answers.choice import _letter_patterns

    letters = string.ascii_uppercase[:count]
    first_form = re.compile(_BARE_LOOKBEHIND_FIRST.format(both=f"[{letters}{letters.lower()}]"))
    _letters, _strong, bare = _letter_patterns(count)
    start = min(start, len(text))
    end = min(len(text), start + length)
    expected = [(m.span(), m.group(1)) for m in first_form.finditer(text, start, end)]
    assert [(m.span(), m.group(1)) for m in bare.finditer(text, start, end)] == expected


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.sampled_from(["(", ")", "yes", " or ", "no", "A", "-", "E", " to ", "among", "BETWEEN", " and ", "x", " "])
        | st.sampled_from(["true or false", "arabic numerals", "yes/no/maybe", "Yes or No or Maybe", "\n", "İ"]),
        max_size=10,
    ).map("".join)
)
def test_prompt_echoes_found_at_brackets_are_all_the_echoes(text):
    """``prompt_echo_spans`` tries the echo pattern only where a "(" is when the text has no
    "among" or "between" (issue 27, point 6): the spans a search of every position finds."""
    assert prompt_echo_spans(text) == [m.span() for m in _PROMPT_ECHO.finditer(text)]


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(["option", "OPTION", "Choice", "resp", "onse", "among", "BeTwEeN", "x", " ", "ı", "ſ", "İ"])
        | st.sampled_from(["optıon", "reſponse", "choİce", "cho", "ice", "amo", "ng"]),
        max_size=8,
    ).map("".join)
)
def test_the_word_pre_checks_find_what_their_patterns_find(text):
    """``segments._has_word``: ASCII text searched with ``in`` after lower-casing (issue 27,
    point 6), other text with the case-insensitive pattern: the same answer as the pattern."""
    from thoughtdesk.core.evaluation.answers.segments import _ANY_STRONG_WORD, _ECHO_WORD, _STRONG_WORDS, _has_word

    assert _has_word(text, _ANY_STRONG_WORD, _STRONG_WORDS) == (_ANY_STRONG_WORD.search(text) is not None)
    assert _has_word(text, _ECHO_WORD, ("among", "between")) == (_ECHO_WORD.search(text) is not None)


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(
        st.sampled_from(list("ABCDEabcde xyz.:,()[]{}*#\n\t") + ["option", "Choices", "LETTER", "optİon", "ı", "**"]),
        max_size=14,
    ).map("".join),
    st.integers(0, 14),
    st.integers(0, 14),
    st.sampled_from([2, 3, 5, 26]),
)
def test_the_strong_letter_pre_check_skips_only_texts_the_pattern_finds_nothing_in(text, start, length, count):
    """``choice.may_name_a_letter`` (issue 27, point 6): where it says no, the strong letter
    pattern finds nothing in that stretch."""
    from thoughtdesk.core.evaluation.answers.choice import _letter_patterns, may_name_a_letter

    letters, strong, _bare = _letter_patterns(count)
    start = min(start, len(text))
    end = min(len(text), start + length)
    if not may_name_a_letter(text, start, end, letters):
        assert list(strong.finditer(text, start, end)) == [], (text, start, end)
