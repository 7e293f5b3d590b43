"""Accuracy with its uncertainty: Wilson intervals, majority vote, McNemar, paired bootstrap.

Statistics come from scipy (``binomtest``, ``bootstrap``); this module only groups answers and
states which denominator each number uses. Unextractable answers are counted on their own and
never silently folded into "incorrect": they are part of ``n`` (an answer the model gave that
could not be read is not a correct answer) and ``share_unextractable`` says how many there were.
Truncated answers (the CoT was cut by the token limit) are counted on their own too and, by
default, kept out of the accuracy's denominator: a cut response says nothing about the model's
answer, so truncation never silently lowers accuracy (``truncated_as_wrong`` counts them as not
correct instead).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from thoughtdesk.core.evaluation.answers.result import Outcome


def _stats():
    # scipy.stats costs over a second to import: loaded on first use, not at start-up.
    from scipy import stats

    return stats


@dataclass(frozen=True, slots=True)
class ScoredAnswer:
    """One scored answer, the input of :func:`accuracy_table`.

    ``sample_index`` numbers repeated samples of the same question under the same condition
    (self-consistency); ``value`` is the extracted answer (``Extraction.value``) used for the
    majority vote; ``tokens`` is the completion length in tokens, ``cost`` in US dollars.
    ``reasoning`` says the CoT has a reasoning model's thinking stored apart from its visible text,
    ``reasoning_tokens`` how many tokens that thinking took (None: not known).
    """

    dataset: str
    split: str
    model: str
    condition: str
    sample_id: str
    outcome: Outcome
    tokens: int | None = None
    cost: float | None = None
    sample_index: int = 0
    value: object = None
    reasoning: bool = False
    reasoning_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class AccuracyRow:
    """Accuracy of one dataset x split x model x condition.

    ``n`` counts answers (all samples of all questions); ``accuracy`` = ``correct / scored`` with
    unextractable answers in the denominator (``scored`` = ``n - truncated``, or ``n`` when
    truncated answers are counted as wrong: ``truncated_as_wrong``; accuracy 0.0 when nothing is
    scored); ``wilson_low``/``wilson_high`` bound it (95 % Wilson score interval unless asked
    otherwise); ``share_unextractable`` = unextractable / n, ``share_truncated`` = truncated / n.
    ``share_reasoning`` is the share of answers whose CoT has stored thinking and
    ``median_reasoning_tokens`` the median of the reasoning tokens where known (None: none known).
    ``questions`` counts distinct sample ids. ``majority_accuracy`` (share of questions whose
    majority-vote answer is correct, unextractable samples not voting) is set only when the
    condition has several samples for at least one question. ``mean_tokens`` and ``mean_cost``
    average over answers that have the value (None when none has).
    """

    dataset: str
    split: str
    model: str
    condition: str
    n: int
    correct: int
    incorrect: int
    unextractable: int
    accuracy: float
    wilson_low: float
    wilson_high: float
    share_unextractable: float
    questions: int
    majority_accuracy: float | None
    mean_tokens: float | None
    mean_cost: float | None
    truncated: int = 0
    share_truncated: float = 0.0
    scored: int = -1
    truncated_as_wrong: bool = False
    share_reasoning: float = 0.0
    median_reasoning_tokens: float | None = None

    def __post_init__(self) -> None:
        if self.scored < 0:  # built without a denominator of its own: every answer is scored
            object.__setattr__(self, "scored", self.n)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.dataset, self.split, self.model, self.condition)


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """Exact McNemar test of two conditions on the same questions.

    ``only_a`` = questions A got right and B wrong, ``only_b`` the reverse; ``p_value`` is the
    two-sided exact binomial p-value of ``only_a`` out of ``only_a + only_b`` at 1/2 (1.0 when
    there are no discordant pairs).
    """

    p_value: float
    only_a: int
    only_b: int
    n: int


@lru_cache(maxsize=16)
def _z(confidence: float) -> float:
    return float(_stats().norm.ppf(0.5 + confidence / 2))


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval (low, high), as proportions 0..1, for ``k`` successes in ``n``.

    Same numbers as ``scipy._stats().binomtest(k, n).proportion_ci(confidence, "wilson")`` (a test
    checks this on a grid), computed from the normal quantile directly because binomtest also
    computes a p-value and is ~100x slower, which matters when a live table has hundreds of
    rows. ``n == 0`` gives (0.0, 1.0): no data, no information.
    """
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= k <= n:
        raise ValueError(f"k={k} must be between 0 and n={n}")
    z = _z(confidence)
    p = k / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if k == 0 else max(0.0, center - half)
    high = 1.0 if k == n else min(1.0, center + half)
    return (low, high)


def accuracy_table(
    rows: Iterable[ScoredAnswer], confidence: float = 0.95, *, truncated_as_wrong: bool = False
) -> list[AccuracyRow]:
    """One :class:`AccuracyRow` per dataset x split x model x condition, sorted by that key.

    Truncated answers are left out of each accuracy's denominator unless ``truncated_as_wrong``.
    """
    groups: dict[tuple[str, str, str, str], list[ScoredAnswer]] = {}
    for row in rows:
        key = (row.dataset, row.split, row.model, row.condition)
        group = groups.get(key)
        if group is None:
            groups[key] = [row]
        else:
            group.append(row)
    return [_row(key, answers, confidence, truncated_as_wrong) for key, answers in sorted(groups.items())]


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    values.sort()
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _row(
    key: tuple[str, str, str, str], answers: list[ScoredAnswer], confidence: float, truncated_as_wrong: bool = False
) -> AccuracyRow:
    # A live Results tab recomputes this for every condition on each redraw: counted with
    # list.count and a set of sample ids, the per-question grouping only when a question has
    # several samples (self-consistency).
    outcomes = [a.outcome for a in answers]
    n = len(answers)
    correct = outcomes.count("correct")
    unextractable = outcomes.count("unextractable")
    truncated = outcomes.count("truncated")
    scored = n if truncated_as_wrong else n - truncated
    low, high = wilson_interval(correct, scored, confidence)
    questions = len({a.sample_id for a in answers})
    majority = None
    if questions < n:  # some question has several samples
        by_question: dict[str, list[ScoredAnswer]] = defaultdict(list)
        for answer in answers:
            by_question[answer.sample_id].append(answer)
        majority = sum(majority_vote_correct(samples) for samples in by_question.values()) / len(by_question)
    return AccuracyRow(
        *key,
        n=n,
        correct=correct,
        incorrect=outcomes.count("incorrect"),
        unextractable=unextractable,
        accuracy=correct / scored if scored else 0.0,
        wilson_low=low,
        wilson_high=high,
        share_unextractable=unextractable / n,
        questions=questions,
        majority_accuracy=majority,
        mean_tokens=_mean([float(a.tokens) for a in answers if a.tokens is not None]),
        mean_cost=_mean([float(a.cost) for a in answers if a.cost is not None]),
        truncated=truncated,
        share_truncated=truncated / n,
        scored=scored,
        truncated_as_wrong=truncated_as_wrong,
        share_reasoning=sum(1 for a in answers if a.reasoning) / n,
        median_reasoning_tokens=_median([float(a.reasoning_tokens) for a in answers if a.reasoning_tokens is not None]),
    )


def majority_vote_correct(samples: Sequence[ScoredAnswer]) -> bool:
    """Whether the majority-vote answer of one question's samples is correct.

    Votes are extracted values (``value``); unextractable and truncated samples do not vote. A tie goes to
    the value whose first vote came earliest (lowest ``sample_index``), so the result does not
    depend on input order. Samples without a value vote with their outcome instead, which merges
    different wrong answers into one vote: pass values for true self-consistency.
    """
    votes: Counter[object] = Counter()
    first: dict[object, int] = {}
    correct_values: set[object] = set()
    for sample in sorted(samples, key=lambda s: s.sample_index):
        if sample.outcome == "unextractable" or sample.outcome == "truncated":
            continue
        vote = sample.value if sample.value is not None else ("outcome", sample.outcome)
        try:
            hash(vote)
        except TypeError:
            vote = repr(vote)
        votes[vote] += 1
        first.setdefault(vote, sample.sample_index)
        if sample.outcome == "correct":
            correct_values.add(vote)
    if not votes:
        return False
    winner = max(votes, key=lambda v: (votes[v], -first[v]))
    return winner in correct_values


def mcnemar_exact(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> McNemarResult:
    """Exact McNemar test for paired correctness of conditions A and B on the same questions.

    ``a_correct[i]`` and ``b_correct[i]`` belong to the same question (count unextractable as
    not correct, or leave the question out, before calling).
    """
    if len(a_correct) != len(b_correct):
        raise ValueError(f"paired lists differ in length: {len(a_correct)} and {len(b_correct)}")
    only_a = sum(1 for a, b in zip(a_correct, b_correct, strict=False) if a and not b)
    only_b = sum(1 for a, b in zip(a_correct, b_correct, strict=False) if b and not a)
    discordant = only_a + only_b
    p_value = 1.0 if discordant == 0 else float(_stats().binomtest(only_a, discordant, 0.5).pvalue)
    return McNemarResult(min(1.0, p_value), only_a, only_b, len(a_correct))


def bootstrap_difference(
    a: Sequence[float | bool],
    b: Sequence[float | bool],
    n_resamples: int = 9999,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Paired bootstrap of mean(a) - mean(b): (difference, low, high), in the unit of a and b
    (for correctness lists: proportions, 0.05 = 5 percentage points).

    Questions are resampled together (``paired=True``); percentile interval, reproducible for
    a given ``seed``. With fewer than two pairs the interval is the point itself.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired lists differ in length: {x.size} and {y.size}")
    if x.size == 0:
        return (math.nan, math.nan, math.nan)
    diff = float(x.mean() - y.mean())
    if x.size < 2 or np.all(x - y == x[0] - y[0]):
        return (diff, diff, diff)
    result = _stats().bootstrap(
        (x, y),
        lambda u, v, axis=-1: u.mean(axis=axis) - v.mean(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return (diff, float(result.confidence_interval.low), float(result.confidence_interval.high))


@dataclass(frozen=True, slots=True)
class MeanInterval:
    """The mean of ``n`` values with its Student-t interval (``low``..``high``).

    ``mean`` is None without values; the interval is None with fewer than two (no spread to
    estimate) and a point when every value is the same.
    """

    n: int
    mean: float | None
    low: float | None
    high: float | None


@lru_cache(maxsize=256)
def _t(confidence: float, df: int) -> float:
    return float(_stats().t.ppf(0.5 + confidence / 2, df))


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> MeanInterval:
    """Mean with the t interval ``mean +- t(n-1) * s / sqrt(n)`` (``s``: sample standard deviation)."""
    n = len(values)
    if n == 0:
        return MeanInterval(0, None, None, None)
    mean = math.fsum(values) / n
    if n < 2:
        return MeanInterval(n, mean, None, None)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = _t(confidence, n - 1) * sd / math.sqrt(n)
    return MeanInterval(n, mean, mean - half, mean + half)
