"""Critique prompts: templates with placeholders, the built-in template, the DS model wrapper.

A critique template has a system text and a main text. Both may hold the placeholders of
DS Critique Bank's prompts file (DSCB-prompts.json, key ``digital_socrates_v1``):

- ``[[QUESTION]]``: the question with its answer choices inline, ``... lawnmower? (A) a change in
  phase (B) thermal expansion ...``;
- ``[[EXPLANATION]]``: the explanation judged (a generated CoT's text; may be empty: a bare
  answer is what ``lack_justification`` is for);
- ``[[PREDICTEDANSWER]]``: the answer the explanation reached (a bare letter for choices);
- ``[[ANSWERKEY]]``: the correct answer;
- ``[[STEPS]]``: the explanation's steps tagged and indexed from 0, as ProcessBench writes them
  (``<paragraph_0>\n...\n</paragraph_0>``; core/steps/judge.py).

The built-in template (:data:`BUILTIN_TEMPLATES`) is ThoughtDesk's own text, asking for the DS
layout and the eight dimensions. A chat model receives system and main as two messages. The
Digital Socrates models were trained on one exact input string, built by :func:`ds_wrap` as the
model card builds it (``<</SYS>`` with one ``>`` and no blank line before the user text);
:func:`llama2_wrap` is the standard Llama-2 chat form, for users who want to compare.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from thoughtdesk.core.critiques.records import DIMENSION_HELP, DIMENSIONS
from thoughtdesk.core.steps.judge import PROCESSBENCH_KEY, PROCESSBENCH_MAIN, tagged_response

PLACEHOLDERS = ("[[QUESTION]]", "[[EXPLANATION]]", "[[PREDICTEDANSWER]]", "[[ANSWERKEY]]", "[[STEPS]]")

Wrapper = Literal["chat", "ds", "llama2"]
WRAPPERS: tuple[Wrapper, ...] = ("chat", "ds", "llama2")


@dataclass(frozen=True, slots=True)
class CritiqueTemplate:
    """A critique prompt: ``system`` and ``main`` texts with the placeholders above."""

    key: str
    system: str
    main: str
    source: str = "thoughtdesk"


@dataclass(frozen=True, slots=True)
class CritiqueInput:
    """What a critique prompt is filled with (see the placeholders above)."""

    question: str
    explanation: str
    predicted_answer: str
    answer_key: str
    #: The explanation's steps, split only when a template asks for ``[[STEPS]]``.
    steps: Callable[[], Sequence[str]] | None = None


@dataclass(frozen=True, slots=True)
class RenderedCritiquePrompt:
    """A filled template: ``system`` and ``user`` texts, and the one string a completion model gets."""

    system: str
    user: str
    wrapper: Wrapper

    @property
    def text(self) -> str:
        """The exact prompt text as stored and, for the wrapped forms, as sent."""
        if self.wrapper == "ds":
            return ds_wrap(self.system, self.user)
        if self.wrapper == "llama2":
            return llama2_wrap(self.system, self.user)
        return f"{self.system}\n\n{self.user}" if self.system else self.user


def _dimension_list() -> str:
    return "\n".join(f"- {name}: {DIMENSION_HELP[name]}" for name in DIMENSIONS)


BUILTIN_KEY = "td-critique-v1"

_SYSTEM = (
    "You review explanations written for multiple-choice and short-answer questions. You are strict, "
    "specific and fair: you name the single most important flaw of an explanation, classify it, and give "
    "feedback that would help the writer reason better next time."
)

_MAIN = (
    "Question:\n[[QUESTION]]\n\n"
    "Explanation to review:\n[[EXPLANATION]]\n\n"
    "Answer the explanation arrived at: [[PREDICTEDANSWER]]\n"
    "Correct answer: [[ANSWERKEY]]\n\n"
    "Judge the explanation, not only its answer. If there is no real explanation, that is a flaw too.\n"
    "Classify the main flaw as exactly one of these dimensions:\n" + _dimension_list() + "\n\n"
    "Write your critique in exactly this layout and nothing else:\n\n"
    "The explanation states or suggests the following:\n"
    '* Main flaw (standalone statement): "<the main flaw, as a sentence understandable on its own, or None>"\n'
    "* Dimension: <one of the dimension names above, or None>\n\n"
    "Consider these points for revising the explanation:\n"
    "* General: <feedback about the misconception, without giving the answer away>\n"
    "* Specific: <feedback that guides toward the right reasoning for this question>\n\n"
    "Explanation score: <a whole number from 0 (very wrong) to 5 (completely correct)>"
)

BUILTIN_TEMPLATES: dict[str, CritiqueTemplate] = {
    BUILTIN_KEY: CritiqueTemplate(BUILTIN_KEY, _SYSTEM, _MAIN),
    # ProcessBench's step judge (docs/steps.md): one user message, no system text.
    PROCESSBENCH_KEY: CritiqueTemplate(PROCESSBENCH_KEY, "", PROCESSBENCH_MAIN, source="processbench"),
}


def question_with_choices(question: str, choices: Sequence[str] | None) -> str:
    """The question with its choices inline, as DSCB writes it: ``question (A) one (B) two``."""
    if not choices:
        return question
    letters = string.ascii_uppercase
    inline = " ".join(f"({letters[i] if i < 26 else i + 1}) {choice}" for i, choice in enumerate(choices))
    return f"{question} {inline}"


def fill(text: str, values: CritiqueInput) -> str:
    """``text`` with the four placeholders replaced in one pass (a value that itself contains a
    placeholder, e.g. an explanation quoting ``[[ANSWERKEY]]``, is not expanded again)."""
    replacements = {
        "[[QUESTION]]": values.question,
        "[[EXPLANATION]]": values.explanation,
        "[[PREDICTEDANSWER]]": values.predicted_answer,
        "[[ANSWERKEY]]": values.answer_key,
    }
    if "[[STEPS]]" in text:  # split only when asked for: a long CoT costs a split
        replacements["[[STEPS]]"] = tagged_response(
            values.steps() if values.steps is not None else [values.explanation]
        )
    return fill_placeholders(text, replacements)


def fill_placeholders(text: str, replacements: Mapping[str, str]) -> str:
    """``text`` with each ``[[NAME]]`` of ``replacements`` replaced in one pass (a value holding a
    placeholder is not expanded again; unknown ``[[...]]`` stay as they are)."""
    out: list[str] = []
    position = 0
    while True:
        start = text.find("[[", position)
        if start < 0:
            out.append(text[position:])
            return "".join(out)
        end = text.find("]]", start)
        token = text[start : end + 2] if end >= 0 else ""
        if token in replacements:
            out.append(text[position:start])
            out.append(replacements[token])
            position = end + 2
        else:
            out.append(text[position : start + 2])
            position = start + 2


def render(template: CritiqueTemplate, values: CritiqueInput, wrapper: Wrapper = "chat") -> RenderedCritiquePrompt:
    """Fill ``template`` with ``values``; ``wrapper`` says how a completion model receives it."""
    return RenderedCritiquePrompt(fill(template.system, values), fill(template.main, values), wrapper)


def ds_wrap(system: str, user: str) -> str:
    """The Digital Socrates models' input, exactly as their model card builds it."""
    return f"[INST] <<SYS>>\n{system}\n<</SYS>{user} [/INST]\n\n"


def llama2_wrap(system: str, user: str) -> str:
    """The standard Llama-2 chat form (the tokenizer adds ``<s>``)."""
    return f"[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]"


#: The "Digital Socrates" model preset: the card's wrapper, greedy decoding, 512 new tokens.
DS_PRESET = {"wrapper": "ds", "temperature": 0.0, "max_tokens": 512}
#: ProcessBench's step judge: its template as one chat message, greedy decoding, room to reason.
PROCESSBENCH_PRESET = {"wrapper": "chat", "temperature": 0.0, "max_tokens": 4096, "template": PROCESSBENCH_KEY}
