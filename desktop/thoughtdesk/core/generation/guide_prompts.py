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
from thoughtdesk.core.trace_marks import after_thinking

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

# Where a trajectory states its answer (answer_stated). "the answer is" with optional words
# before "answer" ("the correct answer is", "the final answer is") ...
_ANSWER_IS = re.compile(r"\bthe\s+(?:(?:correct|final|right|best)\s+)?answer\s+is\b", re.IGNORECASE)
# ... not inside a question or a condition ("find what the answer is", "whether the answer is B") ...
_NOT_A_STATEMENT = re.compile(r"\b(?:what|whether|if|unless|until|how|check)\s*$", re.IGNORECASE)
# ... followed by an answer: after optional spaces, a colon or emphasis, an opening bracket,
# quote, sign or currency and then a letter or digit ("is 42", "is (B)", "is: $5", "is **B**"),
# but not a word that says the answer is not known yet.
_ANSWER_FOLLOWS = re.compile(r"[\s:*_]*[\"'(\[{$€£+\-−\\]*\w", re.IGNORECASE)
_NOT_AN_ANSWER = re.compile(r"[\s:*_]*(?:not|unclear|unknown|still|yet|to\s+be)\b", re.IGNORECASE)
# "Answer: B" (also "Final answer: B", "**Answer:** B") at the start of a line, with an answer after it.
_ANSWER_LINE = re.compile(
    r"^[\s*_#>]*(?:final\s+)?answer[\s*_]*[:：][\s*_]*[\"'(\[{$€£+\-−\\]*\w", re.IGNORECASE | re.MULTILINE
)
_BOXED = re.compile(r"\\boxed\{\s*[^\s}]")
# A rating: one whole number in the reply ("3", "Rating: 3", "**2**", "I rate it 1."); a scale
# written after it ("2/3", "2 out of 3") is read as the scale, not as a second number.
_RATING_SCALE = re.compile(r"(?<=\d)\s*(?:/|out\s+of|of)\s*3\b(?![.,]\d)", re.IGNORECASE)
_NUMBER = re.compile(r"[-−+]?\d+(?:[.,]\d+)?")


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``[[NAME]]`` replaced in one pass (a value quoting a placeholder
    is not expanded again)."""
    pattern = re.compile("|".join(re.escape(f"[[{name}]]") for name in values) or r"(?!)")
    return pattern.sub(lambda match: values[match.group(0)[2:-2]], template)


def first_step(text: str) -> str:
    """The first sentence of a sampled continuation, on its first non-empty line; a reasoning
    model's inline thinking (``<think>...</think>``) is not the step (``trace_marks.after_thinking``)."""
    for line in after_thinking(text).splitlines():
        if line.strip():
            spans = split_sentences(line)
            return spans[0].text if spans else line.strip()
    return ""


def answer_stated(step: str) -> bool:
    """Whether a step states the answer, so the trajectory ends with it.

    Stated: "The answer is X" and its variants ("So the answer is 12.", "Therefore, the answer
    is (B).", "The correct/final/right answer is X"), a line starting with "Answer:" or "Final
    answer:" followed by an answer ("Answer: B"), and a non-empty ``\\boxed{...}``. Not stated:
    a bare "answer:" inside a sentence ("We need the answer: first find x."), "the answer is"
    with nothing after it or inside a question or condition ("Find what the answer is.",
    "Check whether the answer is B."), and "the answer is not/unclear/unknown/still/yet/to be".
    """
    if _BOXED.search(step) or _ANSWER_LINE.search(step):
        return True
    for match in _ANSWER_IS.finditer(step):
        rest = step[match.end() :]
        if _NOT_A_STATEMENT.search(step[: match.start()]) or _NOT_AN_ANSWER.match(rest):
            continue
        if _ANSWER_FOLLOWS.match(rest):
            return True
    return False


def parse_rating(text: str) -> int | None:
    """The 0-3 rating a rater wrote, None when the reply holds none or is ambiguous.

    The reply must contain exactly one number and it must be a whole 0, 1, 2 or 3 ("3",
    "Rating: 2", "**1**", "I would rate it 0.", "2/3", "2 out of 3"). Anything else is
    unparseable: "10", "4/3", "1.5", "-1", "3/5", "1 or 2", no number at all.
    """
    numbers = _NUMBER.findall(_RATING_SCALE.sub("", text))
    if len(numbers) != 1 or numbers[0] not in ("0", "1", "2", "3"):
        return None
    return int(numbers[0])


def join_steps(prompt: str, steps: list[str]) -> str:
    """The trajectory: the question prompt, then the steps so far separated by spaces."""
    if not steps:
        return prompt
    separator = "" if prompt.endswith((" ", "\n")) else " "
    return prompt + separator + " ".join(steps)
