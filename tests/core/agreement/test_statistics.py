"""The shared agreement statistics: Krippendorff's alpha at every level (hand values from
Krippendorff's own worked example, and the ``krippendorff`` package on random data), Spearman and
Kendall against scipy with their Fisher-z intervals, AUROC with ties, the t interval of a mean."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats

from thoughtdesk.core.agreement.kappa import krippendorff_alpha_nominal
from thoughtdesk.core.agreement.statistics import auroc, kendall, krippendorff_alpha, spearman
from thoughtdesk.core.evaluation.metrics import MeanInterval, mean_interval

N = None  # no rating
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers, 12 units.
WORKED: list[list[int | None]] = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


@pytest.mark.parametrize(
    ("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_alpha_matches_krippendorffs_worked_example(level, expected):
    assert krippendorff_alpha(WORKED, level) == pytest.approx(expected, abs=5e-4)


def _as_array(ratings):
    return np.array([[np.nan if v is None else v for v in row] for row in ratings], dtype=float)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(6))
def test_alpha_matches_the_krippendorff_package_with_missing_ratings(level, seed):
    rng = np.random.default_rng(seed)
    raters, items = int(rng.integers(2, 6)), int(rng.integers(5, 40))
    truth = rng.integers(0, 6, size=items)
    ratings = [
        [None if rng.random() < 0.25 else int(np.clip(t + rng.integers(-1, 2), 0, 5)) for t in truth]
        for _ in range(raters)
    ]
    ours = krippendorff_alpha(ratings, level)
    theirs = krippendorff.alpha(reliability_data=_as_array(ratings), level_of_measurement=level)
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_review_alpha_is_the_shared_nominal_alpha():
    labels: list[list[bool | None]] = [[True, False, True, None], [True, True, True, False], [None, False, True, False]]
    assert krippendorff_alpha_nominal(labels) == krippendorff_alpha(labels, "nominal")
    assert krippendorff_alpha_nominal(labels) == pytest.approx(
        krippendorff.alpha(
            reliability_data=_as_array([[None if v is None else int(v) for v in r] for r in labels]),
            level_of_measurement="nominal",
        )
    )


def test_alpha_is_none_when_undefined_and_rejects_bad_input():
    assert krippendorff_alpha([], "interval") is None
    assert krippendorff_alpha([[3, 3, 3], [3, 3, 3]], "interval") is None  # no spread: no expected disagreement
    assert krippendorff_alpha([[1, None], [None, 2]], "ordinal") is None  # no item rated twice
    with pytest.raises(ValueError, match="one entry"):
        krippendorff_alpha([[1, 2], [1]], "nominal")
    with pytest.raises(ValueError, match="must be numbers"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], "ordinal")
    with pytest.raises(ValueError, match="unknown level"):
        krippendorff_alpha([[1], [1]], "cardinal")  # type: ignore[arg-type]  # the point of the test


def _fisher(r: float, n: int, numerator: float, offset: int) -> tuple[float, float]:
    half = 1.959963984540054 * math.sqrt(numerator / (n - offset))
    return math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


def test_spearman_and_kendall_match_scipy_with_fisher_intervals():
    x = [0, 1, 1, 2, 3, 3, 4, 5, 5, 2]
    y = [1, 1, 2, 2, 3, 5, 4, 4, 5, 0]
    rho, tau = spearman(x, y), kendall(x, y)
    assert rho.n == tau.n == 10
    assert rho.value == pytest.approx(stats.spearmanr(x, y).statistic)
    assert tau.value == pytest.approx(stats.kendalltau(x, y).statistic)
    assert rho.value is not None and tau.value is not None
    assert (rho.low, rho.high) == pytest.approx(_fisher(rho.value, 10, 1.06, 3))
    assert (tau.low, tau.high) == pytest.approx(_fisher(tau.value, 10, 0.437, 4))
    assert rho.low is not None and rho.high is not None and rho.low < rho.value < rho.high


def test_correlations_small_constant_and_perfect():
    assert spearman([1, 2, 3], [1, 3, 2]).low is None  # n = 3: no Fisher interval for rho
    assert kendall([1, 2, 3, 4], [1, 3, 2, 4]).low is None  # n = 4: none for tau either
    assert spearman([1, 1, 1, 1, 1], [1, 2, 3, 4, 5]).value is None  # a constant side
    assert spearman([1.0], [2.0]).value is None
    perfect = kendall([1, 2, 3, 4, 5, 6], [2, 4, 6, 8, 10, 12])
    assert (perfect.value, perfect.low, perfect.high) == (pytest.approx(1.0), pytest.approx(1.0), pytest.approx(1.0))
    assert spearman([1, float("nan"), 3, 4, 5], [1, 2, 3, 4, 5]).n == 4  # a missing value drops its pair


def test_auroc_counts_ties_as_half():
    # positives 3, 2; negatives 2, 1: pairs (3,2)=1 (3,1)=1 (2,2)=1/2 (2,1)=1 -> 3.5 / 4
    result = auroc([3, 2, 2, 1], [True, True, False, False])
    assert (result.positives, result.negatives, result.value) == (2, 2, 0.875)
    assert result.low is not None and result.high is not None
    assert 0.0 <= result.low <= 0.875 <= result.high <= 1.0
    u = stats.mannwhitneyu([5, 4, 4, 3, 1], [4, 2, 2, 0]).statistic
    assert auroc([5, 4, 4, 3, 1, 4, 2, 2, 0], [True] * 5 + [False] * 4).value == pytest.approx(u / 20)
    assert auroc([2, 2, 2], [True, False, True]).value == 0.5  # a score that does not separate at all
    assert auroc([1, 0], [False, True]).value == 0.0  # higher score on the wrong side
    assert auroc([1, 2], [True, True]).value is None  # one class only


def test_auroc_hanley_mcneil_interval_by_hand():
    result = auroc([4, 3, 2, 1, 3, 0], [True, True, True, False, False, False])
    # pairs: 4>1,3,0; 3>1,0 and 3=3; 2>1,0 and 2<3 -> (3 + 2.5 + 2) / 9
    a = 7.5 / 9
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    se = math.sqrt((a * (1 - a) + 2 * (q1 - a * a) + 2 * (q2 - a * a)) / 9)
    assert result.value == pytest.approx(a)
    assert (result.low, result.high) == pytest.approx(
        (a - 1.959963984540054 * se, min(1.0, a + 1.959963984540054 * se))
    )


def test_mean_interval_is_students_t():
    values = [2.0, 3.0, 5.0, 4.0]
    got = mean_interval(values)
    low, high = stats.t.interval(0.95, 3, loc=3.5, scale=stats.sem(values))
    assert (got.n, got.mean) == (4, 3.5)
    assert (got.low, got.high) == pytest.approx((low, high))
    assert mean_interval([]) == MeanInterval(0, None, None, None)
    single = mean_interval([4.0])
    assert (single.mean, single.low, single.high) == (4.0, None, None)
    assert mean_interval([3.0, 3.0, 3.0]) == MeanInterval(3, 3.0, 3.0, 3.0)


def test_alpha_takes_numpy_numbers():
    ratings: list[list[np.int64 | None]] = [[np.int64(1), np.int64(2), None], [np.int64(1), np.int64(3), np.int64(2)]]
    plain: list[list[int | None]] = [[1, 2, None], [1, 3, 2]]
    assert krippendorff_alpha(ratings, "ordinal") == krippendorff_alpha(plain, "ordinal")
