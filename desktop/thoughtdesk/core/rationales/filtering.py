"""Rationale filtering (RATIONALYST): how much a rationale lowers the loss of the text after it.

For a rationale r before the following text x_i, x_i+1, ...:
``L(r) = -sum_j 0.9^(j-i) log p(x_j | r, x_<j)`` and the reduction is ``L(no rationale) - L(r)``;
a rationale is kept when the reduction is at least tau. The paper's tau: 1.2 for math
(GSM8K), 0.5 for commonsense (ECQA), 0 for web text (the Pile).

The scorer sees the preceding text, then (for ``L(r)``) the rationale between its markers, and
scores the following text's tokens (:meth:`Backend.score`). The following text is cut after the
first sentence end past ``horizon`` characters: with decay 0.9 a token 100 tokens on weighs
0.9^100 = 3e-5 of the first, so a longer text only costs time (``horizon=0`` scores it all).
"""

from __future__ import annotations

from dataclasses import dataclass

from thoughtdesk.core.generation.backends import Backend
from thoughtdesk.core.generation.scoring import DEFAULT_DECAY, TokenScores, weighted_loss
from thoughtdesk.core.rationales.extraction import DEFAULT, Markers, context_with_rationale

#: The paper's thresholds by kind of text.
TAU_PRESETS = {"math": 1.2, "commonsense": 0.5, "web": 0.0}
DEFAULT_TAU = TAU_PRESETS["math"]
#: Characters of following text scored (then up to the end of that sentence); 0: all of it.
DEFAULT_HORIZON = 600


@dataclass(frozen=True, slots=True)
class LossReduction:
    """One rationale's filtering result: the weighted losses of the following text without and
    with the rationale, and the number of tokens each scored."""

    loss_without: float
    loss_with: float
    tokens_without: int
    tokens_with: int

    @property
    def reduction(self) -> float:
        return self.loss_without - self.loss_with

    def kept(self, tau: float) -> bool:
        return self.reduction >= tau


def loss_reduction(without: TokenScores, with_rationale: TokenScores, decay: float = DEFAULT_DECAY) -> LossReduction:
    """The reduction from two scorings of the same following text."""
    return LossReduction(
        loss_without=weighted_loss(without.logprobs, decay),
        loss_with=weighted_loss(with_rationale.logprobs, decay),
        tokens_without=len(without.logprobs),
        tokens_with=len(with_rationale.logprobs),
    )


def scored_following(following: str, horizon: int = DEFAULT_HORIZON) -> str:
    """The part of ``following`` that is scored: up to the first sentence end (., !, ? or a line
    break followed by whitespace or the end) at or after ``horizon`` characters."""
    if horizon <= 0 or len(following) <= horizon:
        return following
    for index in range(horizon, len(following)):
        char = following[index]
        if char == "\n" or (char in ".!?" and (index + 1 == len(following) or following[index + 1].isspace())):
            return following[: index + 1]
    return following


async def score_rationale(
    scorer: Backend,
    preceding: str,
    rationale: str,
    following: str,
    *,
    markers: Markers = DEFAULT,
    decay: float = DEFAULT_DECAY,
    horizon: int = DEFAULT_HORIZON,
) -> LossReduction:
    """Score the following text after ``preceding`` without and with ``rationale`` (two calls,
    made concurrently) and return the loss reduction."""
    import asyncio

    target = scored_following(following, horizon)
    without, with_rationale = await asyncio.gather(
        scorer.score(preceding, [target]),
        scorer.score(context_with_rationale(preceding, rationale, markers), [target]),
    )
    return loss_reduction(without[0], with_rationale[0], decay)
