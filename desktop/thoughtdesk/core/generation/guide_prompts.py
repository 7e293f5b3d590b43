"""The prompt fragments of guided generation (kind ``guide``), and the small text rules of a
step: where a step ends and when a trajectory has stated its answer.

The texts are ThoughtDesk's own (written for this app, not taken from the RATIONALYST
repository) and editable in the fragment editor like any other fragment; a run stores the texts
it was planned with, so a resume sends what was planned. Placeholders: ``[[TRAJECTORY]]`` (the
question prompt and the steps so far), ``[[RATIONALE]]`` (the rationale written for the next
step), ``[[CANDIDATE]]`` (a candidate next step, for the rater).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from thoughtdesk.core.sentences import split_sentences

#: The ``guide`` fragments by key, with their built-in texts.
GUIDE_TEXTS: dict[str, str] = {
    # To the rationale model: one sentence of reasoning that the next step should rest on.
    "rationale": (
        "Here is a solution being written one step at a time.\n\n[[TRAJECTORY]]\n\n"
        "In one sentence, state the fact or reasoning the next step of this solution needs. "
        "Do not write the step itself.\nRationale:"
    ),
    # Before the candidate under implicit supervision: the scorer reads this and the candidate.
    "scorer": (
        "Each step of the solution below follows from the rationale given just before it.\n\n"
        "[[TRAJECTORY]]\n(Rationale: [[RATIONALE]])\n"
    ),
    # The agent's context under explicit supervision: the rationale between markers.
    "explicit": "[[TRAJECTORY]]\n<BOT>[[RATIONALE]]<EOT>\n",
    # To a chat agent (a completion agent simply continues the trajectory text).
    "step_chat": (
        "[[TRAJECTORY]]\n\nContinue the solution above with exactly one more sentence. "
        'When the answer is known, write "The answer is" followed by it.'
    ),
    # To the process-supervision rater.
    "rater": (
        "Here is a partial solution and a proposed next step.\n\n[[TRAJECTORY]]\n\nNext step: [[CANDIDATE]]\n\n"
        "Rate the next step from 0 (wrong or useless) to 3 (correct and moves toward the answer). "
        "Reply with the digit only.\nRating:"
    ),
}
GUIDE_KEYS = tuple(GUIDE_TEXTS)

# "The answer is", "The correct answer is", "the final answer is", "Answer: ...", a \boxed{}.
_ANSWER_STATED = re.compile(
    r"\b(?:the\s+(?:correct\s+|final\s+|right\s+)?answer\s+is|answer\s*:)|\\boxed\{", re.IGNORECASE
)
_RATING = re.compile(r"[0-3]")


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``[[NAME]]`` replaced in one pass (a value quoting a placeholder
    is not expanded again)."""
    pattern = re.compile("|".join(re.escape(f"[[{name}]]") for name in values) or r"(?!)")
    return pattern.sub(lambda match: values[match.group(0)[2:-2]], template)


def first_step(text: str) -> str:
    """The first sentence of a sampled continuation, on its first non-empty line."""
    for line in text.splitlines():
        if line.strip():
            spans = split_sentences(line)
            return spans[0].text if spans else line.strip()
    return ""


def answer_stated(step: str) -> bool:
    """Whether a step states the answer ("The answer is", its variants, ``\\boxed{}``)."""
    return _ANSWER_STATED.search(step) is not None


def parse_rating(text: str) -> int | None:
    """The 0-3 rating a rater wrote (its first digit 0-3), None when there is none."""
    match = _RATING.search(text)
    return None if match is None else int(match.group(0))


def join_steps(prompt: str, steps: list[str]) -> str:
    """The trajectory: the question prompt, then the steps so far separated by spaces."""
    if not steps:
        return prompt
    separator = "" if prompt.endswith((" ", "\n")) else " "
    return prompt + separator + " ".join(steps)
