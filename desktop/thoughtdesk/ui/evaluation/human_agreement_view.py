"""The Results tab's "Judges vs humans" view (issue 26, point 3): every judge version against
the human reviewers of the chosen collection (``core.review.judge_agreement``): Cohen's kappa and
accuracy with 95 % intervals per judge and measure, and for the chosen row its confusion matrix
and its disagreements (double-click opens the sample); the versions of one judge compared on the
same human labels.

Computed in the thread pool, debounced and only while shown, like the Critiques view.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from thoughtdesk.core.library.queries import sample_labels
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.judge_agreement import HumanAgreementReport, JudgeAgreement, human_agreement
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.evaluation.computed_page import ComputedPage, results_table
from thoughtdesk.ui.evaluation.critiques_view import RowsModel
from thoughtdesk.ui.qt import (
    QModelIndex,
    QSplitter,
    Qt,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

JUDGE_HEADERS = (
    "Judge",
    "Version",
    "Kind",
    "Measure",
    "Items",
    "Accuracy",
    "95 % CI",
    "Kappa",
    "95 % CI",
    "Not judged",
    "Disagreements",
)
DISAGREEMENT_HEADERS = ("Sample", "CoTs", "Humans", "Judge")
VERSION_HEADERS = ("Judge", "Measure", "Common items", "Version", "Accuracy", "Kappa")
EMPTY_HINT = (
    "No human verdicts to compare judges with in this collection. In Review, [ / ] / = state which of two CoTs "
    "is better (e then 0–5 rates an explanation); critique models (Generate > Critique…) are then compared "
    "with them here."
)


def _number(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}%" if percent else f"{value:.2f}"


def _interval(low: float | None, high: float | None, percent: bool = False) -> str:
    if low is None or high is None:
        return "-"
    return f"{100 * low:.1f}–{100 * high:.1f}" if percent else f"{low:.2f} to {high:.2f}"


def judge_cells(row: JudgeAgreement) -> list[str]:
    """One row of the judges table."""
    return [
        row.judge.name,
        row.judge.version or "-",
        row.judge.kind,
        row.measure,
        str(row.n),
        _number(row.accuracy, True),
        _interval(row.accuracy_low, row.accuracy_high, True),
        _number(row.kappa),
        _interval(row.kappa_low, row.kappa_high),
        str(row.not_judged),
        str(row.n_disagreements),
    ]


class HumanAgreementView(ComputedPage[tuple[HumanAgreementReport | None, dict[int, str]]]):
    """The Judges vs humans view; ``collection()`` names the collection the Results tab shows."""

    failure = "Could not compare judges with humans"

    def __init__(self, window: WindowApi, collection: Callable[[], str], parent: QWidget | None = None) -> None:
        super().__init__(window, collection, "humanAgreementView", "humanAgreementStatus", parent)
        self.report: HumanAgreementReport | None = None
        self.labels: dict[int, str] = {}
        self.shown_pks: list[int] = []
        self.judges_model = RowsModel(JUDGE_HEADERS, self)
        self.judges = results_table("judgesVsHumansTable", self.judges_model, 0)
        self.confusion_model = RowsModel(("humans \\ judge",), self)
        self.confusion = results_table("judgeConfusionTable", self.confusion_model, None)
        self.disagreements_model = RowsModel(DISAGREEMENT_HEADERS, self)
        self.disagreements = results_table("judgeDisagreementsTable", self.disagreements_model, 0)
        self.disagreements.setToolTip("Double-click opens the sample")
        self.disagreements.doubleClicked.connect(self.open_disagreement)
        self.versions_model = RowsModel(VERSION_HEADERS, self)
        self.versions = results_table("judgeVersionsTable", self.versions_model, 3)
        self.details = QTabWidget(objectName="humanAgreementDetails")
        self.details.addTab(self.confusion, "Confusion matrix")
        self.details.addTab(self.disagreements, "Disagreements")
        self.details.addTab(self.versions, "Versions on the same labels")
        self.judges.selectionModel().currentRowChanged.connect(lambda current, _old: self.show_judge(current.row()))
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.judges)
        splitter.addWidget(self.details)
        splitter.setSizes([300, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.status)
        layout.addWidget(splitter, 1)

    @staticmethod
    def compute(path: Path, collection: str) -> tuple[HumanAgreementReport | None, dict[int, str]]:
        with Library.open(path, create=False) as lib:
            if lib.collection_id(collection) is None:
                return None, {}
            report = human_agreement(lib, collection)
            pks = sorted({d.sample_pk for j in report.judges for d in j.disagreements})
            return report, sample_labels(lib, pks)

    def show_result(self, result: tuple[HumanAgreementReport | None, dict[int, str]] | None) -> None:
        self.apply(*(result or (None, {})))

    def apply(self, report: HumanAgreementReport | None, labels: dict[int, str]) -> None:
        """Show ``report`` (None: no collection)."""
        self.report, self.labels = report, labels
        rows = report.judges if report is not None else []
        self.judges_model.set_rows([judge_cells(r) for r in rows], [[0] * len(JUDGE_HEADERS) for _ in rows])
        versions = report.versions if report is not None else []
        version_rows = [
            [v.judge, v.measure, str(v.n), version, _number(accuracy, True), _number(kappa)]
            for v in versions
            for version, accuracy, kappa in v.versions
        ]
        self.versions_model.set_rows(version_rows, [[0] * len(VERSION_HEADERS) for _ in version_rows])
        if report is None:
            self.status.setText("Choose a collection to compare its judges with its human reviewers.")
        elif not rows:
            self.status.setText(EMPTY_HINT)
        else:
            split = (
                f"; {report.split_pairs} pair(s) where reviewers split evenly left out" if report.split_pairs else ""
            )
            self.status.setText(
                f"{report.human_pairs} pair(s) with a human verdict by {len(report.reviewers)} reviewer(s){split}; "
                f"{report.human_scored_cots} CoT(s) with a human explanation score. Kappa: Cohen's, with its "
                "large-sample 95 % interval; accuracy with Wilson's."
            )
            self.judges.selectRow(0)
        self.show_judge(0 if rows else -1)

    def show_judge(self, row: int) -> None:
        """The confusion matrix and the disagreements of judges-table row ``row``."""
        rows = self.report.judges if self.report is not None else []
        judge = rows[row] if 0 <= row < len(rows) else None
        if judge is None:
            self.confusion_model.headers = ["humans \\ judge"]
            self.confusion_model.set_rows([], [])
            self.disagreements_model.set_rows([], [])
            self.shown_pks = []
            return
        self.confusion_model.headers = ["humans \\ judge", *judge.categories]
        cells = [
            [category, *map(str, counts)] for category, counts in zip(judge.categories, judge.confusion, strict=True)
        ]
        self.confusion_model.set_rows(cells, [[0] * len(cells[0]) for _ in cells] if cells else [])
        self.shown_pks = [d.sample_pk for d in judge.disagreements]
        listed = [
            [
                self.labels.get(d.sample_pk, str(d.sample_pk)),
                " vs ".join(str(pk) for pk in (d.item if isinstance(d.item, tuple) else (d.item,))),
                d.human,
                d.judge,
            ]
            for d in judge.disagreements
        ]
        self.disagreements_model.set_rows(listed, [[0] * len(DISAGREEMENT_HEADERS) for _ in listed])

    def open_disagreement(self, index: QModelIndex) -> bool:
        """Open the sample of a disagreement in the Samples tab."""
        if not index.isValid() or index.row() >= len(self.shown_pks):
            return False
        return self.window_.open_sample(self.shown_pks[index.row()])
