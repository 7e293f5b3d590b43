"""Scoring text under a model: the log-probs of a continuation's tokens after a prefix.

Backends that can score (``Capabilities.scoring``) return one :class:`TokenScores` per
continuation from ``await backend.score(prefix, continuations)``. The scores are of the joint
tokenisation of prefix + continuation: the continuation's tokens are those from the first token
where the joint tokens stop matching the prefix's own tokens (a token straddling the boundary
counts as the continuation's). Log-probs are natural logarithms.

Two uses: RATIONALYST's implicit supervision ranks candidate steps by :attr:`TokenScores.mean`
(or :meth:`TokenScores.decayed_mean`), and rationale filtering compares :func:`weighted_loss` of
the text following a rationale with and without the rationale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: The paper's decay of the filtering loss and of the weighted implicit-supervision score.
DEFAULT_DECAY = 0.9


def _check_decay(decay: float) -> None:
    if not 0.0 < decay <= 1.0:
        raise ValueError(f"decay must be in (0, 1], not {decay!r}")


@dataclass(frozen=True, slots=True)
class TokenScores:
    """Log-probs of a continuation's tokens (joint tokenisation of prefix + continuation).

    ``tokens`` are the tokens' texts as the model's tokenizer gives them back, ``logprobs`` one
    natural log-prob per token, ``evaluated_tokens`` how many tokens the backend had to run
    through the model for this continuation (the shared prefix is counted once, with the first
    continuation of a ``score`` call; 0 when the backend does not say).
    """

    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    evaluated_tokens: int = 0

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.logprobs):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.logprobs)} log-probs")

    @property
    def mean(self) -> float:
        """The mean log-prob per token (the implicit-supervision score); -inf if empty."""
        if not self.logprobs:
            return -math.inf
        return math.fsum(self.logprobs) / len(self.logprobs)

    @property
    def total(self) -> float:
        """The log-prob of the whole continuation (sum over its tokens); 0 if empty."""
        return math.fsum(self.logprobs)

    def decayed_mean(self, decay: float = DEFAULT_DECAY) -> float:
        """The mean with token ``i`` weighted ``decay**i``, normalised by the sum of the weights
        (so a constant log-prob gives itself back); -inf if empty.

        RATIONALYST's older scoring code divided the weighted sum by the token count instead;
        that is ``decayed_mean(d) * sum(d**i) / n`` and ranks candidates of equal length alike.
        """
        _check_decay(decay)
        if not self.logprobs:
            return -math.inf
        weights = [decay**index for index in range(len(self.logprobs))]
        return math.fsum(w * lp for w, lp in zip(weights, self.logprobs, strict=True)) / math.fsum(weights)

    def to_json(self) -> dict[str, list[str] | list[float]]:
        """``{"tokens": [...], "logprobs": [...]}`` (lists of equal length)."""
        return {"tokens": list(self.tokens), "logprobs": list(self.logprobs)}


def weighted_loss(logprobs: Sequence[float], decay: float = DEFAULT_DECAY) -> float:
    """The paper's future-token loss: ``-sum_j decay**j * logprobs[j]`` (j from 0).

    For the text following a rationale position, ``weighted_loss(without) -
    weighted_loss(with)`` is the rationale's loss reduction, kept when at least tau.
    """
    _check_decay(decay)
    return -math.fsum(decay**index * value for index, value in enumerate(logprobs))


def continuation_start(prefix_tokens: Sequence[int], joint_tokens: Sequence[int]) -> int:
    """Where the continuation starts in the joint tokens: the first place where they differ
    from the prefix's own tokens (at most ``len(prefix_tokens)``)."""
    limit = min(len(prefix_tokens), len(joint_tokens))
    for index in range(limit):
        if prefix_tokens[index] != joint_tokens[index]:
            return index
    return limit
