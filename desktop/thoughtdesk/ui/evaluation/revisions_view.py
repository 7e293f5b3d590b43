"""The Results tab's Revisions view (issue 26, point 5): accuracy before and after revision per
condition (the revised CoTs' model and prompt condition, the critique model, the revising
model) with Wilson intervals and McNemar's test (``core.evaluation.revisions``), and for the
chosen row the CoTs whose correctness changed; double-click opens the sample.

Computed in the thread pool, debounced and only while shown, like the Critiques view.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from thoughtdesk.core.evaluation.metrics import wilson_interval
from thoughtdesk.core.evaluation.revisions import RevisionGroup, revision_outcomes
from thoughtdesk.core.library.queries import sample_labels
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.evaluation.computed_page import ComputedPage, results_table
from thoughtdesk.ui.evaluation.critiques_view import RowsModel
from thoughtdesk.ui.qt import (
    QModelIndex,
    QSplitter,
    Qt,
    QVBoxLayout,
    QWidget,
)

HEADERS = (
    "Model",
    "Condition",
    "Critique model",
    "Reviser",
    "Pairs",
    "Before",
    "95 % CI",
    "After",
    "95 % CI",
    "Fixed",
    "Broken",
    "McNemar p",
)
CHANGE_HEADERS = ("Sample", "Change", "CoT before", "CoT after")
EMPTY_HINT = "No revised CoTs in this collection. Revise critiqued CoTs with Generate > Revise from critiques…"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _interval(k: int, n: int) -> str:
    if not n:
        return "-"
    low, high = wilson_interval(k, n)
    return f"{100 * low:.1f}–{100 * high:.1f}"


def group_cells(group: RevisionGroup) -> list[str]:
    """One table row for ``group``."""
    test = group.test()
    pairs = str(group.n) + (f" (+{group.unscored} unscored)" if group.unscored else "")
    return [
        group.model,
        group.condition,
        group.critique_model,
        group.reviser,
        pairs,
        _percent(group.before_accuracy),
        _interval(group.before_correct, group.n),
        _percent(group.after_accuracy),
        _interval(group.after_correct, group.n),
        str(test.fixed),
        str(test.broken),
        f"{test.p_value:.3g} ({test.method})",
    ]


class RevisionsView(ComputedPage[tuple[list[RevisionGroup], dict[int, str]]]):
    """The Revisions view; ``collection()`` names the collection the Results tab shows."""

    failure = "Could not compare revisions"

    def __init__(self, window: WindowApi, collection: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(window, collection, "revisionsView", "revisionsStatus", parent)
        self.groups: list[RevisionGroup] = []
        self.labels: dict[int, str] = {}
        self.changed_pks: list[int] = []
        self.model = RowsModel(HEADERS, self)
        self.table = results_table("revisionsTable", self.model, 1)
        self.changes_model = RowsModel(CHANGE_HEADERS, self)
        self.changes = results_table("revisionChangesTable", self.changes_model, 0)
        self.changes.setToolTip("Double-click opens the sample")
        self.changes.doubleClicked.connect(self.open_change)
        self.table.selectionModel().currentRowChanged.connect(lambda current, _old: self.show_changes(current.row()))
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.changes)
        splitter.setSizes([320, 280])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status)
        layout.addWidget(splitter, 1)

    @staticmethod
    def compute(path: Path, collection: str) -> tuple[list[RevisionGroup], dict[int, str]]:
        with Library.open(path, create=False) as lib:
            if lib.collection_id(collection) is None:
                return [], {}
            groups = revision_outcomes(lib, collection)
            pks = sorted({p.sample_pk for g in groups for p in g.pairs if p.before != p.after})
            return groups, sample_labels(lib, pks)

    def show_result(self, result: tuple[list[RevisionGroup], dict[int, str]] | None) -> None:
        self.apply(*(result or ([], {})))

    def apply(self, groups: list[RevisionGroup], labels: dict[int, str]) -> None:
        """Show ``groups`` (a row each) and the first row's changed CoTs."""
        self.groups, self.labels = groups, labels
        self.model.set_rows([group_cells(g) for g in groups], [[0] * len(HEADERS) for _ in groups])
        if not groups:
            self.status.setText(EMPTY_HINT)
        else:
            pairs = sum(g.n for g in groups)
            self.status.setText(
                f"{pairs:,} revised CoT(s) paired with the CoTs they revise, in {len(groups)} condition(s). "
                "Fixed: wrong before, right after; broken: the reverse. McNemar: exact binomial below 25 "
                "discordant pairs, else chi-square with continuity correction."
            )
        if groups:
            self.table.selectRow(0)
        self.show_changes(0 if groups else -1)

    def show_changes(self, row: int) -> None:
        """The CoTs of row ``row`` whose correctness changed with the revision."""
        changed = [p for p in self.groups[row].pairs if p.before != p.after] if 0 <= row < len(self.groups) else []
        self.changed_pks = [p.sample_pk for p in changed]
        self.changes_model.set_rows(
            [
                [
                    self.labels.get(p.sample_pk, str(p.sample_pk)),
                    "fixed" if p.after else "broken",
                    str(p.before_cot_pk),
                    str(p.after_cot_pk),
                ]
                for p in changed
            ],
            [[0] * len(CHANGE_HEADERS) for _ in changed],
        )

    def open_change(self, index: QModelIndex) -> bool:
        """Open the sample of a changed CoT in the Samples tab."""
        if not index.isValid() or index.row() >= len(self.changed_pks):
            return False
        return self.window_.open_sample(self.changed_pks[index.row()])
