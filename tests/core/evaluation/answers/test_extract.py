"""extract_answer on real-world phrasings of every answer type, the three outcomes and spans."""

from __future__ import annotations

import pytest

from thoughtdesk.core.evaluation.answers import extract_answer

FEELINGS = ["sadness", "anxiety", "inspiration", "discomfort", "insights"]
PLACES = ["floor", "front door", "door", "entrance porch", "hallway"]


def _slice(span: tuple[int, int] | None) -> slice:
    assert span is not None, "no span"
    return slice(*span)


def mc(output, gold="inspiration", choices=FEELINGS, cot=None):
    return extract_answer("multiplechoice", extraction_output=output, cot=cot, choices=choices, gold=[gold])


@pytest.mark.parametrize(
    "output",
    [
        "C",
        "C.",
        " C",
        "(C)",
        "C)",
        "[C]",
        "**C**",
        "**C)**",
        "**(C) inspiration**",
        "Option C",
        "option (C)",
        "Choice (c) is correct",
        "C) inspiration",
        "C. inspiration",
        "(c)",
        "c",
        "The answer is C",
        "Answer: C",
        "answer: (C)",
        "The correct option is C.",
        "I would go with C.",
        "inspiration",
        "Inspiration.",
        "INSPIRATION",
        "inspirations",
        "the inspiration",
        "It is not anxiety; it is inspiration",
        "Not anxiety, but inspiration.",
        "Therefore, among A through E, the answer is (c)",
        "Therefore, among A through E, the answer is C.",
        "C is the answer",
        "C is correct, A is not",
        "Letter C",
        "C: inspiration",
        "The best answer is C) inspiration, since sadness is not implied.",
    ],
)
def test_multiple_choice_correct(output):
    result = mc(output)
    assert result.outcome == "correct", result
    assert result.letter == "C"
    assert result.value == "C) inspiration"


@pytest.mark.parametrize(
    "output,reason",
    [
        ("A or C", "ambiguous: A or C"),
        ("either A or C.", "ambiguous: A or C"),
        ("A, B, and D.", "ambiguous: A or B or D"),
        ("A) sadness and C) inspiration.", "ambiguous: A or C"),
        ("sadness or inspiration", "ambiguous: A or C"),
        ("none of the above.", "no single answer: 'none of the above'"),
        ("All of the above", "no single answer: 'All of the above'"),
    ],
)
def test_multiple_choice_ambiguous(output, reason):
    result = mc(output, cot="Therefore, the answer is C.")
    assert result.outcome == "unextractable"
    assert result.reason == reason
    # an ambiguous stated answer is final: the CoT is not used to break the tie
    assert result.source == "extraction"


@pytest.mark.parametrize(
    "output,letter",
    [
        ("A guard is typically there, so the answer is D", "D"),
        ("D) A Picture Book.", "D"),
        ("B) trees, because water is everywhere", "B"),
        ("The answer is vitamin D deficiency", "E"),
    ],
)
def test_articles_and_words_are_not_letters(output, letter):
    choices = ["water", "trees", "air", "meals", "vitamin D deficiency"]
    gold = choices["ABCDE".index(letter)]
    result = mc(output, gold=gold, choices=choices)
    assert (result.outcome, result.letter) == ("correct", letter), result


def test_longest_option_text_wins():
    result = mc("front door", gold="front door", choices=PLACES)
    assert result.letter == "B"
    result = mc("the door", gold="door", choices=PLACES)
    assert result.letter == "C"


def test_plural_option_matches():
    result = mc("insight", gold="insights")
    assert result.letter == "E" and result.outcome == "correct"


def test_wrong_answer_is_incorrect_not_unextractable():
    result = mc("B) anxiety")
    assert (result.outcome, result.letter, result.reason) == ("incorrect", "B", "")


def test_gold_not_among_choices_is_reported_not_raised():
    result = mc("C", gold="joy")
    assert result.outcome == "unextractable"
    assert result.reason == "gold answer 'joy' is not among the choices"
    assert result.value == "C) inspiration"  # the extraction itself is still shown


def test_gold_case_and_trailing_period_are_ignored():
    choices = ["navigate ships.", "study the weather.", "predict volcanic eruptions.", "map the Earth's surface."]
    result = mc("A) navigate ships.", gold="Navigate ships", choices=choices)
    assert result.outcome == "correct"


@pytest.mark.parametrize(
    "cot,method",
    [
        ("Sadness is unlikely. Therefore, the answer is C) inspiration.", "cot:the_answer_is"),
        ("Let's think.\nAnswer: C", "cot:the_answer_is"),
        ("We rule out A.\n\nSo the final answer is (C).", "cot:the_answer_is"),
        ("Thus, \\boxed{C}", "cot:boxed"),
        ("(A) sadness: no. (B) anxiety: no. (C) inspiration: yes, that fits.", "cot:last_option"),
        ("Sadness does not fit. Therefore, inspiration.", "cot:therefore"),
    ],
)
def test_cot_is_used_when_extraction_output_is_empty(cot, method):
    result = mc("", cot=cot)
    assert (result.outcome, result.method, result.source) == ("correct", method, "cot"), result
    start, end = result.span
    assert cot[start:end].lower() in ("c", "inspiration")


def test_span_points_into_the_extraction_output():
    output = "Therefore, among A through E, the answer is (C) inspiration."
    result = mc(output)
    assert result.source == "extraction" and output[_slice(result.span)] == "C"
    assert result.method == "extraction_output:letter"


def test_last_cue_in_cot_wins():
    cot = "At first the answer is A. But wait, sadness is wrong. So the answer is C."
    result = mc(None, cot=cot)
    assert result.letter == "C" and cot[_slice(result.span)] == "C"


def test_pubmedqa_yes_no_maybe_as_three_choices():
    choices = ["yes", "no", "maybe"]
    for output, label, letter in [
        ("maybe", "maybe", "C"),
        ("No.", "no", "B"),
        ("(A) yes", "yes", "A"),
        ("C", "maybe", "C"),
    ]:
        result = extract_answer("multiplechoice", extraction_output=output, cot=None, choices=choices, gold=["maybe"])
        assert (result.value, result.letter) == (label, letter), (output, result)
        assert result.outcome == ("correct" if label == "maybe" else "incorrect")


@pytest.mark.parametrize(
    "output,value",
    [
        ("Yes", "yes"),
        ("yes.", "yes"),
        ("YES", "yes"),
        ("True", "yes"),
        ("true.", "yes"),
        ("No", "no"),
        ("no.", "no"),
        ("False", "no"),
        ("B) False.", "no"),
        ("A) True", "yes"),
        ("Yes, because the bell has no effect on the scale.", "yes"),
        ("No, there is no evidence.", "no"),
        ("Therefore, the answer (Yes or No) is NO.", "no"),
        ("the answer is yes", "yes"),
        ("It is not true.", "no"),
        ("It is not false", "yes"),
    ],
)
def test_bool(output, value):
    result = extract_answer("bool", extraction_output=output, cot=None, choices=["True", "False"], gold=["True"])
    assert result.value == value, result
    assert result.outcome == ("correct" if value == "yes" else "incorrect")


@pytest.mark.parametrize(
    "output,reason_start",
    [
        ("Yes or no, hard to say", "ambiguous"),
        ("N/A", "no single answer"),
        ("It depends on the exchange rate.", "no single answer"),
        ("Ja.", "no yes/no answer found"),
        ("there is no evidence", "no yes/no answer found"),
    ],
)
def test_bool_unextractable(output, reason_start):
    result = extract_answer("bool", extraction_output=output, cot=None, choices=[], gold=["False"])
    assert result.outcome == "unextractable"
    assert result.reason.startswith(reason_start), result


def test_bool_from_cot():
    cot = "The bell weighs 2,080 pounds and a cow 1,500, so yes, they would balance."
    result = extract_answer("bool", extraction_output="", cot=cot, choices=[], gold=["yes"])
    assert (result.outcome, result.method) == ("correct", "cot:last_sentence")
    assert cot[_slice(result.span)] == "yes"


@pytest.mark.parametrize(
    "output,gold",
    [
        ("18", "18"),
        ("$18", "18"),
        ("$18.00", "18"),
        ("18 dollars.", "18"),
        ("1,234", "1234"),
        ("1,234.5", "1234.5"),
        ("-3", "-3"),
        ("−3", "-3"),
        ("3/4", "0.75"),
        ("0.75", "3/4"),
        ("1 1/2 cups", "1.5"),
        ("\\frac{3}{4}", "0.75"),
        ("25%", "25"),
        ("25%", "0.25"),
        ("25", "25%"),
        ("2.5e3", "2500"),
        ("The answer is 42.", "42"),
        ("5 + 3 = 8", "8"),
        ("eight", "8"),
        ("18.00001", "18"),
        ("€ 7,000", "7000"),
        ("It takes 12 minutes.", "12"),
    ],
)
def test_number_correct(output, gold):
    result = extract_answer("number", extraction_output=output, cot=None, choices=[], gold=[gold])
    assert result.outcome == "correct", (output, gold, result)
    assert output[_slice(result.span)]


@pytest.mark.parametrize("output,gold", [("17", "18"), ("18.1", "18"), ("-18", "18"), ("1,234", "1.234")])
def test_number_incorrect(output, gold):
    assert extract_answer("number", extraction_output=output, cot=None, choices=[], gold=[gold]).outcome == "incorrect"


def test_number_from_cot_markers():
    cases = [
        ("She has 3 apples and buys 5.\n#### 8", "cot:####"),
        ("So 3 + 5 = \\boxed{8}.", "cot:boxed"),
        ("3 apples plus 5 apples. The answer is 8.", "cot:the_answer_is"),
        ("3 apples plus 5 apples makes 8 apples", "cot:last_number"),
    ]
    for cot, method in cases:
        result = extract_answer("number", extraction_output=None, cot=cot, choices=[], gold=["8"])
        assert (result.outcome, result.method, result.value) == ("correct", method, 8.0), (cot, result)
        assert cot[_slice(result.span)] == "8"


@pytest.mark.parametrize(
    "output,reason_start",
    [
        ("9" * 400, "number overflows"),
        ("1e999", "number overflows"),
        ("5 or 6", "ambiguous: 5 or 6"),
        ("many", "no number found"),
    ],
)
def test_number_unextractable(output, reason_start):
    result = extract_answer("number", extraction_output=output, cot=None, choices=[], gold=["5"])
    assert result.outcome == "unextractable" and result.reason.startswith(reason_start), result


def test_gold_that_is_not_a_number():
    result = extract_answer("number", extraction_output="5", cot=None, choices=[], gold=["five-ish"])
    assert result.outcome == "unextractable" and "is not a number" in result.reason


@pytest.mark.parametrize(
    "output,gold,outcome,f1",
    [
        ("The Eiffel Tower", "eiffel tower", "correct", 1.0),
        ("Eiffel Tower.", "the Eiffel tower", "correct", 1.0),
        ("the tower in Paris", "Eiffel Tower", "incorrect", 0.4),
        ("Paris", "Eiffel Tower", "incorrect", 0.0),
    ],
)
def test_free_text(output, gold, outcome, f1):
    result = extract_answer("text", extraction_output=output, cot=None, choices=[], gold=[gold])
    assert result.outcome == outcome
    assert result.f1 == pytest.approx(f1)


def test_free_text_from_cot_statement():
    cot = "It was built for the 1889 fair. The answer is the Eiffel Tower."
    result = extract_answer("text", extraction_output=None, cot=cot, choices=[], gold=["Eiffel Tower"])
    assert (result.outcome, result.method) == ("correct", "cot:the_answer_is")
    assert cot[_slice(result.span)] == "the Eiffel Tower"


def test_collection_any_gold():
    gold = ["Barack Obama", "Obama", "President Obama"]
    for output, outcome in [
        ("Obama", "correct"),
        ("president obama.", "correct"),
        ("It was Barack Obama, in 2009", "correct"),
        ("Joe Biden", "incorrect"),
    ]:
        result = extract_answer("collection", extraction_output=output, cot=None, choices=[], gold=gold)
        assert result.outcome == outcome, (output, result)


@pytest.mark.parametrize(
    "kwargs,reason",
    [
        (
            dict(answer_type="multiplechoice", extraction_output="", cot="", choices=FEELINGS, gold=["anxiety"]),
            "empty CoT and empty extraction output",
        ),
        (
            dict(answer_type="multiplechoice", extraction_output=None, cot=None, choices=FEELINGS, gold=["anxiety"]),
            "empty CoT and empty extraction output",
        ),
        (
            dict(answer_type="essay", extraction_output="x", cot="", choices=[], gold=["x"]),
            "unknown answer type 'essay'",
        ),
        (
            dict(answer_type="multiplechoice", extraction_output="C", cot="", choices=[], gold=["x"]),
            "multiple-choice sample has no choices",
        ),
        (
            dict(answer_type="multiplechoice", extraction_output="C", cot="", choices=FEELINGS, gold=[]),
            "no gold answer",
        ),
        (
            dict(answer_type="multiplechoice", extraction_output="C", cot="", choices=FEELINGS, gold=[None]),
            "no gold answer",
        ),
    ],
)
def test_bad_input_is_a_defined_outcome(kwargs, reason):
    answer_type = kwargs.pop("answer_type")
    result = extract_answer(answer_type, **kwargs)
    assert result.outcome == "unextractable" and result.reason == reason
    assert result.correct is None


@pytest.mark.parametrize(
    "output", ["1 1/2.", "The answer is 1 1/2.", "The answer is 1 1/2, since ...", "So 1 1/2!", "**1 1/2**."]
)
def test_mixed_number_at_the_end_of_a_sentence(output):
    """ "1 1/2." was read as its whole part (1): the fraction refused any '.' or ',' after it."""
    result = extract_answer("number", extraction_output=output, cot=None, choices=[], gold=["1.5"])
    assert (result.outcome, result.value) == ("correct", 1.5)


@pytest.mark.parametrize(
    "answer_type,output,choices,gold",
    [
        ("multiplechoice", "Between A and E, I pick C", FEELINGS, "inspiration"),
        ("multiplechoice", "BETWEEN A AND E, I PICK C", FEELINGS, "inspiration"),
        ("multiplechoice", "AMONG A THROUGH E, THE ANSWER IS C.", FEELINGS, "inspiration"),
        ("multiplechoice", "Among a through e, I pick C", FEELINGS, "inspiration"),
        ("bool", "(Yes or No) No.", [], "no"),
    ],
)
def test_options_repeated_from_the_prompt_are_not_answers(answer_type, output, choices, gold):
    """ "between A and E", "(Yes or No)" echo the prompt; read as answers they would make the
    output ambiguous ("C or E", "yes or no")."""
    result = extract_answer(answer_type, extraction_output=output, cot=None, choices=choices, gold=[gold])
    assert result.outcome == "correct", result


# -- letters inside bracketed names, and refusals that list every option (issue 23, point 16) --

VITAMINS = ["a balanced diet", "regular exercise", "sunlight exposure (Vitamin D)", "sleep", "iron tablets"]


@pytest.mark.parametrize(
    "output,letter",
    [
        ("C) sunlight exposure (Vitamin D)", "C"),
        ("C) sunlight exposure (Vitamin D).", "C"),
        ("The answer is C) sunlight exposure (Vitamin D), which the body needs.", "C"),
        ("A) a balanced diet (Vitamin B12)", "A"),
        ("B) regular exercise (type A)", "B"),
        ("E) iron tablets (hepatitis B)", "E"),
        ("sunlight exposure (Vitamin D)", "C"),
        ("C (vitamin D)", "C"),
    ],
)
def test_a_letter_inside_a_bracketed_name_is_not_an_option(output, letter):
    """ "(Vitamin D)" ends in "D)", an option form: it was read as ambiguous C or D."""
    result = mc(output, gold=VITAMINS["ABCDE".index(letter)], choices=VITAMINS)
    assert (result.outcome, result.letter) == ("correct", letter), result


@pytest.mark.parametrize(
    "output,declined",
    [
        ("the region (A, B, C, D, or E) cannot be identified", "cannot be identified"),
        ("The region (A, B, C, D, or E) cannot be identified from the image.", "cannot be identified"),
        ("The answer cannot be determined from the options (A, B, C, D, or E).", "cannot be determined"),
        ("It is impossible to determine which of A, B, C, D or E is right.", "impossible to determine"),
        ("None of the options A, B, C, D or E is correct.", "None of the options"),
        ("None of the given options (A, B, C, D, E) fits.", "None of the given options"),
        ("There is no correct answer among A, B, C, D and E.", "no correct answer"),
        ("I am unable to choose between options A, B, C, D, and E.", "unable to choose"),
        ("I can't choose between (A), (B), (C), (D) or (E).", "can't choose"),
        ("One cannot say whether it is A, B, C, D or E.", "cannot say"),
    ],
)
def test_a_refusal_that_lists_the_options_is_not_an_answer(output, declined):
    """A refusal that lists every option was read as its last letter (E, correct when E is gold)."""
    result = mc(output, gold="insights", cot="So the answer is E.")
    assert result.outcome == "unextractable", result
    assert result.reason == f"no single answer: {declined!r}"
    assert result.source == "extraction"  # final: the CoT does not break the tie


@pytest.mark.parametrize(
    "output,reason",
    [
        ("A, B, C or D", "ambiguous: A or B or C or D"),
        ("(A, B, C, D, or E)", "ambiguous: A or B or C or D or E"),
        ("The answer is (A or B).", "ambiguous: A or B"),
        ("Options A, B, C and D are all plausible.", "ambiguous: A or B or C or D"),
        ("option A/B", "ambiguous: A or B"),
    ],
)
def test_a_list_of_letters_is_every_letter_in_it(output, reason):
    """ "(A, B, C, D, or E)" and "Options A, B" name every letter, not only the one written in an
    option form ("E)", "Options A")."""
    result = mc(output, gold="insights")
    assert (result.outcome, result.reason) == ("unextractable", reason), result


def test_a_cot_that_lists_the_options_without_choosing_has_no_answer():
    """Without an answer statement the CoT's last option form counts; a list of all the options
    ("(A, B, C, D, or E)") is not one."""
    cot = "We look at each region. The region (A, B, C, D, or E) cannot be identified"
    result = mc("", gold="insights", cot=cot)
    assert result.outcome == "unextractable", result
    result = mc("", gold="inspiration", cot=cot + ", but (C) fits best")
    assert (result.outcome, result.letter) == ("correct", "C"), result


def test_a_refused_cot_statement_is_final():
    cot = "Looking at the picture. Therefore, the region (A, B, C, D, or E) cannot be identified."
    result = mc("", gold="insights", cot=cot)
    assert (result.outcome, result.reason) == ("unextractable", "no single answer: 'cannot be identified'"), result
