"""Agreement between raters on nominal ratings: Cohen's kappa, Fleiss' kappa, Krippendorff's alpha
(nominal), percent agreement. Used by the review workbench (agreement per label, judges against
humans, step labels).

Why a small implementation here rather than a library call at run time: the formulas are a few
lines each, while the well-kept libraries that have them pull in large stacks the desktop build
would have to ship (``statsmodels`` needs pandas and patsy, ``scikit-learn`` needs joblib and
threadpoolctl and is big) or are not a dependency (``krippendorff``).
``tests/core/review/test_agreement_stats.py`` checks every function here against
``statsmodels.stats.inter_rater`` (Cohen, Fleiss) and ``krippendorff.alpha`` (nominal, with
missing ratings) on hand-computed and random data, so the two cannot drift apart. Conventions
(as :mod:`thoughtdesk.core.agreement.statistics`): ``ratings[rater][item]`` with ``None`` for a
missing rating; a statistic that is undefined on the data (every rating the same category, so
chance agreement is 1; fewer than two raters or items) is ``None``, never ``nan``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

from thoughtdesk.core.agreement.statistics import krippendorff_alpha

if TYPE_CHECKING:
    import numpy as np


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' ratings of the same items (paired by position).

    ``kappa = (p_o - p_e) / (1 - p_e)`` with observed agreement ``p_o`` and chance agreement
    ``p_e = sum_c p1(c) * p2(c)`` from each rater's own category frequencies.
    """
    if len(first) != len(second):
        raise ValueError(f"Cohen's kappa needs paired ratings; got {len(first)} and {len(second)}")
    n = len(first)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    categories = set(first) | set(second)
    chance = sum((list(first).count(c) / n) * (list(second).count(c) / n) for c in categories)
    if chance >= 1.0 - 1e-12:
        return None
    return (observed - chance) / (1.0 - chance)


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from an items x categories table of rating counts (equal row sums).

    ``P_i = (sum_j n_ij^2 - m) / (m (m - 1))``, ``P_bar = mean P_i``, ``p_j = sum_i n_ij / (N m)``,
    ``P_e = sum_j p_j^2``, ``kappa = (P_bar - P_e) / (1 - P_e)``.
    """
    import numpy as np  # imported on first use: the window's start does not need it

    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        return None
    raters = table.sum(axis=1)
    if not np.allclose(raters, raters[0]):
        raise ValueError("Fleiss' kappa needs the same number of ratings for every item")
    m = raters[0]
    if m < 2:
        return None
    per_item = (np.square(table).sum(axis=1) - m) / (m * (m - 1))
    mean_agreement = per_item.mean()
    proportions = table.sum(axis=0) / table.sum()
    chance = float(np.square(proportions).sum())
    if chance >= 1.0 - 1e-12:
        return None
    return float((mean_agreement - chance) / (1.0 - chance))


def krippendorff_alpha_nominal(ratings: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Krippendorff's alpha for nominal data; ``ratings[rater][item]``, ``None`` = missing.

    The one implementation is :func:`thoughtdesk.core.agreement.statistics.krippendorff_alpha`
    (issue 12); this is its nominal level, under the name the review code has always used.
    """
    return krippendorff_alpha(ratings, "nominal")


def percent_agreement(ratings: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Mean pairwise agreement in percent over items with at least two ratings.

    Per item: agreeing ordered pairs / all ordered pairs, ``sum_c n_c (n_c - 1) / (m (m - 1))``;
    for two raters this is the share of items on which they agree.
    """
    if not ratings:
        return None
    shares = []
    for item in range(len(ratings[0])):
        values = [row[item] for row in ratings if row[item] is not None]
        m = len(values)
        if m < 2:
            continue
        counts: dict[Hashable, int] = {}
        for value in values:
            counts[value] = counts.get(value, 0) + 1
        shares.append(sum(c * (c - 1) for c in counts.values()) / (m * (m - 1)))
    return 100.0 * sum(shares) / len(shares) if shares else None
