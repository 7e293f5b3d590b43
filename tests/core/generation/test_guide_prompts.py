"""The text rules of guided generation: when a step states the answer (the trajectory stops) and
what a process-supervision rater's reply rates (docs/rationales.md, "Guides")."""

from __future__ import annotations

import pytest

from thoughtdesk.core.generation.guide_prompts import answer_stated, parse_rating


@pytest.mark.parametrize(
    "step",
    [
        "The answer is 42.",
        "So the answer is 12.",
        "Therefore, the answer is (B).",
        "Thus the final answer is $18.",
        "The correct answer is: C",
        "the right answer is **B**",
        "The answer is \\boxed{7}.",
        "Answer: B",
        "answer: 12 apples",
        "**Answer:** (C)",
        "Final answer: 3",
        "We add them up.\nAnswer: 7",
        "Adding gives \\boxed{15}.",
        "The answer is -3.",
    ],
)
def test_statements_of_the_answer_end_the_trajectory(step: str) -> None:
    assert answer_stated(step)


@pytest.mark.parametrize(
    "step",
    [
        "We need the answer: first find x.",  # a bare "answer:" inside a sentence
        "To get the answer: multiply 3 by 4.",
        "Let us find what the answer is.",
        "Check whether the answer is B or C.",
        "If the answer is 4, then x is 2.",
        "The answer is not 5, since 5 is odd.",
        "The answer is still unknown.",
        "The answer is",
        "The answer is:",
        "Answer:",
        "The answers are listed below.",
        "An answer is needed.",
        "\\boxed{}",
        "She answered: 5 apples.",
    ],
)
def test_other_mentions_of_an_answer_do_not_end_it(step: str) -> None:
    assert not answer_stated(step)


@pytest.mark.parametrize(
    ("reply", "rating"),
    [
        ("3", 3),
        ("0", 0),
        (" 2\n", 2),
        ("3.", 3),
        ("Rating: 1", 1),
        ("**2**", 2),
        ("I would rate it 0.", 0),
        ("2/3", 2),
        ("3 / 3", 3),
        ("1 out of 3", 1),
    ],
)
def test_a_standalone_rating_0_to_3_is_read(reply: str, rating: int) -> None:
    assert parse_rating(reply) == rating


@pytest.mark.parametrize(
    "reply",
    ["10", "4/3", "4", "1.5", "-1", "3/5", "1 or 2", "Step 2 is right: 3", "", "no idea", "three", "2,5"],
)
def test_anything_else_is_unparseable(reply: str) -> None:
    assert parse_rating(reply) is None
