"""Generate > Revise from critiques…: plan a revision run (which critiqued CoTs, whose critiques,
which revising models) and start it (issue 26, point 5; docs/judges.md).

A kind of :class:`PlannedRunDialog` (re-planning in a worker, the counts, tokens, cost and the
exact first prompt before anything is sent, Start into the Runs tab): the CoTs as the critique
dialog chooses them, and the critique model whose feedback is given.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs import (
    RevisionPlan,
    RevisionSpec,
    check_models_exist,
    check_models_ready,
    create_revision_run,
    plan_revision_run,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.model_form import ModelList
from thoughtdesk.ui.generation.planned_dialog import PlannedRunDialog, only_combo, tokens_and_cost
from thoughtdesk.ui.qt import QComboBox, QFormLayout, QGroupBox, QVBoxLayout, QWidget
from thoughtdesk.ui.widgets.signals import blocked

LATEST = "Each CoT's latest critique"


def describe_revision_plan(plan: RevisionPlan) -> str:
    """The plan for people: counts, tokens, cost, per model."""
    cost = plan.cost
    lines = [
        f"{plan.total} revision request(s): {plan.n_cots} critiqued CoT(s) x {len(plan.spec.models)} revising model(s).",
        *(
            [f"{plan.without_critique} selected CoT(s) have no critique to revise from and are left out."]
            if plan.without_critique
            else []
        ),
    ]
    return "\n".join(
        lines + tokens_and_cost(cost.prompt_tokens, cost.completion_tokens, cost.total, cost.by_model, cost.unpriced)
    )


class RevisionRunDialog(PlannedRunDialog[RevisionPlan]):
    """Plan a revision run and start it (signals as :class:`PlannedRunDialog`'s)."""

    object_name = "revisionRunDialog"
    title = "Revise CoTs from their critiques"
    selection_title = "CoTs to revise (those with a critique)"
    unit = "CoTs"
    preview_caption = "Exact prompt of the first CoT (nothing has been sent):"
    start_text = "&Start revision run"
    model_noun = "revising model"
    models_tab = "Revising &models"

    def __init__(
        self,
        library_path: Path,
        prices: PriceTable,
        models: ModelList,
        *,
        collection: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        self.prices = prices
        super().__init__(library_path, models, collection=collection, parent=parent)
        self._fill_critics()

    def build_tabs(self) -> list[tuple[QWidget, str]]:
        self.only = only_combo("revisionOnly")
        self.add_selection_row("&Which", self.only)
        self.critic = QComboBox(objectName="revisionCritic")
        self.critic.setToolTip("Whose critiques are revised from: one critique model, or each CoT's latest critique")
        feedback = QGroupBox("Feedback given (main flaw, general and specific feedback; never the score)")
        QFormLayout(feedback).addRow("C&ritique model", self.critic)
        what = QWidget()
        what_layout = QVBoxLayout(what)
        what_layout.addWidget(self.selection_group)
        what_layout.addWidget(feedback)
        what_layout.addStretch(1)
        return [(what, "&CoTs and prompt")]

    def connect_changes(self) -> None:
        self.only.currentIndexChanged.connect(lambda _: self.schedule_replan())
        self.collection.currentIndexChanged.connect(self._fill_critics)
        self.critic.currentIndexChanged.connect(lambda _: self.schedule_replan())

    def _fill_critics(self) -> None:
        """The critique models with critiques in the chosen collection (a small read)."""
        current = self.critic.currentData()
        with Library.open(self.library_path) as lib:
            names = [
                row[0]
                for row in lib.conn.execute(
                    "SELECT DISTINCT c.critique_model FROM critique c JOIN generated_cot g ON g.id = c.cot_pk "
                    "JOIN sample s ON s.id = g.sample_pk JOIN collection k ON k.id = s.collection_id "
                    "WHERE k.name = ? ORDER BY 1",
                    (self.collection.currentText(),),
                )
            ]
        with blocked(self.critic):
            self.critic.clear()
            self.critic.addItem(LATEST, "")
            for name in names:
                self.critic.addItem(name, name)
            self.critic.setCurrentIndex(max(0, self.critic.findData(current)))
        self.schedule_replan()

    def spec(self) -> RevisionSpec:
        """The revision run the choices describe (raises ThoughtDeskError with what to fix)."""
        models = self.chosen_models()
        critic = self.critic.currentData()
        return RevisionSpec(
            self.cot_selection(self.only.currentData()),
            models,
            critique_models=(critic,) if critic else (),
            name=self.run_name.text().strip(),
        )

    def plan_job(self) -> Callable[[Library], RevisionPlan]:
        spec, prices = self.spec(), self.prices
        return lambda lib: plan_revision_run(lib, spec, prices=prices)

    def describe(self, plan: RevisionPlan) -> str:
        return describe_revision_plan(plan)

    def create_planned_run(self, lib: Library, plan: RevisionPlan, name: str | None) -> int:
        check_models_ready(plan.spec.models)
        check_models_exist(plan.spec.models)
        return create_revision_run(lib, plan, name=name)
