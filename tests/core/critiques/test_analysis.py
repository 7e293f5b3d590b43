"""The critique analysis: every figure on a small hand-computed case, and the reading of a real
library (conditions and correctness as the evaluation defines them, ratings, other collections)."""

from __future__ import annotations

import math
from typing import Literal

import krippendorff
import numpy as np
import pytest
from scipy import stats

from tests.helpers.libraries import demo_library
from thoughtdesk.core.critiques import (
    Critique,
    CritiqueRating,
    ExplanationRating,
    ParsedCritique,
    add_critique,
    add_critique_rating,
    add_explanation_rating,
)
from thoughtdesk.core.critiques.analysis import (
    HUMAN,
    CritiqueData,
    CritiqueFact,
    ScorePoint,
    analyse,
    analyse_collection,
    load_critique_data,
)
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.evaluation.evaluate import evaluate
from thoughtdesk.core.library.store import Library

S1 = ("gsm8k", "test", "m1", "- / kojima / -")
S2 = ("gsm8k", "test", "m2", "- / kojima / -")
T975_2 = 4.302652729911275  # Student t, 97.5 % quantile, 2 degrees of freedom


def hand_data() -> CritiqueData:
    """DS-13B judges CoTs 1-4; gpt-4 judges CoTs 1, 2, 3 (twice) and 5. Humans a and b rate."""
    f = CritiqueFact
    return CritiqueData(
        "C",
        critiques=[
            f(1, 1, "DS-13B", "incorrect_reasoning", 2.0, S1, False),
            f(2, 2, "DS-13B", "incorrect_reasoning", 4.0, S1, True),
            f(3, 3, "DS-13B", None, 5.0, S1, True),
            f(4, 4, "DS-13B", "missing_information", None, S2, None),
            f(5, 1, "gpt-4", "incorrect_reasoning", 3.0, S1, False),
            f(6, 2, "gpt-4", "misunderstanding", 3.0, S1, True),
            f(7, 3, "gpt-4", "irrelevant", 4.0, S1, True),
            f(8, 3, "gpt-4", "misunderstanding", 5.0, S1, True),
            f(9, 5, "gpt-4", None, 5.0, S1, True),
        ],
        critique_ratings=[(1, "w1", 3), (1, "w2", 1), (2, "w1", 2)],
        explanation_ratings=[(1, "a", 1), (1, "b", 2), (2, "a", 4), (2, "b", 4), (2, "a", 3), (3, "a", 5), (5, "b", 5)],
    )


def test_per_critique_model_by_hand():
    result = analyse(hand_data())
    assert result.n_critiques == 9
    ds, gpt = result.critique_models
    assert (ds.model, ds.n, ds.n_scored) == ("DS-13B", 4, 3)
    # scores 2, 4, 5: mean 11/3, s = sqrt((25 + 1 + 16) / 9 / 2) = sqrt(7/3)
    assert ds.mean_explanation_score == pytest.approx(11 / 3)
    half = T975_2 * math.sqrt(7 / 3) / math.sqrt(3)
    assert 11 / 3 - half < 0 and 11 / 3 + half > 5  # the t interval of 3 scores runs off the scale: clipped
    assert (ds.score_low, ds.score_high) == (0.0, 5.0)
    gpt_scores = [3.0, 3.0, 4.0, 5.0, 5.0]
    gpt_half = stats.t.ppf(0.975, 4) * stats.sem(gpt_scores)
    assert (result.critique_models[1].score_low, result.critique_models[1].score_high) == pytest.approx(
        (4.0 - gpt_half, 5.0)  # 4 + 1.24, clipped
    )
    assert ds.dimensions["incorrect_reasoning"] == 2 and ds.dimensions["missing_information"] == 1
    assert sum(ds.dimensions.values()) == 3 and ds.no_dimension == 1
    assert list(ds.dimensions) == list(result.dimension_names)[: len(ds.dimensions)]
    assert ds.score_counts == (0, 0, 1, 0, 1, 1)
    assert (ds.mean_critique_score, ds.n_critique_ratings) == (2.0, 3)  # (3 + 1 + 2) / 3
    assert (gpt.n, gpt.n_scored, gpt.mean_explanation_score) == (5, 5, 4.0)  # (3 + 3 + 4 + 5 + 5) / 5
    assert (gpt.mean_critique_score, gpt.n_critique_ratings) == (None, 0)  # no human rating: null


def test_per_student_condition_by_hand():
    rows = {(r.student, r.critique_model): r for r in analyse(hand_data()).students}
    assert list(rows) == [(S1, "DS-13B"), (S1, "gpt-4"), (S2, "DS-13B")]
    ds1 = rows[(S1, "DS-13B")]
    assert (ds1.n, ds1.mean_explanation_score) == (3, pytest.approx(11 / 3))
    assert ds1.dimension_shares["incorrect_reasoning"] == pytest.approx(2 / 3)
    assert ds1.no_dimension == pytest.approx(1 / 3)
    assert (ds1.correct, ds1.incorrect, ds1.auroc) == (2, 1, 1.0)  # 4 and 5 above 2
    gpt1 = rows[(S1, "gpt-4")]
    # not correct: 3; correct: 3 (tie: 1/2), 4, 5, 5 -> 3.5 / 4
    assert (gpt1.correct, gpt1.incorrect, gpt1.auroc) == (4, 1, 0.875)
    assert gpt1.dimension_shares["misunderstanding"] == pytest.approx(2 / 5)
    assert sum(gpt1.dimension_shares.values()) + gpt1.no_dimension == pytest.approx(1.0)
    ds2 = rows[(S2, "DS-13B")]
    assert (ds2.n, ds2.n_scored, ds2.mean_explanation_score, ds2.score_low) == (1, 0, None, None)
    assert (ds2.auroc, ds2.correct, ds2.incorrect) == (None, 0, 0)
    assert ds2.dimension_shares["missing_information"] == 1.0


def test_agreement_between_models_and_with_humans_by_hand():
    result = analyse(hand_data())
    rows = {(r.first, r.second): r for r in result.agreement}
    assert list(rows) == [("DS-13B", "gpt-4"), ("DS-13B", HUMAN), ("gpt-4", HUMAN)]
    models = rows[("DS-13B", "gpt-4")]
    # shared scored CoTs 1, 2, 3: DS 2, 4, 5; gpt-4 3, 3, mean(4, 5) = 4.5
    assert models.n == 3
    assert models.spearman == pytest.approx(stats.spearmanr([2, 4, 5], [3, 3, 4.5]).statistic)
    assert models.kendall == pytest.approx(stats.kendalltau([2, 4, 5], [3, 3, 4.5]).statistic)
    assert models.spearman_low is None  # 3 pairs: too few for an interval
    # both named a dimension on CoTs 1 and 2 (gpt-4's first critique of CoT 3 says irrelevant,
    # DS-13B none): same on 1, different on 2
    assert (models.n_dimension, models.dimension_match) == (2, 0.5)
    # human means (author's last rating counts): CoT 1 1.5, 2 3.5, 3 5, 5 5
    with_humans = rows[("gpt-4", HUMAN)]
    assert with_humans.n == 4
    assert with_humans.spearman == pytest.approx(stats.spearmanr([3, 3, 4.5, 5], [1.5, 3.5, 5, 5]).statistic)
    assert with_humans.kendall == pytest.approx(stats.kendalltau([3, 3, 4.5, 5], [1.5, 3.5, 5, 5]).statistic)
    assert (with_humans.n_dimension, with_humans.dimension_match) == (0, None)
    assert result.points[:3] == [
        ScorePoint("DS-13B", 1, 2.0, 1.5),
        ScorePoint("DS-13B", 2, 4.0, 3.5),
        ScorePoint("DS-13B", 3, 5.0, 5.0),
    ]
    assert len(result.points) == 7


def test_human_alpha_against_the_krippendorff_package():
    human = analyse(hand_data()).human
    # CoTs rated by both a and b: 1 (a 1, b 2) and 2 (a's last 3, b 4)
    matrix = np.array([[1, 3, 5, np.nan], [2, 4, np.nan, 5]], dtype=float)
    assert (human.explanation_raters, human.explanation_items) == (2, 2)
    levels: list[tuple[Literal["interval", "ordinal"], float | None]] = [
        ("interval", human.explanation_alpha_interval),
        ("ordinal", human.explanation_alpha_ordinal),
    ]
    for level, ours in levels:
        assert ours == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    # critique ratings: only critique 1 has two raters (3 and 1)
    critique = np.array([[3, 2], [1, np.nan]], dtype=float)
    assert (human.critique_raters, human.critique_items) == (2, 1)
    assert human.critique_alpha_ordinal == pytest.approx(
        krippendorff.alpha(reliability_data=critique, level_of_measurement="ordinal")
    )


def test_dimensions_by_student_model_and_unknown_dimension_names():
    data = hand_data()
    data.critiques.append(CritiqueFact(10, 6, "gpt-4", "off_topic", 1.0, S2, False))
    result = analyse(data)
    assert result.dimension_names[-1] == "off_topic" and len(result.dimension_names) == 9
    assert result.dimensions_by_student_model["m1"] == {
        "incorrect_reasoning": 3,
        "": 2,
        "misunderstanding": 2,
        "irrelevant": 1,
    }
    assert result.dimensions_by_student_model["m2"] == {"missing_information": 1, "off_topic": 1}
    assert result.critique_models[1].dimensions["off_topic"] == 1


def test_missing_ratings_give_nulls_not_errors():
    data = hand_data()
    data.critique_ratings, data.explanation_ratings = [], []
    result = analyse(data)
    assert all(r.mean_critique_score is None for r in result.critique_models)
    assert [(r.first, r.second) for r in result.agreement] == [("DS-13B", "gpt-4")]
    assert result.points == []
    assert result.human.explanation_alpha_interval is None and result.human.explanation_raters == 0
    empty = analyse(CritiqueData("E"))
    assert (empty.n_critiques, empty.critique_models, empty.students, empty.agreement) == (0, [], [], [])


# A real library ---------------------------------------------------------------------------------


@pytest.fixture
def lib(tmp_path):
    with Library.open(demo_library(tmp_path / "lib.sqlite")) as library:
        yield library


def _critique(cot: int, model: str, score: float | None, dimension: str | None) -> Critique:
    return Critique(cot, model, f"score {score}", ParsedCritique(dimension=dimension, explanation_score=score))


def test_reads_a_library_with_the_evaluations_conditions_and_correctness(lib):
    cots = [pk for (pk,) in lib.conn.execute("SELECT id FROM generated_cot ORDER BY id LIMIT 6")]
    with lib.transaction() as conn:
        pks = [add_critique(conn, _critique(cot, "DS-7B", float(i % 6), "irrelevant")) for i, cot in enumerate(cots)]
        second = add_critique(conn, _critique(cots[0], "DS-7B", None, None))
        add_critique_rating(conn, pks[0], CritiqueRating("r1", 2))
        add_critique_rating(conn, pks[0], CritiqueRating("r2", None))  # no score: not a rating
        add_explanation_rating(conn, cots[0], ExplanationRating("r1", 4, ("irrelevant",)))
        add_explanation_rating(conn, cots[1], ExplanationRating("r1", None, ("irrelevant",)))
        lib.create_collection("other")
    data = load_critique_data(lib, "demo")
    assert [c.critique_pk for c in data.critiques] == [pks[0], second, *pks[1:]]  # by CoT, then position
    assert data.critique_ratings == [(pks[0], "r1", 2)]
    assert data.explanation_ratings == [(cots[0], "r1", 4)]
    # student keys and correctness: the same as the evaluation's rows of these CoTs' answers
    evaluation = evaluate(lib, "demo", comparisons=False)
    keys = {r.key for r in evaluation.rows}
    assert all(c.student in keys for c in data.critiques)
    stored = dict(
        lib.conn.execute(
            f"SELECT cot_pk, correct_answer FROM answer WHERE cot_pk IN ({', '.join(map(str, cots))}) ORDER BY position"
        ).fetchall()
    )
    assert {c.cot_pk: c.correct for c in data.critiques} == {cot: bool(stored[cot]) for cot in cots}
    result = analyse_collection(lib, "demo")
    assert result.critique_models[0].n == 7 and result.critique_models[0].n_scored == 6
    assert analyse_collection(lib, "other").n_critiques == 0
    with pytest.raises(ThoughtDeskError, match="nope"):
        load_critique_data(lib, "nope")


def test_rescored_outcome_wins_over_the_stored_one(lib):
    cot = lib.conn.execute("SELECT cot_pk FROM answer WHERE correct_answer = 1 ORDER BY id LIMIT 1").fetchone()[0]
    with lib.transaction() as conn:
        add_critique(conn, _critique(cot, "DS-7B", 3.0, None))
        conn.execute("UPDATE answer SET td_outcome = 'unextractable' WHERE cot_pk = ?", (cot,))
    assert load_critique_data(lib, "demo").critiques[0].correct is False
