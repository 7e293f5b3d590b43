"""Statistics against values computed independently.

Wilson and McNemar reference values were computed once with statsmodels 0.15.0
(``statsmodels.stats.proportion.proportion_confint(k, n, alpha, method="wilson")`` and
``statsmodels.stats.contingency_tables.mcnemar(table, exact=True).pvalue``) and pasted here;
statsmodels is not a dependency of ThoughtDesk.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from thoughtdesk.core.evaluation.answers.result import Outcome
from thoughtdesk.core.evaluation.evaluate import PairedOutcomes
from thoughtdesk.core.evaluation.metrics import (
    ScoredAnswer,
    accuracy_table,
    bootstrap_difference,
    majority_vote_correct,
    mcnemar_exact,
    wilson_interval,
)


@pytest.mark.parametrize(
    "k,n,confidence,low,high",
    [
        (81, 263, 0.95, 0.2552885198782742, 0.36620957698280004),
        (0, 10, 0.95, 0.0, 0.27753279986288926),
        (10, 10, 0.95, 0.7224672001371106, 1.0),
        (1, 1, 0.95, 0.2065493143772374, 1.0),
        (37, 50, 0.90, 0.6275387029219313, 0.827821367900659),
        (500, 1000, 0.99, 0.45940700521208483, 0.5405929947879151),
    ],
)
def test_wilson_matches_statsmodels(k, n, confidence, low, high):
    assert wilson_interval(k, n, confidence) == pytest.approx((low, high), abs=1e-12)


def test_wilson_edge_cases():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def _pairs(table):
    """Paired lists from a 2x2 table [[both right, only A], [only B, both wrong]]."""
    (both, only_a), (only_b, neither) = table
    a = [True] * both + [True] * only_a + [False] * only_b + [False] * neither
    b = [True] * both + [False] * only_a + [True] * only_b + [False] * neither
    return a, b


@pytest.mark.parametrize(
    "table,p_value",
    [
        ([[30, 10], [3, 57]], 0.09228515625),
        ([[5, 0], [0, 5]], 1.0),
        ([[10, 12], [4, 20]], 0.076812744140625),
        ([[0, 1], [0, 0]], 1.0),
    ],
)
def test_mcnemar_matches_statsmodels(table, p_value):
    a, b = _pairs(table)
    result = mcnemar_exact(a, b)
    assert result.p_value == pytest.approx(p_value, rel=1e-12)
    assert (result.only_a, result.only_b) == (table[0][1], table[1][0])


def test_mcnemar_rejects_unpaired():
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])


def test_bootstrap_difference_against_normal_approximation():
    rng = random.Random(7)
    a = [rng.random() < 0.70 for _ in range(400)]
    b = [x if rng.random() < 0.8 else not x for x in a]  # correlated, as paired conditions are
    diff, low, high = bootstrap_difference(a, b, n_resamples=4000, seed=3)
    d = np.asarray(a, float) - np.asarray(b, float)
    assert diff == pytest.approx(d.mean())
    se = d.std(ddof=1) / math.sqrt(d.size)
    # percentile bootstrap of a mean ~ mean +- 1.96 SE for n=400
    assert low == pytest.approx(d.mean() - 1.96 * se, abs=0.25 * 1.96 * se)
    assert high == pytest.approx(d.mean() + 1.96 * se, abs=0.25 * 1.96 * se)
    assert bootstrap_difference(a, b, n_resamples=4000, seed=3) == (diff, low, high)  # reproducible


def test_bootstrap_degenerate_inputs():
    assert bootstrap_difference([1, 1, 1], [0, 0, 0]) == (1.0, 1.0, 1.0)
    assert all(math.isnan(v) for v in bootstrap_difference([], []))


def _answers():
    rows = []
    # condition "zs": 10 questions, 6 correct, 1 unextractable
    for i in range(10):
        outcome: Outcome = "correct" if i < 6 else ("unextractable" if i == 6 else "incorrect")
        rows.append(ScoredAnswer("medqa", "test", "gpt", "zs", f"q{i}", outcome, tokens=100 + i, cost=0.01))
    # condition "sc": 3 samples per question for 4 questions, values vote
    votes: dict[str, list[tuple[str | None, Outcome]]] = {
        "q0": [("A", "correct"), ("A", "correct"), ("B", "incorrect")],
        "q1": [("B", "incorrect"), ("A", "correct"), ("C", "incorrect")],  # tie -> first (B)
        "q2": [("C", "incorrect"), ("B", "correct"), ("B", "correct")],
        "q3": [(None, "unextractable"), (None, "unextractable"), ("D", "incorrect")],
    }
    for qid, samples in votes.items():
        for index, (value, outcome) in enumerate(samples):
            rows.append(ScoredAnswer("medqa", "test", "gpt", "sc", qid, outcome, sample_index=index, value=value))
    return rows


def test_accuracy_table():
    table = {row.condition: row for row in accuracy_table(_answers())}
    zs = table["zs"]
    assert (zs.n, zs.correct, zs.incorrect, zs.unextractable) == (10, 6, 3, 1)
    assert zs.accuracy == 0.6 and zs.share_unextractable == 0.1
    assert (zs.wilson_low, zs.wilson_high) == pytest.approx(wilson_interval(6, 10))
    assert zs.majority_accuracy is None  # one sample per question
    assert zs.mean_tokens == pytest.approx(104.5) and zs.mean_cost == pytest.approx(0.01)
    sc = table["sc"]
    assert (sc.n, sc.questions, sc.correct, sc.unextractable) == (12, 4, 5, 2)
    assert sc.majority_accuracy == pytest.approx(2 / 4)  # q0 and q2
    assert sc.mean_tokens is None


def test_majority_vote_is_order_independent():
    rows = [r for r in _answers() if r.sample_id == "q1" and r.condition == "sc"]
    assert majority_vote_correct(rows) is False
    assert majority_vote_correct(list(reversed(rows))) is False


def test_paired_outcomes_take_the_first_sample_of_each_question():
    rows = _answers()
    ids, a, b = PairedOutcomes(rows).paired(("medqa", "test", "gpt", "zs"), ("medqa", "test", "gpt", "sc"))
    assert ids == ["q0", "q1", "q2", "q3"]
    assert a == [True, True, True, True]
    assert b == [True, False, False, False]  # first sample of each question


def test_wilson_matches_scipy_binomtest_on_a_grid():
    from scipy import stats

    for n in (1, 2, 5, 17, 100, 263, 1000):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for confidence in (0.9, 0.95, 0.99):
                ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
                assert wilson_interval(k, n, confidence) == pytest.approx((ci.low, ci.high), abs=1e-12), (k, n)
