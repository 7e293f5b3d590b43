"""Judge figures: Bradley-Terry strengths and their bootstrap intervals."""

from __future__ import annotations

import math

from thoughtdesk.core.judges.analysis import TIE, JudgeKey, PairOutcome, bradley_terry, condition_figures

JUDGE = JudgeKey("j", "td-pairwise-v1", "v")


def _pair(low: int, high: int, winner: int) -> PairOutcome:
    return PairOutcome(JUDGE, 1, low, high, winner, True, "")


def test_bradley_terry_orders_by_wins_and_centres_on_zero():
    strengths = bradley_terry([[0, 3, 4], [1, 0, 3], [0, 1, 0]])
    assert strengths[0] > strengths[1] > strengths[2]
    assert math.isclose(sum(strengths), 0.0, abs_tol=1e-9)
    # an item that won everything stays finite; one without games is NaN, not a zero strength
    assert all(math.isfinite(s) for s in bradley_terry([[0, 5], [0, 0]]))
    assert math.isnan(bradley_terry([[0, 1, 0], [0, 0, 0], [0, 0, 0]])[2])


def test_a_condition_absent_from_a_resample_does_not_drag_its_interval_to_zero():
    # Conditions: CoTs 1-40 are "a", 41-80 "b", 81 "c". a and b split evenly; c beat b once.
    conditions = {pk: "a" for pk in range(1, 41)} | {pk: "b" for pk in range(41, 81)} | {81: "c"}
    outcomes = [_pair(i, 40 + i, i if i % 2 else 40 + i) for i in range(1, 41)]
    outcomes.append(_pair(41, 81, 81))
    outcomes.append(_pair(2, 42, TIE))
    figures = {c.condition: c for c in condition_figures(JUDGE, outcomes, conditions, n_resamples=300, seed=1)}
    c = figures["c"]
    assert c.wins == 1 and c.losses == 0 and c.strength > 0
    assert c.low > 0  # resamples without c's one pair said nothing of c (they were a 0 before)
    assert figures["a"].ties == 1 and figures["b"].ties == 1


def test_a_pair_judged_again_counts_its_newest_verdicts_once():
    from thoughtdesk.core.judges.analysis import pair_outcomes
    from thoughtdesk.core.judges.store import VerdictRow

    rows = [
        VerdictRow(1, 7, 10, 20, "j", "t", "v", "A", "2026-11-28T10:00:00Z"),
        VerdictRow(2, 7, 20, 10, "j", "t", "v", "A", "2026-11-28T10:00:01Z"),  # a flip: inconsistent
        VerdictRow(3, 7, 20, 10, "j", "t", "v", "B", "2026-11-28T11:00:00Z"),  # judged again (--force): consistent
        VerdictRow(4, 7, 30, 40, "j", "t", "v", "tie", "2026-11-28T11:00:00Z"),  # one order only
    ]
    (outcome,), counts = pair_outcomes(rows)
    assert outcome.consistent and outcome.winner == 10 and outcome.created == "2026-11-28T11:00:00Z"
    (tally,) = counts.values()
    assert tally == {"A": 1, "B": 1, "tie": 1, "incomplete": 1}
