"""Generate > Revise from critiques…: plan a revision run (which critiqued CoTs, whose critiques,
which revising models) and start it (issue 26, point 5; docs/judges.md).

The critique dialog's layout and behaviour (re-planning in a worker, the counts, tokens, cost
and the exact first prompt before anything is sent, Start into the Runs tab), with the critique
template and wrapper replaced by the critique model whose feedback is given.
"""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs import (
    CotSelection,
    RevisionPlan,
    RevisionSpec,
    check_models_exist,
    check_models_ready,
    create_revision_run,
    plan_revision_run,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.generation.critique_dialog import CritiqueRunDialog
from thoughtdesk.ui.generation.model_form import ModelList
from thoughtdesk.ui.qt import QComboBox, QWidget
from thoughtdesk.ui.widgets.signals import blocked

LATEST = "Each CoT's latest critique"


def describe_revision_plan(plan: RevisionPlan) -> str:
    """The plan for people: counts, tokens, cost, per model."""
    cost = plan.cost
    total = (
        "unknown (no price for " + ", ".join(cost.unpriced) + ")"
        if cost.total is None
        else f"at most ${cost.total:.4f}"
    )
    lines = [
        f"{plan.total} revision request(s): {plan.n_cots} critiqued CoT(s) x {len(plan.spec.models)} revising model(s).",
        *(
            [f"{plan.without_critique} selected CoT(s) have no critique to revise from and are left out."]
            if plan.without_critique
            else []
        ),
        f"Tokens: about {cost.prompt_tokens:,} prompt + at most {cost.completion_tokens:,} completion. Cost: {total}.",
    ]
    for label, model_cost in cost.by_model.items():
        lines.append(f"  {label}: " + ("no price" if model_cost is None else f"${model_cost:.4f}"))
    return "\n".join(lines)


class RevisionRunDialog(CritiqueRunDialog):
    """Plan a revision run and start it (signals as :class:`CritiqueRunDialog`'s)."""

    def __init__(
        self,
        library_path: Path,
        prices: PriceTable,
        models: ModelList,
        *,
        collection: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        self.critic = QComboBox(objectName="revisionCritic")
        super().__init__(library_path, {}, prices, models, collection=collection, parent=parent)
        self.setObjectName("revisionRunDialog")
        self.setWindowTitle("Revise CoTs from their critiques")
        self.cots_group.setTitle("CoTs to revise (those with a critique)")
        self.prompt_group.setTitle("Feedback given (main flaw, general and specific feedback; never the score)")
        for row in range(self.prompt_form.rowCount()):
            self.prompt_form.setRowVisible(row, False)
        self.prompt_form.addRow("C&ritique model", self.critic)
        self.critic.setToolTip("Whose critiques are revised from: one critique model, or each CoT's latest critique")
        self.tabs.setTabText(1, "Revising &models")
        self.start_button.setText("&Start revision run")
        self.start_button.setObjectName("startRevisionRun")
        self.collection.currentIndexChanged.connect(self._fill_critics)
        self.critic.currentIndexChanged.connect(lambda _: self.schedule_replan())
        self._fill_critics()

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

    def spec(self) -> RevisionSpec:  # type: ignore[override]
        """The revision run the choices describe (raises ThoughtDeskError with what to fix)."""
        models = tuple(self.chooser.specs())
        if not models:
            raise ThoughtDeskError("Add at least one revising model in the Revising models tab.")
        dataset, split, critic = self.dataset.currentData(), self.split.currentData(), self.critic.currentData()
        return RevisionSpec(
            CotSelection(
                self.collection.currentText(),
                datasets=(dataset,) if dataset else (),
                splits=(split,) if split else (),
                only=self.only.currentData(),
                limit=self.limit.value() or None,
                seed=None if self.seed.value() < 0 else self.seed.value(),
            ),
            models,
            critique_models=(critic,) if critic else (),
            name=self.run_name.text().strip(),
        )

    def replan(self) -> Task[RevisionPlan] | None:  # type: ignore[override]
        """Plan again in a worker; ``plan_ready`` or ``plan_failed`` after."""
        self._generation += 1
        generation = self._generation
        try:
            spec = self.spec()
        except ThoughtDeskError as error:
            self._failed(generation, error)
            return None
        prices, path = self.prices, self.library_path

        def work(_ctx: TaskContext) -> RevisionPlan:
            with Library.open(path) as lib:
                return plan_revision_run(lib, spec, prices=prices)

        self.summary.setText("Planning…")
        return (
            Task(work)
            .on_success(lambda plan: self._planned(generation, plan))  # type: ignore[arg-type]
            .on_failure(lambda error: self._failed(generation, error))
            .owned_by(self, self._tasks)
            .start()
        )

    def describe(self, plan: RevisionPlan) -> str:  # type: ignore[override]
        return describe_revision_plan(plan)

    def previews_text(self, plan: RevisionPlan) -> str:  # type: ignore[override]
        return "\n\n".join(f"--- {p.sample_label} | {p.model} | {p.variant}\n{p.prompt}" for p in plan.previews(1))

    def create_planned_run(self, lib: Library, plan: RevisionPlan, name: str | None) -> int:  # type: ignore[override]
        check_models_ready(plan.spec.models)
        check_models_exist(plan.spec.models)
        return create_revision_run(lib, plan, name=name)
