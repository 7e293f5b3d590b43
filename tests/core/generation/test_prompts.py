"""Templates and rendering, including the tests ported from ThoughtSource's test_generating.py."""

from __future__ import annotations

import pytest

from thoughtdesk.core.generation.prompts import (
    CONTEXT_COT_TEMPLATE,
    DEFAULT_COT_TEMPLATE,
    Exemplar,
    FragmentLibrary,
    PromptMode,
    PromptTemplate,
    PromptVariant,
    TemplateError,
    format_answer_choices,
    render_cot_prompt,
    render_extraction_prompt,
)

INSTRUCTION = "Answer the following question through step-by-step reasoning."
TRIGGER = "Answer: Let's think step by step."
CHOICES = ["choice A", "choice B", "choice C", "choice D"]
# ThoughtSource's mock API answers every prompt with this (note the leading space).
MOCK_COT = " Test mock chain of thought."


def test_default_cot_template_renders_thoughtsource_format_exactly() -> None:
    # Ported from ThoughtSource test_template_default_f_strings (prompt_text).
    prompt = render_cot_prompt(
        question="Question", instruction=INSTRUCTION, answer_choices=CHOICES, cot_trigger=TRIGGER
    )
    assert prompt == (
        "Answer the following question through step-by-step reasoning.\n\nQuestion\nA) choice A\n"
        "B) choice B\nC) choice C\nD) choice D\n\nAnswer: Let's think step by step."
    )


def test_default_extraction_template_appends_cot_and_extraction() -> None:
    # Ported from ThoughtSource test_template_default_f_strings (answer_extraction_text).
    prompt = render_extraction_prompt(
        question="Question",
        instruction=INSTRUCTION,
        answer_choices=CHOICES,
        cot_trigger=TRIGGER,
        cot=MOCK_COT,
        answer_extraction="Therefore, the answer is",
    )
    assert prompt == (
        "Answer the following question through step-by-step reasoning.\n\nQuestion\nA) choice A\n"
        "B) choice B\nC) choice C\nD) choice D\n\nAnswer: Let's think step by step. Test mock "
        "chain of thought.\nTherefore, the answer is"
    )


def test_instruction_none_collapses_like_thoughtsource() -> None:
    # Ported from ThoughtSource test_template_instruction_is_none.
    cot = render_cot_prompt(question="Question", instruction=None, answer_choices=CHOICES, cot_trigger=TRIGGER)
    assert cot == "Question\nA) choice A\nB) choice B\nC) choice C\nD) choice D\n\nAnswer: Let's think step by step."
    extraction = render_extraction_prompt(
        question="Question",
        answer_choices=CHOICES,
        cot_trigger=TRIGGER,
        cot=MOCK_COT,
        answer_extraction="Therefore, the answer is",
    )
    assert extraction == (
        "Question\nA) choice A\nB) choice B\nC) choice C\nD) choice D\n\nAnswer: Let's think step "
        "by step. Test mock chain of thought.\nTherefore, the answer is"
    )


def test_template_without_variables_renders_as_is() -> None:
    # Ported from ThoughtSource test_template_input_only_string.
    assert render_cot_prompt(question="Q", template=PromptTemplate("abc")) == "abc"
    assert (
        render_extraction_prompt(question="Q", cot="c", answer_extraction="e", template=PromptTemplate("123")) == "123"
    )


@pytest.mark.parametrize("text", ["abc {wrong_variable}", "{instruction} {answer}", "{ question"])
def test_template_with_wrong_variables_is_refused(text: str) -> None:
    # Ported from ThoughtSource test_template_cot_wrong_variables / ..._answer_extraction_...
    with pytest.raises(ValueError) as error:
        PromptTemplate(text)
    assert isinstance(error.value, TemplateError)
    assert "allowed" in str(error.value) or "unmatched" in str(error.value)


def test_absent_and_none_values_render_empty() -> None:
    # Ported from ThoughtSource test_correct_output: None and missing values are "".
    template = PromptTemplate("[{instruction}|{context}|{question}]")
    assert template.render({"instruction": None, "question": "1"}) == "[||1]"


def test_braces_in_user_text_render_literally() -> None:
    question = "Solve {x} where x = {{instruction}} and f(x) = {0} }{"
    prompt = render_cot_prompt(
        question=question, instruction=INSTRUCTION, answer_choices=["{a}", "b}"], cot_trigger=TRIGGER
    )
    assert f"\n\n{question}\nA) {{a}}\nB) b}}\n\n" in prompt
    extraction = render_extraction_prompt(
        question=question, cot=" {cot} stays", cot_trigger=TRIGGER, answer_extraction="{answer_extraction}"
    )
    assert extraction.endswith("Answer: Let's think step by step. {cot} stays\n{answer_extraction}")


def test_escaped_braces_in_template_are_literal() -> None:
    assert PromptTemplate("{{json}}: {question}").render({"question": "q"}) == "{json}: q"


def test_context_template_drops_empty_parts_without_blank_runs() -> None:
    with_context = render_cot_prompt(
        question="Q?", instruction="I.", context="Some abstract.", answer_choices=["yes", "no"], cot_trigger="T:"
    )
    assert with_context == "I.\n\nSome abstract.\n\nQ?\nA) yes\nB) no\n\nT:"
    no_choices = CONTEXT_COT_TEMPLATE.render({"question": "Q?", "context": "C", "cot_trigger": "T:"})
    assert no_choices == "C\n\nQ?\n\nT:"


def test_thoughtsource_collapse_keeps_its_blank_lines_when_choices_are_empty() -> None:
    # ThoughtSource's own rule only strips leading whitespace; open questions keep the gap.
    assert DEFAULT_COT_TEMPLATE.render({"question": "Q?", "cot_trigger": "T:"}) == "Q?\n\n\nT:"


def test_answer_choices_formats() -> None:
    assert format_answer_choices(["x", "y"]) == "A) x\nB) y"
    assert format_answer_choices(["x", "y"], "numbers") == "1) x\n2) y"
    with pytest.raises(TemplateError, match="letters run out"):
        format_answer_choices([str(i) for i in range(27)])


def test_few_shot_exemplars_come_between_instruction_and_question() -> None:
    shots = [
        Exemplar(question="2+2?", cot="2 and 2 make 4.", answer="4"),
        Exemplar(question="Pick one", answer_choices=("x", "y"), cot="x fits.", answer="A"),
    ]
    prompt = render_cot_prompt(
        question="3+3?",
        instruction="Solve.",
        cot_trigger="Answer:",
        exemplars=shots,
        exemplar_extraction="So the answer is",
    )
    assert prompt == (
        "Solve.\n\n"
        "2+2?\n\n\nAnswer: 2 and 2 make 4.\nSo the answer is 4\n\n"
        "Pick one\nA) x\nB) y\n\nAnswer: x fits.\nSo the answer is A\n\n"
        "3+3?\n\n\nAnswer:"
    )
    extraction = render_extraction_prompt(
        question="3+3?",
        instruction="Solve.",
        cot_trigger="Answer:",
        cot=" 6.",
        answer_extraction="So the answer is",
        exemplars=shots,
    )
    assert extraction.startswith("Solve.\n\n2+2?")
    assert extraction.endswith("3+3?\n\n\nAnswer: 6.\nSo the answer is")


def test_variant_modes_and_provenance() -> None:
    library = FragmentLibrary.defaults()
    two_step = PromptVariant.from_keys(
        library, instruction="qa-01", cot_trigger="kojima-01", answer_extraction="kojima-A-D"
    )
    cot_prompt = two_step.cot_prompt("Question", CHOICES)
    assert cot_prompt == render_cot_prompt(
        question="Question", instruction=INSTRUCTION, answer_choices=CHOICES, cot_trigger=TRIGGER
    )
    extraction = two_step.extraction_prompt("Question", MOCK_COT, CHOICES)
    assert extraction is not None and extraction.endswith(
        "Test mock chain of thought.\nTherefore, among A through D, the answer is"
    )
    one_step = PromptVariant.from_keys(
        library, instruction="qa-01", cot_trigger="kojima-01", answer_extraction="kojima-A-D", mode=PromptMode.ONE_STEP
    )
    assert one_step.cot_prompt("Question", CHOICES) == cot_prompt
    assert one_step.extraction_prompt("Question", MOCK_COT, CHOICES) is None
    record = two_step.provenance()
    assert record["mode"] == "two-step"
    assert record["cot_trigger"] == {
        "key": "kojima-01",
        "text": TRIGGER,
        "citation": library.get("cot_trigger", "kojima-01").citation,
    }
    assert record["cot_template"]["text"] == DEFAULT_COT_TEMPLATE.text
    # The variant keeps its texts when the library is edited afterwards.
    library.edit("cot_trigger", "kojima-01", text="Answer: changed.")
    assert two_step.cot_prompt("Question", CHOICES) == cot_prompt
