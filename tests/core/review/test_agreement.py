"""Agreement per label from stored annotations, against figures computed by hand below."""

from __future__ import annotations

import pytest

from tests.core.review.conftest import COLLECTION, cot_pks
from thoughtdesk.core.review import AnnotationOp, AnnotationStore, agreement_table

L, V = "Incorrect reasoning", "Too verbose"


def _items(lib) -> list[int]:
    return cot_pks(lib, "mq-1") + cot_pks(lib, "mq-2")  # six CoTs: items 1..6


def _rate(lib, author: str, true_items: set[int], *, span_item: int | None = None) -> None:
    """``author`` says L is true on ``true_items`` (1-based) and reviewed all six CoTs, leaving
    a different kind of trace on each "no" so every way of having reviewed a CoT is exercised."""
    store = AnnotationStore(lib, author)
    items = _items(lib)
    for number, cot in enumerate(items, start=1):
        if number == span_item:
            store.toggle_label(cot, L, store.span(cot, 0, 6))  # a span label counts as true
        elif number in true_items:
            store.toggle_label(cot, L)
        elif number % 3 == 0:
            store.toggle_label(cot, L)
            store.toggle_label(cot, L)  # on, then off: stored "false"
        elif number % 3 == 1:
            store.set_quality(cot, 3)
        else:
            store.set_comment(cot, "fine")


def test_two_reviewers(lib):
    # Label L, items 1-6:   ann T T T F F F
    #                       bob T T F T F F   (bob's item 4 is a span label)
    # Cohen: p_o = 4/6 (items 1,2,5,6 agree); p_e = .5*.5 + .5*.5 = 1/2;
    #        kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3.
    # Fleiss: counts [T,F] = [2,0] [2,0] [1,1] [1,1] [0,2] [0,2]; m = 2;
    #        P_i = (sum n^2 - m) / (m(m-1)) = 1,1,0,0,1,1 -> P_bar = 2/3; p_T = 6/12, P_e = 1/2;
    #        kappa = (2/3 - 1/2) / (1/2) = 1/3.
    # Krippendorff: coincidences o_TT = 4, o_FF = 4, o_TF = o_FT = 2; n_T = n_F = 6, n = 12;
    #        alpha = 1 - (n-1) * (o_TF + o_FT) / (2 n_T n_F) = 1 - 11*4/72 = 7/18.
    # Label V: ann and bob both say T on item 1 only: perfect agreement, kappa = alpha = 1.
    _rate(lib, "ann", {1, 2, 3})
    _rate(lib, "bob", {1, 2}, span_item=4)
    for author in ("ann", "bob"):
        AnnotationStore(lib, author).toggle_label(_items(lib)[0], V)
    # An item only ann rated informs no agreement statistic.
    AnnotationStore(lib, "ann").toggle_label(cot_pks(lib, "mq-3")[0], L)

    rows = {row.label: row for row in agreement_table(lib, COLLECTION, [L, V])}
    row = rows[L]
    assert row.raters == ("ann", "bob") and row.n_items == 6 and row.n_complete == 6
    assert row.cohen == pytest.approx(1 / 3)
    assert row.fleiss == pytest.approx(1 / 3)
    assert row.alpha == pytest.approx(7 / 18)
    assert row.percent_agreement == pytest.approx(100 * 4 / 6)
    assert rows[V].cohen == pytest.approx(1.0) and rows[V].alpha == pytest.approx(1.0)
    # Default labels: every label key used, sorted.
    assert [r.label for r in agreement_table(lib, COLLECTION)] == [L, V]


def test_three_reviewers(lib):
    # Label L:  ann T T T F F F;  bob T T F T F F;  cho T T T T F F
    # Fleiss: counts [T,F] = [3,0] [3,0] [2,1] [2,1] [0,3] [0,3]; m = 3;
    #        P_i = (sum n^2 - 3) / 6 = 1, 1, 1/3, 1/3, 1, 1 -> P_bar = (4 + 2/3) / 6 = 7/9;
    #        p_T = 10/18, p_F = 8/18 -> P_e = (25 + 16) / 81 = 41/81;
    #        kappa = (7/9 - 41/81) / (1 - 41/81) = (22/81) / (40/81) = 0.55.
    # Krippendorff: each item adds n_c n_k / (m - 1) ordered pairs (n_c (n_c - 1) / 2 on the
    #        diagonal): [3,0] -> o_TT += 3; [2,1] -> o_TT += 1, o_TF += 1, o_FT += 1; [0,3] -> o_FF += 3.
    #        o_TT = 8, o_FF = 6, o_TF = o_FT = 2; n_T = 10, n_F = 8, n = 18;
    #        alpha = 1 - 17 * 4 / (2 * 10 * 8) = 1 - 68/160 = 0.575.
    # Cohen's kappa is for two raters only: None.
    _rate(lib, "ann", {1, 2, 3})
    _rate(lib, "bob", {1, 2, 4})
    _rate(lib, "cho", {1, 2, 3, 4})
    (row,) = agreement_table(lib, COLLECTION, [L])
    assert row.raters == ("ann", "bob", "cho") and row.n_items == 6
    assert row.cohen is None
    assert row.fleiss == pytest.approx(0.55)
    assert row.alpha == pytest.approx(0.575)
    # Restricting to two authors gives the two-reviewer figures again.
    (pair,) = agreement_table(lib, COLLECTION, [L], authors=["ann", "bob"])
    assert pair.raters == ("ann", "bob") and pair.cohen == pytest.approx(1 / 3)


def test_undefined_statistics_are_none(lib):
    # Everyone says "no" everywhere: chance agreement is 1, kappa and alpha are undefined.
    _rate(lib, "ann", set())
    _rate(lib, "bob", set())
    (row,) = agreement_table(lib, COLLECTION, [L])
    assert row.n_items == 6 and row.cohen is None and row.fleiss is None and row.alpha is None
    assert row.percent_agreement == pytest.approx(100.0)


def test_label_values_read_by_the_one_truth_rule(lib):
    # Imported files carry JSON booleans or "True"; the annotator writes "true"/"false". All four
    # reviewers say the same thing in different spellings: yes on item 1, no on item 2.
    items = _items(lib)[:2]
    spellings = {"ann": ("true", "false"), "bob": (True, False), "cho": (" TRUE ", "False"), "dee": ("True", False)}
    for author, (yes, no) in spellings.items():
        store = AnnotationStore(lib, author)
        store.apply(AnnotationOp(items[0], author, L, None, yes))
        store.apply(AnnotationOp(items[1], author, L, None, no))
        store.apply(AnnotationOp(items[1], author, "note", None, 3))  # not a label value
    (row,) = agreement_table(lib, COLLECTION)  # "note" is no label by default
    assert row.label == L and row.raters == ("ann", "bob", "cho", "dee")
    assert row.n_items == 2 and row.percent_agreement == pytest.approx(100.0)
    # Everyone agrees and both categories occur: every statistic is 1 (one misread spelling
    # would make a reviewer disagree on an item and pull them below 1).
    assert row.alpha == pytest.approx(1.0) and row.fleiss == pytest.approx(1.0)
