"""Agreement statistics and the rating rules: hand-computed values, and checks against statsmodels
and krippendorff."""

from __future__ import annotations

import numpy as np
import pytest

from thoughtdesk.core.agreement.kappa import cohen_kappa, fleiss_kappa, krippendorff_alpha_nominal, percent_agreement
from thoughtdesk.core.review.agreement import LabelRating, agreement_rows, label_ratings
from thoughtdesk.core.review.types import label_value

T, F = True, False

# Two raters, ten items.
#   A: T T T T T T F F F F   (6 T, 4 F)
#   B: T T T T F F F F F T   (5 T, 5 F)
# Agreements: items 0-3 (TT) and 6-8 (FF) = 7 of 10, p_o = 0.7.
TWO_A = [T, T, T, T, T, T, F, F, F, F]
TWO_B = [T, T, T, T, F, F, F, F, F, T]


def test_cohen_two_raters_by_hand() -> None:
    # p_e = p_A(T) p_B(T) + p_A(F) p_B(F) = 0.6*0.5 + 0.4*0.5 = 0.5
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    assert cohen_kappa(TWO_A, TWO_B) == pytest.approx(0.4)


def test_fleiss_two_raters_by_hand() -> None:
    # Counts per item [T, F]: 4 x [2,0], 2 x [1,1] (items 4,5), 3 x [0,2], 1 x [1,1] (item 9).
    # P_i = (sum n^2 - 2) / (2*1): 1 for [2,0] and [0,2], 0 for [1,1]; P_bar = 7/10.
    # p_T = (8 + 3) / 20 = 0.55, p_F = 0.45, P_e = 0.3025 + 0.2025 = 0.505.
    # kappa = (0.7 - 0.505) / 0.495 = 13/33 = 0.3939...
    counts = [[2, 0]] * 4 + [[1, 1]] * 2 + [[0, 2]] * 3 + [[1, 1]]
    assert fleiss_kappa(counts) == pytest.approx(13 / 33)


def test_alpha_two_raters_by_hand() -> None:
    # Coincidences (each item m=2 adds 1/(m-1) = 1 per ordered pair):
    #   o_TT = 4 items * 2 = 8, o_FF = 3 * 2 = 6, o_TF = o_FT = 3.
    #   n_T = 11, n_F = 9, n = 20.  D_o = 6, D_e = 2 * 11 * 9 = 198.
    # alpha = 1 - (n - 1) D_o / D_e = 1 - 19 * 6 / 198 = 14/33 = 0.4242...
    assert krippendorff_alpha_nominal([TWO_A, TWO_B]) == pytest.approx(14 / 33)


# Three raters, five items, None = missing.
#   item:  1     2     3     4     5
#   A:     T     T     F     -     T
#   B:     T     F     F     T     T
#   C:     T     -     F     -     F
THREE: list[list[bool | None]] = [
    [T, T, F, None, T],
    [T, F, F, T, T],
    [T, None, F, None, F],
]


def test_alpha_three_raters_with_missing_by_hand() -> None:
    # Item 4 has one rating: not pairable.
    # Item 1 (TTT, m=3): 6 ordered TT pairs / 2 -> o_TT += 3.
    # Item 2 (TF, m=2): o_TF += 1, o_FT += 1.
    # Item 3 (FFF): o_FF += 3.
    # Item 5 (TTF, m=3): TT pairs 2, TF 2, FT 2, each / 2 -> o_TT += 1, o_TF += 1, o_FT += 1.
    # o_TT = 4, o_FF = 3, o_TF = o_FT = 2; n_T = 6, n_F = 5, n = 11.
    # alpha = 1 - 10 * 4 / (2 * 6 * 5) = 1 - 40/60 = 1/3
    assert krippendorff_alpha_nominal(THREE) == pytest.approx(1 / 3)


def test_percent_agreement_three_raters_by_hand() -> None:
    # Per item agreeing ordered pairs / all pairs: item1 1, item2 0, item3 1, item5 2/6;
    # mean = (1 + 0 + 1 + 1/3) / 4 = 7/12 -> 58.33 %
    assert percent_agreement(THREE) == pytest.approx(100 * 7 / 12)
    assert percent_agreement([TWO_A, TWO_B]) == pytest.approx(70.0)


def records(matrix, raters=("ann", "bob", "cy"), label="Incorrect reasoning"):
    return [
        LabelRating(rater, f"cot-{item}", label, value)
        for rater, row in zip(raters, matrix, strict=False)
        for item, value in enumerate(row)
        if value is not None
    ]


def test_agreement_table_three_raters_by_hand() -> None:
    (row,) = agreement_rows(records(THREE))
    assert row.label == "Incorrect reasoning"
    assert row.raters == ("ann", "bob", "cy")
    assert row.n_items == 4  # items 1, 2, 3, 5
    assert row.n_complete == 3  # items 1, 3, 5
    assert row.cohen is None  # three raters
    # Fleiss on the complete items 1, 3, 5: counts [3,0], [0,3], [2,1].
    # P_i = 1, 1, (4 + 1 - 3)/6 = 1/3; P_bar = 7/9; p_T = 5/9, p_F = 4/9; P_e = 41/81.
    # kappa = (63/81 - 41/81) / (40/81) = 22/40 = 0.55
    assert row.fleiss == pytest.approx(0.55)
    assert row.alpha == pytest.approx(1 / 3)
    assert row.percent_agreement == pytest.approx(100 * 7 / 12)


def test_agreement_table_two_raters_and_label_order() -> None:
    data = records([TWO_A, TWO_B], raters=("ann", "bob"))
    data += records([[T, T], [T, T]], raters=("ann", "bob"), label="Too verbose")
    rows = agreement_rows(data, labels=["Too verbose", "Incorrect reasoning", "Unused"])
    assert [r.label for r in rows] == ["Too verbose", "Incorrect reasoning", "Unused"]
    verbose, reasoning, unused = rows
    assert reasoning.cohen == pytest.approx(0.4)
    assert reasoning.fleiss == pytest.approx(13 / 33)
    assert reasoning.alpha == pytest.approx(14 / 33)
    # Everyone always says True: chance agreement is 1, so kappa and alpha are undefined.
    assert (verbose.cohen, verbose.fleiss, verbose.alpha) == (None, None, None)
    assert verbose.percent_agreement == 100.0
    assert unused.n_items == 0 and unused.raters == () and unused.alpha is None


def test_later_record_replaces_earlier_and_tuples_are_accepted() -> None:
    data = [
        ("ann", "x", "L", True),
        ("bob", "x", "L", True),
        ("ann", "y", "L", True),
        ("bob", "y", "L", False),
        ("ann", "y", "L", False),
    ]  # ann changes her mind on y
    (row,) = agreement_rows(data)
    assert row.percent_agreement == 100.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("true", True),
        ("false", False),
        (" TRUE ", True),
        ("False", False),
        ("yes", None),
        (1, None),
        (0, None),
        (None, None),
        ("", None),
    ],
)
def test_the_one_truth_rule_reads_json_booleans_and_strings(value, expected) -> None:
    assert label_value(value) is expected


def test_ratings_from_thoughtsource_annotations() -> None:
    annotations = [
        ("Rob", "c1", "Incorrect reasoning", "true"),
        ("Ana", "c1", "comment", "looks fine"),
        ("Rob", "c2", "Too verbose", "false"),
        ("Ana", "c2", "Too verbose", True),  # a JSON boolean counts as much as the string
        ("Ana", "c2", "Note", 3),  # not a label value: not a label, but Ana reviewed c2
    ]
    got = {(r.author, r.item_id, r.label): r.value for r in label_ratings(annotations)}
    assert got == {
        ("Ana", "c1", "Incorrect reasoning"): False,  # reviewed (commented), box unchecked
        ("Ana", "c1", "Too verbose"): False,
        ("Rob", "c1", "Incorrect reasoning"): True,
        ("Rob", "c1", "Too verbose"): False,
        ("Ana", "c2", "Incorrect reasoning"): False,
        ("Ana", "c2", "Too verbose"): True,
        ("Rob", "c2", "Incorrect reasoning"): False,
        ("Rob", "c2", "Too verbose"): False,
    }
    # Asked for by name, a key without label values is rated False by everyone who reviewed.
    assert {r.value for r in label_ratings(annotations, ["Note"])} == {False}


def test_any_true_annotation_of_a_label_makes_it_true() -> None:
    # A span label ("true") next to the whole-CoT box switched off again ("false"), either order.
    for notes in (
        [("ann", "x", "L", "false"), ("ann", "x", "L", "true")],
        [("ann", "x", "L", "true"), ("ann", "x", "L", "false")],
    ):
        assert [r.value for r in label_ratings(notes)] == [True]


def test_shared_thoughtsource_file_gives_single_rater_rows(shared) -> None:
    import json

    path = shared("thoughtsource", "annotated_set.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    annotations = [
        (a["author"], g["id"], a["key"], a["value"])
        for splits in data.values()
        for samples in splits.values()
        for s in samples
        for g in s["generated_cot"]
        for a in g["annotations"]
    ]
    rows = agreement_rows(label_ratings(annotations))
    assert {r.label for r in rows} >= {"Incorrect reasoning", "Too verbose"}
    for row in rows:  # one annotator (Rob) only: nothing to agree on
        assert row.raters == ("Rob",) and row.alpha is None and row.n_items == 0


# ---- against the well-kept libraries ------------------------------------------------------


def random_ratings(rng, raters, items, categories, missing):
    matrix = rng.integers(0, categories, size=(raters, items)).astype(object)
    # Make raters agree more than chance half the time so kappas are not all near 0.
    truth = rng.integers(0, categories, size=items)
    copy = rng.random((raters, items)) < 0.5
    matrix[copy] = np.broadcast_to(truth, (raters, items))[copy]
    matrix[rng.random((raters, items)) < missing] = None
    return [list(row) for row in matrix]


@pytest.mark.parametrize("seed", range(25))
def test_matches_statsmodels_and_krippendorff(seed: int) -> None:
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(seed)
    raters = int(rng.integers(2, 6))
    categories = int(rng.integers(2, 4))
    matrix = random_ratings(rng, raters, int(rng.integers(8, 40)), categories, missing=0.2)

    expected_alpha = krippendorff.alpha(
        reliability_data=np.array([[np.nan if v is None else float(v) for v in row] for row in matrix]),
        level_of_measurement="nominal",
    )
    assert krippendorff_alpha_nominal(matrix) == pytest.approx(expected_alpha, abs=1e-9)

    complete = [i for i in range(len(matrix[0])) if all(row[i] is not None for row in matrix)]
    if complete:
        data = np.array([[matrix[r][i] for r in range(raters)] for i in complete], dtype=int)
        table, _ = inter_rater.aggregate_raters(data, n_cat=categories)
        expected_fleiss = inter_rater.fleiss_kappa(table, method="fleiss")
        assert fleiss_kappa(table) == pytest.approx(expected_fleiss, abs=1e-9)

    both = [i for i in range(len(matrix[0])) if matrix[0][i] is not None and matrix[1][i] is not None]
    first, second = [matrix[0][i] for i in both], [matrix[1][i] for i in both]
    contingency = np.zeros((categories, categories))
    for a, b in zip(first, second, strict=False):
        contingency[a, b] += 1
    expected_cohen = inter_rater.cohens_kappa(contingency, return_results=False)
    assert cohen_kappa(first, second) == pytest.approx(expected_cohen, abs=1e-9)


def test_invalid_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="paired"):
        cohen_kappa([T], [T, F])
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[2, 0], [1, 0]])
    with pytest.raises(ValueError, match="per item"):
        krippendorff_alpha_nominal([[T, F], [T]])
