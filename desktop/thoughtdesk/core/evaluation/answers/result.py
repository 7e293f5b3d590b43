"""The result of scoring one answer: what was extracted, from where, and whether it is correct."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

#: ``"truncated"`` is never returned by extraction: the evaluation gives it to an answer whose CoT
#: was cut by the token limit (``generated_cot.finish_reason``), whatever was extracted.
Outcome = Literal["correct", "incorrect", "unextractable", "truncated"]
TextSource = Literal["extraction", "cot"]

CORRECT: Outcome = "correct"
INCORRECT: Outcome = "incorrect"
UNEXTRACTABLE: Outcome = "unextractable"
TRUNCATED: Outcome = "truncated"


_set = object.__setattr__  # how a frozen dataclass sets its fields


@dataclass(frozen=True, slots=True, init=False)
class Extraction:
    """One scored answer.

    ``outcome`` keeps three cases apart: ``"correct"``, ``"incorrect"`` and ``"unextractable"``
    (nothing found, ambiguous such as "A or C", or the gold answer itself unusable; ``reason``
    says which). ``value`` is the normalised extracted value: ``"C) inspiration"`` for multiple
    choice, ``"yes"``/``"no"``/``"maybe"`` for bool, a float for numbers, the normalised string
    for free text and collections; it may be set even when the outcome is unextractable (for
    example when the gold answer is not among the choices).

    ``method`` names the rule that found the value (``"extraction_output:letter"``,
    ``"cot:the_answer_is"``, ``"cot:boxed"``, ``"cot:####"``, ``"cot:last_option"`` ...).
    ``span`` is ``(start, end)``, character offsets into the text named by ``source``
    (``"extraction"`` = the answer-extraction output, ``"cot"`` = the generated CoT).
    ``letter`` is the choice letter for multiple choice (ThoughtSource's ``answer_from_choices``)
    and ``f1`` the best SQuAD token F1 against the gold answers (0..1) for free text.
    """

    outcome: Outcome
    value: str | float | None = None
    method: str = ""
    source: TextSource | None = None
    span: tuple[int, int] | None = None
    reason: str = ""
    f1: float | None = None
    letter: str | None = None

    def __init__(
        self,
        outcome: Outcome,
        value: str | float | None = None,
        method: str = "",
        source: TextSource | None = None,
        span: tuple[int, int] | None = None,
        reason: str = "",
        f1: float | None = None,
        letter: str | None = None,
    ) -> None:
        # As the generated __init__, a third faster: one made per scored answer (a million in
        # tests/benchmarks/bench_scoring.py).
        _set(self, "outcome", outcome)
        _set(self, "value", value)
        _set(self, "method", method)
        _set(self, "source", source)
        _set(self, "span", span)
        _set(self, "reason", reason)
        _set(self, "f1", f1)
        _set(self, "letter", letter)

    @property
    def correct(self) -> bool | None:
        """True/False for a decided answer, None when not extractable (never folded into False)."""
        if self.outcome in (UNEXTRACTABLE, TRUNCATED):
            return None
        return self.outcome == CORRECT


# Found and NotFound are made for every mention looked at: named tuples, immutable like frozen
# dataclasses and made in a quarter of the time.
class Found(NamedTuple):
    """A value found in one text, before it is compared with the gold answer."""

    value: object
    method: str
    start: int
    end: int


class NotFound(NamedTuple):
    """No usable value in one text; ``ambiguous`` marks "A or C" (stop looking elsewhere)."""

    reason: str
    ambiguous: bool = False
    start: int | None = None
    end: int | None = None
