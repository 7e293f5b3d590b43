"""Pairwise judge prompts: templates with placeholders and the built-in template.

A pairwise template has a system text and a main text (fragments of kinds ``judge_system`` and
``judge`` under one key). Both may hold:

- ``[[QUESTION]]``: the question with its answer choices inline (a sample's context first);
- ``[[ANSWER_A]]``: the CoT shown first, with the answer it reached;
- ``[[ANSWER_B]]``: the CoT shown second, likewise;
- ``[[ANSWERKEY]]``: the correct answer (MT-bench's math variant shows a reference answer).

The built-in template (:data:`BUILTIN_PAIRWISE`) follows MT-bench's pairwise judge (FastChat's
``pair-v2``): an impartial judge, explanation first, no position, length or name bias, then the
verdict ``[[A]]``, ``[[B]]`` or ``[[C]]`` for a tie. The text is ThoughtDesk's own. A judge is a
model *and* a template version (:func:`template_version`, a hash of the two texts): an edited
template makes a new judge whose verdicts are counted apart.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

PLACEHOLDERS = ("[[QUESTION]]", "[[ANSWER_A]]", "[[ANSWER_B]]", "[[ANSWERKEY]]")
BUILTIN_KEY = "td-pairwise-v1"

_SYSTEM = (
    "Please act as an impartial judge and evaluate the answers that two AI assistants wrote to the "
    "question shown below, each with its reasoning. Choose the assistant that answers the question "
    "better: a correct final answer matters most, then whether its reasoning is sound, relevant and "
    "complete. Begin your evaluation by comparing the two answers and give a short explanation. "
    "Avoid any position bias: the order in which the answers are presented must not influence your "
    "decision. Do not let the length of the answers influence your evaluation, and do not favour "
    "either assistant by its name. Be as objective as possible. After your explanation, output your "
    'final verdict strictly in this format: "[[A]]" if assistant A is better, "[[B]]" if assistant B '
    'is better, and "[[C]]" for a tie.'
)

_MAIN = (
    "[User Question]\n[[QUESTION]]\n\n"
    "[The Start of Assistant A's Answer]\n[[ANSWER_A]]\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n[[ANSWER_B]]\n[The End of Assistant B's Answer]"
)


@dataclass(frozen=True, slots=True)
class JudgeTemplate:
    """A pairwise judge prompt: ``system`` and ``main`` texts with the placeholders above."""

    key: str
    system: str
    main: str
    source: str = "thoughtdesk"

    @property
    def version(self) -> str:
        return template_version(self.system, self.main)


def template_version(system: str, main: str) -> str:
    """The first 12 hex digits of SHA-256 over the two texts: equal texts, equal version."""
    return hashlib.sha256(f"{system}\x00{main}".encode()).hexdigest()[:12]


BUILTIN_PAIRWISE = JudgeTemplate(BUILTIN_KEY, _SYSTEM, _MAIN)
BUILTIN_JUDGE_TEMPLATES: dict[str, JudgeTemplate] = {BUILTIN_KEY: BUILTIN_PAIRWISE}

_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))


@dataclass(frozen=True, slots=True)
class PairInput:
    """What a pairwise prompt is filled with: the question, the two answers as shown (A first)
    and the correct answer."""

    question: str
    answer_a: str
    answer_b: str
    answer_key: str


def fill(text: str, values: PairInput) -> str:
    """``text`` with its placeholders replaced in one pass (a CoT that quotes ``[[ANSWER_B]]``
    is not expanded)."""
    table = {
        "[[QUESTION]]": values.question,
        "[[ANSWER_A]]": values.answer_a,
        "[[ANSWER_B]]": values.answer_b,
        "[[ANSWERKEY]]": values.answer_key,
    }
    return _PLACEHOLDER.sub(lambda match: table[match.group(0)], text)


def render(template: JudgeTemplate, values: PairInput) -> tuple[str, str]:
    """The filled system and user texts."""
    return fill(template.system, values), fill(template.main, values)


def shown_answer(text: str, answer: str) -> str:
    """A CoT as a judge sees it: its text, then the answer it reached when one is known and the
    text is not just that answer; ``(no answer given)`` for an empty CoT without an answer."""
    text = text.strip()
    answer = answer.strip()
    if answer and answer != text:
        return f"{text}\n\nFinal answer: {answer}" if text else f"Final answer: {answer}"
    return text or "(no answer given)"
