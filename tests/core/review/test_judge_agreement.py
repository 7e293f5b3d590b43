"""Judges against human reviewers (issue 26, point 3): pairwise preferences stored per reviewer
(replace, clear, restore for undo), the comparison on hand-made verdict lists (kappa, accuracy,
intervals, confusion, disagreements), critique models judged on pairs and explanation scores,
and versions of one judge (a changed template) compared on the same human labels."""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path

import pytest

from tests.helpers.libraries import DEMO, demo_library
from thoughtdesk.core.critiques import Critique, ExplanationRating, add_critique, add_explanation_rating
from thoughtdesk.core.critiques.records import ParsedCritique
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.review.judge_agreement import (
    EXPLANATION_SCORE,
    PAIRWISE,
    ItemVerdict,
    JudgeVersion,
    compare_with_humans,
    human_agreement,
    human_agreement_json,
    human_pair_labels,
)
from thoughtdesk.core.review.preferences import (
    PAIR_LABELS,
    PairPreference,
    clear_preference,
    collection_preferences,
    preference_of,
    restore_preference,
    set_preference,
)


@pytest.fixture
def lib(tmp_path: Path):
    with Library.open(demo_library(tmp_path / "library.thoughtdesk")) as library:
        yield library


def _samples_with_cots(lib: Library, at_least: int = 3) -> list[list[int]]:
    """CoT keys of the demo samples that have at least ``at_least`` CoTs."""
    by_sample: dict[int, list[int]] = {}
    for sample, cot in lib.conn.execute("SELECT sample_pk, id FROM generated_cot ORDER BY sample_pk, id"):
        by_sample.setdefault(sample, []).append(cot)
    return [cots for cots in by_sample.values() if len(cots) >= at_least]


def test_preferences_are_one_per_reviewer_and_pair_in_stored_order_and_restore_for_undo(lib):
    a, b, c = _samples_with_cots(lib)[0][:3]
    with lib.transaction() as conn:
        assert set_preference(conn, "ann", b, a, b, blind=True) is None  # shown b left, a right
        stored = preference_of(conn, "ann", a, b)
        assert stored is not None and stored.pair == (a, b) and stored.label == "second" and stored.blind
        before = set_preference(conn, "ann", a, b, None, blind=False)  # a tie replaces it
        assert before == stored
        tie = preference_of(conn, "ann", b, a)
        assert tie is not None and tie.label == "tie"
        assert set_preference(conn, "bob", a, b, a) is None  # another reviewer: another row
        restore_preference(conn, "ann", a, b, before)  # undo of the tie
        assert preference_of(conn, "ann", a, b) == stored
        restore_preference(conn, "ann", a, c, None)  # undo of a first verdict: nothing left
        assert preference_of(conn, "ann", a, c) is None
        cleared = clear_preference(conn, "bob", a, b)
        assert cleared is not None and cleared.preferred_cot_pk == a
        with pytest.raises(ValueError, match="twice"):
            set_preference(conn, "ann", a, a, a)
        with pytest.raises(ValueError, match="not one of the pair"):
            set_preference(conn, "ann", a, b, c)
        other = next(cots[0] for cots in _samples_with_cots(lib, 1) if a not in cots)
        with pytest.raises(ValueError, match="different samples"):
            set_preference(conn, "ann", a, other, a)
    assert [p.author for p in collection_preferences(lib, DEMO)] == ["ann"]


def test_comparison_on_hand_made_verdicts_gives_kappa_accuracy_intervals_confusion_and_disagreements():
    human: dict[Hashable, ItemVerdict] = {
        (i, i + 100): ItemVerdict((i, i + 100), i, "first" if i < 5 else "second") for i in range(10)
    }
    judged = [ItemVerdict((i, i + 100), i, "first" if i < 4 or i == 9 else "second") for i in range(10)]
    judged.append(ItemVerdict((50, 150), 50, "tie"))  # a pair no human labelled: not counted
    result = compare_with_humans(JudgeVersion("judge-a", "v1"), PAIRWISE, judged[:-2] + judged[-1:], human, PAIR_LABELS)
    assert result.n == 9 and result.not_judged == 1  # pair 9 has no verdict here
    full = compare_with_humans(JudgeVersion("judge-a", "v1"), PAIRWISE, judged, human, PAIR_LABELS)
    assert full.n == 10 and full.accuracy == 0.8
    assert full.kappa == pytest.approx(0.6)  # p_o 0.8, p_e 0.5
    assert full.kappa_low == pytest.approx(0.6 - 1.959964 * 0.2529822, abs=1e-5) and full.kappa_high == 1.0
    assert full.accuracy_low == pytest.approx(0.4902, abs=1e-3) and full.accuracy_high == pytest.approx(
        0.9433, abs=1e-3
    )
    assert full.confusion == [[4, 1, 0], [1, 4, 0], [0, 0, 0]]
    assert {(d.item, d.human, d.judge) for d in full.disagreements} == {
        ((4, 104), "first", "second"),
        ((9, 109), "second", "first"),
    }
    same = compare_with_humans(
        JudgeVersion("all-first"), PAIRWISE, [ItemVerdict(k, 0, "first") for k in human], human, PAIR_LABELS
    )
    assert same.accuracy == 0.5 and same.kappa == 0.0
    labels, split = human_pair_labels(
        [
            PairPreference(1, 1, 2, 1, "ann"),
            PairPreference(1, 1, 2, 1, "bob"),
            PairPreference(1, 1, 2, None, "cy"),
            PairPreference(1, 1, 3, 1, "ann"),
            PairPreference(1, 1, 3, 3, "bob"),
        ]
    )
    assert {k: v.label for k, v in labels.items()} == {(1, 2): "first"} and split == 1


def _critique_run(conn, key: str, main: str) -> int:
    spec = {"kind": "critique", "spec": {}, "template": {"key": key, "system": "s", "main": main}}
    created = now_iso()
    return conn.execute(
        "INSERT INTO run (name, created, updated, status, collection, spec) VALUES (?, ?, ?, 'done', ?, ?)",
        (f"critique {main}", created, created, DEMO, json.dumps(spec)),
    ).lastrowid


def _critique(conn, cot: int, model: str, score: float, run_id: int | None) -> None:
    add_critique(
        conn,
        Critique(
            cot_pk=cot,
            critique_model=model,
            raw_text=f"Explanation score: {score}",
            parsed=ParsedCritique(explanation_score=score),
            source="run" if run_id else "import",
            run_id=run_id,
            created=now_iso(),
        ),
    )


def test_critique_models_and_a_pairwise_judge_against_humans_with_template_versions(lib):
    groups = _samples_with_cots(lib, 2)
    cots = [cot for group in groups for cot in group[:2]]
    human_scores = {cot: (i * 2) % 6 for i, cot in enumerate(cots)}
    with lib.transaction() as conn:
        v1 = _critique_run(conn, "td-critique-v1", "the first wording")
        v2 = _critique_run(conn, "td-critique-v1", "an edited wording")  # same key, edited: a new version
        for cot, score in human_scores.items():
            add_explanation_rating(conn, cot, ExplanationRating("ann", score))
            _critique(conn, cot, "judge", score, v1)  # agrees with the humans
            _critique(conn, cot, "judge", 5 - score, v2)  # reversed
        for group in groups:
            a, b = group[:2]
            better = a if human_scores[a] > human_scores[b] else b if human_scores[b] > human_scores[a] else None
            set_preference(conn, "ann", a, b, better)
    hand_made = {
        JudgeVersion("pair-judge", "pair-v1"): [
            PairPreference(p.sample_pk, p.first_cot_pk, p.second_cot_pk, p.first_cot_pk)
            for p in collection_preferences(lib, DEMO)
        ]
    }
    report = human_agreement(lib, DEMO, pairwise_judges=hand_made)
    assert report.human_pairs == len(groups) and report.reviewers == ["ann"] and report.human_scored_cots == len(cots)
    by = {(j.judge.name, j.judge.version, j.measure): j for j in report.judges}
    versions = sorted({v for (_n, v, _m) in by if v.startswith("td-critique-v1@")})
    assert len(versions) == 2  # the edited template is a new version
    good = next(v for v in versions if by[("judge", v, EXPLANATION_SCORE)].accuracy == 1.0)
    bad = next(v for v in versions if v != good)
    assert by[("judge", good, EXPLANATION_SCORE)].kappa == pytest.approx(1.0)
    assert by[("judge", good, PAIRWISE)].accuracy == 1.0 and by[("judge", good, PAIRWISE)].disagreements == []
    worse = by[("judge", bad, PAIRWISE)]
    assert worse.accuracy is not None and worse.accuracy < 1.0 and worse.n_disagreements == len(worse.disagreements) > 0
    assert all(d.sample_pk and isinstance(d.item, tuple) and len(d.item) == 2 for d in worse.disagreements)
    pair_judge = by[("pair-judge", "pair-v1", PAIRWISE)]
    assert pair_judge.judge.kind == "pairwise" and pair_judge.n == len(groups)
    assert sum(map(sum, pair_judge.confusion)) == len(groups)
    compared = {(c.judge, c.measure): c for c in report.versions}
    assert compared[("judge", PAIRWISE)].n == len(groups)
    rows = {v: (acc, kappa) for v, acc, kappa in compared[("judge", EXPLANATION_SCORE)].versions}
    bad_accuracy = rows[bad][0]
    assert rows[good][0] == 1.0 and bad_accuracy is not None and bad_accuracy < 1.0
    data = human_agreement_json(lib, DEMO)
    json.dumps(data)  # JSON-ready
    assert data["human_pairs"] == len(groups) and {j["measure"] for j in data["judges"]} == {
        PAIRWISE,
        EXPLANATION_SCORE,
    }
    first = next(j for j in data["judges"] if j["n_disagreements"])
    assert set(first["disagreements"][0]) == {"sample_pk", "cots", "human", "judge"}


def test_no_human_verdicts_gives_an_empty_report_not_an_error(lib):
    report = human_agreement(lib, DEMO)
    assert report.judges == [] and report.human_pairs == 0 and report.versions == []
