"""Rationale filtering (RATIONALYST): how much a rationale lowers the loss of the text after it.

For a rationale r before the following text x_i, x_i+1, ...:
``L(r) = -sum_j 0.9^(j-i) log p(x_j | r, x_<j)`` and the reduction is ``L(no rationale) - L(r)``;
a rationale is kept when the reduction is at least tau. The paper's tau: 1.2 for math
(GSM8K), 0.5 for commonsense (ECQA), 0 for web text (the Pile).

The scorer sees the preceding text, then (for ``L(r)``) the rationale between its markers, and
scores the following text's tokens (:meth:`Backend.score`). The following text is cut after the
first sentence end past ``horizon`` characters: with decay 0.9 a token 100 tokens on weighs
0.9^100 = 3e-5 of the first, so a longer text only costs time (``horizon=0`` scores it all).

The rationales of one document share their "without" scoring (:func:`score_document`): the
document's text is scored once from the first rationale's position to the last scored token, and
each rationale's following tokens are read from it. That is exact where a longer text gives its
leading tokens the same log-probs (``Capabilities.stable_prefix_scores``: servers, not the
in-process llama.cpp whose results depend on the evaluation split) and the rationale's scored
span starts and ends on a token boundary of that scoring (else its own call is made, as before).
A document with k rationales costs k + 1 calls instead of 2k.

Two prompt layouts (``layout``; docs/rationales.md shows both):

- ``thoughtdesk`` (default): raw text; the scorer sees the preceding text, then the rationale
  between its markers, and scores the following text's own tokens.
- ``paper``: RATIONALYST's filter script (calculate_perplexity_sampled_rationale_new_method.py):
  a Llama-3 chat prompt, system "Your task is to generate future text given preceeding text",
  user the preceding text (with the rationale: preceding + ". " + rationale, no markers),
  assistant the following text; the scored tokens are the prompt's last ones, as many as the
  assistant turn alone has with its BOS: the user turn's end, the assistant header, the
  following text and its end of turn. The paper's thresholds (tau 1.2 / 0.5) were calibrated on
  these tokens, whose first five are the template's own.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass

from thoughtdesk.core.generation.backends import Backend, BackendError, BadRequest, BadResponse
from thoughtdesk.core.generation.scoring import DEFAULT_DECAY, TokenScores, weighted_loss
from thoughtdesk.core.rationales.extraction import DEFAULT, Markers, RationaleRecord, context_with_rationale

#: The paper's thresholds by kind of text.
TAU_PRESETS = {"math": 1.2, "commonsense": 0.5, "web": 0.0}
DEFAULT_TAU = TAU_PRESETS["math"]
#: Characters of following text scored (then up to the end of that sentence); 0: all of it.
DEFAULT_HORIZON = 600

#: The prompt layouts a rationale is scored in (see the module's docstring).
LAYOUTS = ("thoughtdesk", "paper")
DEFAULT_LAYOUT = "thoughtdesk"
#: RATIONALYST's filter prompt: its system text (spelling as in the paper's script) and
#: Llama-3-Instruct's chat format, which its scorer (Meta-Llama-3-8B-Instruct) was given.
PAPER_SYSTEM = "Your task is to generate future text given preceeding text"
_BOS, _START, _END, _EOT = "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"


def _turn(role: str, content: str) -> str:
    return f"{_START}{role}{_END}\n\n{content.strip()}{_EOT}"


def scoring_texts(
    layout: str, preceding: str, rationale: str | None, following: str, markers: Markers = DEFAULT
) -> tuple[str, str]:
    """(prefix, scored text) for scoring ``following`` after ``preceding``, with ``rationale``
    in place (None: without it), in ``layout``."""
    if layout == "thoughtdesk":
        return (preceding if rationale is None else context_with_rationale(preceding, rationale, markers)), following
    if layout != "paper":
        raise ValueError(f"unknown layout {layout!r}; one of {', '.join(LAYOUTS)}")
    user = preceding if rationale is None else f"{preceding}. {rationale}"
    # apply_chat_template of [system, user, assistant] (Llama-3 trims each content); the scored
    # tail starts at the user turn's end of turn.
    head = f"{_BOS}{_turn('system', PAPER_SYSTEM)}{_START}user{_END}\n\n{user.strip()}"
    return head, f"{_EOT}{_START}assistant{_END}\n\n{following.strip()}{_EOT}"


def keeps(reduction: float, tau: float) -> bool:
    """The keep rule, coded here only: a rationale is kept when its loss reduction is at least
    ``tau`` (the paper's). The filter summary (:func:`kept_count`, ``rationales filter`` and the
    dialog's counts), the stored scores (:meth:`LossReduction.kept`) and the export all ask it."""
    return reduction >= tau


def kept_count(reductions: Iterable[float], tau: float) -> int:
    """How many of ``reductions`` the keep rule keeps at ``tau``."""
    return sum(1 for value in reductions if keeps(value, tau))


def scorer_key(label: str, layout: str) -> str:
    """The name a scorer's results are stored under: scores of the two layouts are not comparable."""
    return label if layout == DEFAULT_LAYOUT else f"{label} [{layout} layout]"


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
        return keeps(self.reduction, tau)


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
    layout: str = DEFAULT_LAYOUT,
) -> LossReduction:
    """Score the following text after ``preceding`` without and with ``rationale`` (two calls,
    made concurrently) and return the loss reduction."""
    target = scored_following(following, horizon)
    without, with_rationale = await asyncio.gather(
        scorer.score(*_one(scoring_texts(layout, preceding, None, target, markers))),
        scorer.score(*_one(scoring_texts(layout, preceding, rationale, target, markers))),
    )
    return loss_reduction(without[0], with_rationale[0], decay)


def _one(texts: tuple[str, str]) -> tuple[str, list[str]]:
    """``Backend.score``'s arguments for one (prefix, scored text)."""
    return texts[0], [texts[1]]


async def _caught(call: Awaitable[list[TokenScores]]) -> TokenScores | BackendError:
    """The first scoring of a call, or the backend's error (other exceptions propagate)."""
    try:
        return (await call)[0]
    except BackendError as error:
        return error


def shared_span(text: str, end: int, shared: TokenScores, start: int, stop: int) -> TokenScores | None:
    """The tokens of ``text[start:stop]`` read from ``shared``, the scoring of a continuation
    ending at ``text[end]``; None unless the tokens' texts lie end to end as ``text`` has them and
    a token boundary falls at both ``start`` and ``stop`` (then the span's own scoring, prefix
    ``text[:start]``, would have the same tokens)."""
    joined = "".join(shared.tokens)
    if not joined or not text[:end].endswith(joined):
        return None
    position = end - len(joined)
    boundaries = {position}
    picked: list[int] = []
    for index, token in enumerate(shared.tokens):
        position += len(token)
        boundaries.add(position)
        if start < position <= stop:
            picked.append(index)
    if start not in boundaries or stop not in boundaries or not picked:
        return None
    return TokenScores(
        tuple(shared.tokens[i] for i in picked), tuple(shared.logprobs[i] for i in picked), evaluated_tokens=0
    )


async def score_document(
    scorer: Backend,
    records: Sequence[RationaleRecord],
    *,
    markers: Markers = DEFAULT,
    decay: float = DEFAULT_DECAY,
    horizon: int = DEFAULT_HORIZON,
    layout: str = DEFAULT_LAYOUT,
) -> list[LossReduction | BackendError]:
    """Loss reductions of rationales of one document (one result or error per record, in order).

    The "with" scorings are one call each; the "without" scorings share one call over the
    document when the records split the same text and the scorer's prefix scores are stable
    (see the module's docstring); any rationale whose span cannot be read from it gets its own
    call, so every result equals :func:`score_rationale`'s for the same record.
    """
    targets = [scored_following(record.following, horizon) for record in records]
    with_calls = [
        _caught(scorer.score(*_one(scoring_texts(layout, r.preceding, r.rationale, target, markers))))
        for r, target in zip(records, targets, strict=True)
    ]
    text = records[0].preceding + records[0].following if records else ""
    shareable = (
        len(records) > 1
        and layout == "thoughtdesk"  # the paper's chat prompts differ in more than their length
        and scorer.capabilities.stable_prefix_scores
        and all(r.preceding and r.preceding + r.following == text for r in records)
    )
    withouts: list[TokenScores | BackendError | None] = [None] * len(records)
    if shareable:
        first = min(len(r.preceding) for r in records)
        end = max(len(r.preceding) + len(t) for r, t in zip(records, targets, strict=True))
        shared, withs = await asyncio.gather(
            _caught(scorer.score(text[:first], [text[first:end]])), asyncio.gather(*with_calls)
        )
        for index, (record, target) in enumerate(zip(records, targets, strict=True)):
            if isinstance(shared, BackendError) and not isinstance(shared, BadRequest):
                withouts[index] = shared  # retried already: the server is down or refuses us
            elif target and isinstance(shared, TokenScores):
                start = len(record.preceding)
                withouts[index] = shared_span(text, end, shared, start, start + len(target))
        # A span the shared call cannot give (a token across its edge, or a refused request:
        # e.g. too long for the context, where the shorter texts of the first rationales fit)
        # is scored on its own.
        missing = [index for index, found in enumerate(withouts) if found is None]
        own = await asyncio.gather(*(_caught(scorer.score(records[i].preceding, [targets[i]])) for i in missing))
    else:
        missing = list(range(len(records)))
        own, withs = await asyncio.gather(
            asyncio.gather(
                *(
                    _caught(scorer.score(*_one(scoring_texts(layout, r.preceding, None, t, markers))))
                    for r, t in zip(records, targets, strict=True)
                )
            ),
            asyncio.gather(*with_calls),
        )
    for index, found in zip(missing, own, strict=True):
        withouts[index] = found
    results: list[LossReduction | BackendError] = []
    for without, with_rationale in zip(withouts, withs, strict=True):
        if isinstance(without, BackendError):
            results.append(without)
        elif isinstance(with_rationale, BackendError):
            results.append(with_rationale)
        else:
            assert without is not None  # every gap was filled by its own call above
            results.append(_finite_reduction(scorer, without, with_rationale, decay))
    return results


def _finite_reduction(
    scorer: Backend, without: TokenScores, with_rationale: TokenScores, decay: float
) -> LossReduction | BackendError:
    """The loss reduction, or a BadResponse when the scorer's log-probs give no finite loss
    (NaN, infinities, or a weighted sum that overflows): nothing is stored for it."""
    try:
        result: LossReduction | None = loss_reduction(without, with_rationale, decay)
    except OverflowError:
        result = None
    if result is not None and all(
        math.isfinite(value) for value in (result.loss_without, result.loss_with, result.reduction)
    ):
        return result
    worst = next(
        (v for scores in (without, with_rationale) for v in scores.logprobs if not math.isfinite(v) or v > 0), None
    )
    detail = f"a log-prob of {worst!r}" if worst is not None else "log-probs whose weighted sum overflows"
    return BadResponse(
        scorer.provider,
        f"the scorer's answer gives no finite loss: {detail}",
        hint="check the scoring model or server; nothing was stored for this rationale",
    )
