"""ThoughtSource's own scoring test cases, ported.

Sources (read with the code search tool, OpenBioLink/ThoughtSource):
- libs/cot/tests/unit_tests/test_evaluate.py @ 733f262f: test_is_correct_multiplechoice,
  test_is_correct_bool (is_correct(type, pred, gold, choices));
- the same file at an older version (154f9de2): test_clean / test_clean_and_is_correct
  (clean(type, pred, num_choices) with 7 choices).

ThoughtSource passes a gold *letter* in these tests ("E", "B"), or a choice text ("5");
extract_answer accepts a single letter as gold when no choice has that text, so both forms are
ported as they are. The one case we deliberately do not support is written down below.
"""

from __future__ import annotations

import pytest

from thoughtdesk.core.evaluation.answers import extract_answer

SEVEN = ["1", "2", "3", "4", "5", "6", "7"]


def score(pred: str, gold: str, choices: list[str], answer_type: str = "multiplechoice"):
    return extract_answer(answer_type, extraction_output=pred, cot=None, choices=choices, gold=[gold])


@pytest.mark.parametrize("gold", ["E", "5"])
@pytest.mark.parametrize("pred", ["E", "E.", "(E)", "[E]", "{E}", "E)", "E "])
def test_letter_forms(pred, gold):
    result = score(pred, gold, SEVEN)
    assert result.outcome == "correct", result
    assert result.letter == "E"


@pytest.mark.parametrize(
    "pred",
    [
        "So the answer is B",
        "So the answer is B.",
        "Therefore, the answer is B",
        "The answer is B",
        "Answer is B",
        "Answer B",
        "The correct answer is B",
        "The correct answer B",
        "Correct answer is B",
        "Correct answer B",
        "Therefore, among A through F, the answer is B",
        # commented out in ThoughtSource's newest version, passing in its older clean() tests:
        "Among A through F, the answer is B",
        "Among A through F, the correct answer is B",
        "Therefore, among A through F, the correct answer is B",
        "B is the answer.",
        "B is the answer",
        "B is the correct answer",
        "B is the correct answer.",
        "B is the right answer",
        "B is the right answer.",
        "B is correct",
        "B is correct.",
        "B is right",
        "B is right.",
        "So the answer is (b)",
        "b is the answer",
        "(b) is the answer",
        "So the answer is b",
    ],
)
def test_answer_sentences(pred):
    result = score(pred, "B", SEVEN)
    assert result.outcome == "correct", result
    assert result.letter == "B"
    # and the same sentence against a wrong gold is incorrect, not correct by accident
    assert score(pred, "C", SEVEN).outcome == "incorrect"


@pytest.mark.parametrize("pred", ["e", "{e}"])
def test_lower_case_letters(pred):
    assert score(pred, "E", SEVEN).outcome == "correct"


@pytest.mark.parametrize(
    "choices,pred,gold",
    [
        (
            ["sadness", "anxiety", "inspiration", "discomfort", "insights"],
            "Therefore, among A through E, the answer is most likely C, inspiration.",
            "C",
        ),
        (
            ["sadness", "anxiety", "inspiration", "discomfort", "insights"],
            "Therefore, among A through E, the answer is most likely (C), inspiration.",
            "C",
        ),
        (
            ["facade", "front door", "doorway", "entrance porch", "hallway"],
            "Therefore, among A through E, the answer is (B) front door.",
            "B",
        ),
        (
            ["midwest", "countryside", "estate", "farming areas", "illinois"],
            "Therefore, among A through E, the answer is A, the midwest.",
            "A",
        ),
    ],
)
def test_letter_with_text(choices, pred, gold):
    assert score(pred, gold, choices).outcome == "correct"


@pytest.mark.parametrize(
    "pred,gold",
    [
        ("Therefore, the answer (Yes or No) is: No", "False"),
        ("Therefore, the answer (Yes or No) is No.", "No"),
        ("Therefore, the answer (Yes or No) is No.", "False"),
        ("Therefore, the answer (Yes or No) is Yes.", "Yes"),
        ("Therefore, the answer (Yes or No) is Yes.", "True"),
    ],
)
def test_bool(pred, gold):
    assert score(pred, gold, [], "bool").outcome == "correct"
    flipped = {"False": "True", "No": "Yes", "Yes": "No", "True": "False"}[gold]
    assert score(pred, flipped, [], "bool").outcome == "incorrect"


@pytest.mark.parametrize(
    "pred",
    [
        # commented out in ThoughtSource (they never settled it); we keep them apart as ambiguous
        "So the answer is (a), (b), or (e).",
        "Therefore, among A through E, the answer is A, B, C, or D.",
        "Therefore, among A through E, the answer is most likely B, D, or E.",
        "Therefore, among A through E, the answer is probably A or C.",
        "Therefore, among A through E, the answer is most likely C, airport, but it could also be A, car.",
        "Therefore, among A through E, the answer is probably (A), (B), (C), or (D).",
    ],
)
def test_multiple_answers_are_ambiguous(pred):
    result = score(pred, "A", SEVEN)
    assert result.outcome == "unextractable"
    assert result.reason.startswith("ambiguous")


def test_uncertain_bool_is_not_correct():
    # ThoughtSource's commented-out case: "uncertain" is no yes/no answer
    result = score("Therefore, the answer (Yes or No) is uncertain.", "True", [], "bool")
    assert result.outcome == "unextractable" and result.reason.startswith("no yes/no answer found"), result


def test_not_supported_glued_letter():
    """ "So the answer isB": ThoughtSource's old clean() accepted it, its newer version dropped it
    ("leads to false positives"); we agree with the newer version: nothing is extracted."""
    result = score("So the answer isB", "B", SEVEN)
    assert result.outcome == "unextractable" and result.reason.startswith("no option found"), result
