"""The critique parser on the DS layout, on what API models write instead, and on garbage."""

from __future__ import annotations

import pytest

from thoughtdesk.core.critiques import DIMENSIONS, ELEMENTS
from thoughtdesk.core.critiques.parse import parse_critique, parse_dimension, parse_score

DS_CARD = """The explanation states or suggests the following:
* Main flaw (standalone statement): "The rising of hot air is caused by the expansion of air molecules."
* Dimension: incorrect_information

Consider these points for revising the explanation:
* General: It's important to understand that hot air rises due to differences in density.
* Specific: In the case of the hot air balloon, the air inside is heated.

Explanation score: 2"""


def test_the_model_card_layout():
    p = parse_critique(DS_CARD)
    assert p.main_flaw == "The rising of hot air is caused by the expansion of air molecules."
    assert p.dimension == "incorrect_information"
    assert p.general_feedback is not None
    assert p.general_feedback.startswith("It's important") and p.general_feedback.endswith("density.")
    assert p.specific_feedback == "In the case of the hot air balloon, the air inside is heated."
    assert p.explanation_score == 2.0
    assert p.fully_parsed


MARKDOWN = """Sure! Here is my critique of the student's explanation.

**The explanation states or suggests the following:**
- **Main flaw (standalone statement):** The answer ignores the patient's renal function.
- **Dimension:** Incorrect reasoning

### Consider these points for revising the explanation
- **General:** Always check contraindications
  before choosing a drug.
- **Specific:** Metformin is contraindicated at an eGFR below 30.

**Explanation score:** 2/5

I hope this helps!"""


def test_markdown_emphasis_words_for_dimensions_scores_out_of_five_and_chatter():
    p = parse_critique(MARKDOWN)
    assert p.main_flaw == "The answer ignores the patient's renal function."
    assert p.dimension == "incorrect_reasoning"
    assert p.general_feedback == "Always check contraindications before choosing a drug."
    assert p.specific_feedback == "Metformin is contraindicated at an eGFR below 30."
    assert p.explanation_score == 2.0
    assert p.fully_parsed


@pytest.mark.parametrize(
    ("raw", "score"),
    [
        ("2", 2.0),
        ("2/5", 2.0),
        ("2 / 5", 2.0),
        ("2 out of 5", 2.0),
        ("**4**", 4.0),
        ("4.5", 4.5),
        ("0", 0.0),
        ("5.", 5.0),
        ("3 (mostly right, one slip)", 3.0),
        ("3 - mostly right", 3.0),
        ("`1`", 1.0),
    ],
)
def test_scores_as_models_write_them(raw, score):
    value, outcome = parse_score(raw)
    assert (value, outcome.status) == (score, "parsed")


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("7", "outside 0-5"),
        ("-1", "outside 0-5"),
        ("6/5", "outside 0-5"),
        ("8/10", "out of 10"),
        ("4 out of 10", "out of 10"),
        ("high", "no number"),
        ("", "no number"),
        ("3 or 4", "followed by text"),
    ],
)
def test_bad_scores_are_unparseable_with_the_raw_value_never_coerced(raw, why):
    value, outcome = parse_score(raw)
    assert value is None
    assert outcome.status == "unparseable" and outcome.raw == raw and why in (outcome.why or "")


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("incorrect_reasoning", "incorrect_reasoning"),
        ("Incorrect reasoning", "incorrect_reasoning"),
        ("INCORRECT_REASONING", "incorrect_reasoning"),
        ("incorrect-reasoning", "incorrect_reasoning"),
        ("`missing_information`", "missing_information"),
        ('"lack_justification"', "lack_justification"),
        ("Lack of justification", "lack_justification"),
        ("Irrelevant", "irrelevant"),
        ("inconsistent_answer (the answer contradicts the text)", "inconsistent_answer"),
        ("**Misunderstanding**", "misunderstanding"),
    ],
)
def test_dimensions_in_words_or_other_case(raw, name):
    value, outcome = parse_dimension(raw)
    assert (value, outcome.status) == (name, "parsed")


@pytest.mark.parametrize("name", DIMENSIONS)
def test_every_dimension_by_its_exact_name(name):
    assert parse_dimension(name)[0] == name


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("wrong_math", "not one of the 8"),
        ("calculation error", "not one of the 8"),
        ("incorrect_reasoning, incomplete_reasoning", "several dimensions"),
        ("The student shows incorrect_reasoning here", "not one of the 8"),
    ],
)
def test_unknown_dimensions_are_unparseable(raw, why):
    value, outcome = parse_dimension(raw)
    assert value is None and outcome.status == "unparseable" and outcome.raw == raw and why in (outcome.why or "")


def test_none_for_no_flaw_is_parsed_not_missing():
    p = parse_critique(
        "* Main flaw (standalone statement): None\n* Dimension: None\n"
        "* General: Nothing to add.\n* Specific: Correct as written.\nExplanation score: 5"
    )
    assert (p.main_flaw, p.dimension, p.explanation_score) == (None, None, 5.0)
    assert p.outcome("main_flaw").status == "parsed" and p.outcome("main_flaw").raw == "None"
    assert p.outcome("dimension").status == "parsed"


def test_unquoted_flaw_and_curly_quotes():
    assert parse_critique("Main flaw: The dose is wrong.").main_flaw == "The dose is wrong."
    assert parse_critique("Main flaw: \u201cThe dose is wrong.\u201d").main_flaw == "The dose is wrong."
    assert parse_critique('Main flaw: "The dose is wrong".').main_flaw == "The dose is wrong"


def test_missing_parts_are_missing():
    p = parse_critique("Dimension: irrelevant\nExplanation score: 1")
    assert p.dimension == "irrelevant" and p.explanation_score == 1.0
    for element in ("main_flaw", "general_feedback", "specific_feedback"):
        assert p.outcome(element).status == "missing"
    assert not p.fully_parsed


def test_a_label_with_nothing_after_it_is_unparseable():
    p = parse_critique("* General:\n\n* Specific: fine\nExplanation score: 4")
    assert p.outcome("general_feedback").status == "unparseable"
    assert p.specific_feedback == "fine"


def test_the_first_of_repeated_labels_counts():
    p = parse_critique("Explanation score: 2\nDimension: irrelevant\nExplanation score: 4\nDimension: misunderstanding")
    assert (p.explanation_score, p.dimension) == (2.0, "irrelevant")


def test_chatter_after_the_score_does_not_join_any_element():
    p = parse_critique(DS_CARD + "\nLet me know if you need anything else.\nOverall, decent.")
    assert p.explanation_score == 2.0
    assert "anything else" not in (p.specific_feedback or "")


def test_an_unknown_dimension_keeps_the_rest():
    p = parse_critique(DS_CARD.replace("incorrect_information", "factual_error"))
    assert p.dimension is None
    assert p.outcome("dimension").status == "unparseable" and p.outcome("dimension").raw == "factual_error"
    assert p.explanation_score == 2.0 and p.main_flaw is not None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "The",
        "<bos><bos><bos>",
        "Question: What is 2+2?\nAnswer: 4\nQuestion: What is 3+3?\nAnswer: 6",
        "*" * 10_000,
        ":::::\n:::: score\nscore ::::",
        "\x00\x01\ufffd" * 50,
        "Score: nine\nDimension: ???\nMain flaw: ",
    ],
)
def test_garbage_never_raises_and_nothing_is_invented(text):
    p = parse_critique(text)
    assert set(p.outcomes) == set(ELEMENTS)
    for element in ELEMENTS:
        status = p.outcome(element).status
        assert status in ("missing", "unparseable") or (element, text) == ("", "")
    assert p.explanation_score is None and p.dimension is None


def test_the_small_local_model_output_parses_or_is_accounted_for(gguf_model):
    """The Gemma 3 270M base model asked for a critique: whatever it writes, every element ends
    parsed, missing or unparseable, and a parsed score or dimension is a valid one."""
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra 'local')")
    from thoughtdesk.core.critiques.prompts import BUILTIN_TEMPLATES, CritiqueInput, render

    model = llama_cpp.Llama(model_path=str(gguf_model), n_ctx=2048, verbose=False)
    template = BUILTIN_TEMPLATES["td-critique-v1"]
    prompt = render(template, CritiqueInput("What is 2 + 3? (A) 4 (B) 5 (C) 6", "2 + 3 = 6 because I added.", "C", "B"))
    texts = []
    for seed in (1, 2, 3):
        out = model.create_completion(prompt.text, max_tokens=96, temperature=0.8, seed=seed)
        texts.append(out["choices"][0]["text"])
    for text in texts:
        p = parse_critique(text)
        assert set(p.outcomes) == set(ELEMENTS)
        assert p.explanation_score is None or 0 <= p.explanation_score <= 5
        assert p.dimension is None or p.dimension in DIMENSIONS
    assert any(t.strip() for t in texts), "the model wrote nothing at all: the test would prove nothing"
