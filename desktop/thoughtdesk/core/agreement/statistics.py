"""Agreement and association statistics: Krippendorff's alpha at every level of measurement,
Spearman and Kendall with 95 % intervals, AUROC (Mann-Whitney) with its interval.

The one implementation of Krippendorff's alpha in ThoughtDesk (issue 12): the review workbench
(nominal labels) and the critique analysis (ordinal/interval scores) both call
:func:`krippendorff_alpha`. It is a few lines over the coincidence matrix, checked against the
``krippendorff`` package in ``tests/core/agreement/test_statistics.py`` (that package is
not a run-time dependency). Conventions, as in ``core.agreement.kappa``: ``ratings[rater][item]``
with ``None`` for a missing rating; a statistic that is undefined on the data is ``None``, never
``nan``.

Correlation intervals use Fisher's z transform with the variances of Fieller, Hartley and
Pearson (1957): ``1.06 / (n - 3)`` for Spearman's rho and ``0.437 / (n - 4)`` for Kendall's
tau-b; the coefficients themselves come from scipy (loaded on first use: it costs a second).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")


def _stats():
    # scipy.stats costs over a second to import: loaded on first use, not at start-up.
    from scipy import stats

    return stats


@lru_cache(maxsize=16)
def normal_quantile(confidence: float) -> float:
    """The two-sided standard normal quantile for ``confidence`` (1.959964 for 0.95)."""
    return float(_stats().norm.ppf(0.5 + confidence / 2))


# Krippendorff's alpha --------------------------------------------------------------------------


def _as_number(value: Hashable) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):  # numpy numbers are Real too
        raise ValueError(f"ordinal, interval and ratio ratings must be numbers; got {value!r}")
    return float(value)


def _distances(values: list, marginals: np.ndarray, level: Level) -> np.ndarray:
    """The squared difference function delta(c, k) between every pair of distinct values."""
    import numpy as np  # imported on first use: the window's start does not need it

    count = len(values)
    if level == "nominal":
        return 1.0 - np.eye(count)
    v = np.asarray(values, dtype=float)
    if level == "interval":
        return np.square(v[:, None] - v[None, :])
    if level == "ratio":
        total = v[:, None] + v[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.square((v[:, None] - v[None, :]) / total)
        return np.nan_to_num(out, nan=0.0)  # 0 vs 0: no difference
    # Ordinal: (sum of the marginals from c to k) - (n_c + n_k) / 2, squared; values sorted.
    cumulative = np.concatenate(([0.0], np.cumsum(marginals)))
    low = np.minimum.outer(np.arange(count), np.arange(count))
    high = np.maximum.outer(np.arange(count), np.arange(count))
    spanned = cumulative[high + 1] - cumulative[low]
    return np.square(spanned - (marginals[:, None] + marginals[None, :]) / 2.0)


def krippendorff_alpha(ratings: Sequence[Sequence[Hashable | None]], level: Level = "nominal") -> float | None:
    """Krippendorff's alpha; ``ratings[rater][item]``, ``None`` = missing.

    ``level`` is ``nominal`` (labels: any hashable values), ``ordinal`` (ranks: numbers, only
    their order counts), ``interval`` or ``ratio`` (numbers). Each item with ``m_u >= 2`` ratings
    adds ``1 / (m_u - 1)`` to the coincidence matrix ``o`` for every ordered pair of its ratings;
    with marginals ``n_c`` and total ``n``,
    ``alpha = 1 - (n - 1) * sum o_ck delta_ck / sum n_c n_k delta_ck``. None when fewer than two
    pairable ratings or no expected disagreement (everyone used one value).
    """
    import numpy as np  # imported on first use: the window's start does not need it

    if level not in LEVELS:
        raise ValueError(f"unknown level of measurement {level!r}; expected one of {', '.join(LEVELS)}")
    if not ratings:
        return None
    n_items = len(ratings[0])
    if any(len(row) != n_items for row in ratings):
        raise ValueError("every rater needs one entry (or None) per item")
    pairable = []
    for item in range(n_items):
        values = [row[item] for row in ratings if row[item] is not None]
        if len(values) >= 2:
            pairable.append(values)
    distinct = {v for values in pairable for v in values}
    # Labels are ordered by repr only to be deterministic; numbers by value (ordinal distances need it).
    categories = sorted(distinct, key=repr if level == "nominal" else _as_number)
    index = {c: i for i, c in enumerate(categories)}
    coincidence = np.zeros((len(categories), len(categories)))
    for values in pairable:
        counts = np.zeros(len(categories))
        for value in values:
            counts[index[value]] += 1
        # Ordered pairs of ratings within the item: n_c * n_k (c != k), n_c (n_c - 1) (c == k).
        coincidence += (np.outer(counts, counts) - np.diag(counts)) / (len(values) - 1)
    marginals = coincidence.sum(axis=1)
    total = marginals.sum()
    if total <= 1:
        return None
    delta = _distances(categories, marginals, level)
    expected = float((np.outer(marginals, marginals) * delta).sum())
    if expected <= 0:
        return None
    observed = float((coincidence * delta).sum())
    return float(1.0 - (total - 1.0) * observed / expected)


# Rank correlations ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Correlation:
    """A correlation coefficient on ``n`` pairs with its interval (``low``..``high``).

    ``value`` is None when undefined (fewer than 2 pairs, or one side constant); the interval is
    None when ``n`` is too small for Fisher's z (Spearman needs 4 pairs, Kendall 5).
    """

    n: int
    value: float | None
    low: float | None
    high: float | None


def _fisher_interval(r: float, n: int, variance_numerator: float, offset: int, confidence: float):
    if n <= offset:
        return None, None
    if abs(r) >= 1.0:
        return r, r  # a perfect rank agreement: the transform is infinite, the interval a point
    z = math.atanh(r)
    half = normal_quantile(confidence) * math.sqrt(variance_numerator / (n - offset))
    return math.tanh(z - half), math.tanh(z + half)


def _clean_pairs(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np  # imported on first use: the window's start does not need it

    if len(x) != len(y):
        raise ValueError(f"paired lists differ in length: {len(x)} and {len(y)}")
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def _coefficient(value: float) -> float | None:
    return None if value != value else float(value)  # nan: a constant side


def spearman(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> Correlation:
    """Spearman's rho (scipy, midranks for ties) with a Fisher-z interval, SE ``sqrt(1.06/(n-3))``."""
    import numpy as np  # imported on first use: the window's start does not need it

    a, b = _clean_pairs(x, y)
    n = len(a)
    if n < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return Correlation(n, None, None, None)
    rho = _coefficient(_stats().spearmanr(a, b).statistic)
    if rho is None:
        return Correlation(n, None, None, None)
    low, high = _fisher_interval(rho, n, 1.06, 3, confidence)
    return Correlation(n, rho, low, high)


def kendall(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> Correlation:
    """Kendall's tau-b (scipy) with a Fisher-z interval, SE ``sqrt(0.437/(n-4))``."""
    import numpy as np  # imported on first use: the window's start does not need it

    a, b = _clean_pairs(x, y)
    n = len(a)
    if n < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return Correlation(n, None, None, None)
    tau = _coefficient(_stats().kendalltau(a, b).statistic)
    if tau is None:
        return Correlation(n, None, None, None)
    low, high = _fisher_interval(tau, n, 0.437, 4, confidence)
    return Correlation(n, tau, low, high)


# AUROC ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Auroc:
    """Area under the ROC curve of a score separating ``positives`` from ``negatives``.

    ``value`` = P(score of a positive > score of a negative) + 1/2 P(tie): the Mann-Whitney U of
    the positives over ``positives * negatives``; None without both classes. ``low``/``high``:
    the Hanley-McNeil (1982) normal interval, clipped to 0..1.
    """

    positives: int
    negatives: int
    value: float | None
    low: float | None
    high: float | None


def auroc(scores: Sequence[float], positive: Sequence[bool], confidence: float = 0.95) -> Auroc:
    """AUROC of ``scores`` for the ``positive`` items (higher score = more likely positive).

    Ties count one half (midranks), so a score that does not separate at all gives 0.5.
    """
    import numpy as np  # imported on first use: the window's start does not need it

    if len(scores) != len(positive):
        raise ValueError(f"scores and classes differ in length: {len(scores)} and {len(positive)}")
    s = np.asarray(scores, dtype=float)
    p = np.asarray(positive, dtype=bool)
    keep = ~np.isnan(s)
    s, p = s[keep], p[keep]
    n1, n2 = int(p.sum()), int((~p).sum())
    if n1 == 0 or n2 == 0:
        return Auroc(n1, n2, None, None, None)
    ranks = _stats().rankdata(s)  # average ranks for ties
    u = float(ranks[p].sum()) - n1 * (n1 + 1) / 2.0
    a = u / (n1 * n2)
    q1 = a / (2.0 - a)
    q2 = 2.0 * a * a / (1.0 + a)
    variance = (a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n2 - 1) * (q2 - a * a)) / (n1 * n2)
    half = normal_quantile(confidence) * math.sqrt(max(variance, 0.0))
    return Auroc(n1, n2, a, max(0.0, a - half), min(1.0, a + half))
