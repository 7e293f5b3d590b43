"""Generate > Judge pairs…: plan a pairwise judge run (which CoTs, conditions, judge models,
template) and start it (docs/judges.md).

Like the critique dialog: every change re-plans in a worker
(:func:`thoughtdesk.core.generation.runs.plan_judge_run`), the dialog shows the counts (pairs,
requests in both orders, samples left out with fewer than two CoTs), tokens, cost and the exact
prompts of the first pair in both orders as plain text, before anything is sent; Start writes
the run in a worker and hands its id to the Runs tab (:class:`PlannedRunDialog`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs import (
    CotSelection,
    JudgePlan,
    JudgeSpec,
    check_models_exist,
    check_models_ready,
    create_judge_run,
    plan_judge_run,
)
from thoughtdesk.core.judges.prompts import BUILTIN_KEY, JudgeTemplate
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.model_form import ModelList
from thoughtdesk.ui.generation.planned_dialog import PlannedRunDialog, only_combo, tokens_and_cost
from thoughtdesk.ui.qt import QComboBox, QFormLayout, QGroupBox, QLineEdit, QVBoxLayout, QWidget
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked


def describe_judge_plan(plan: JudgePlan) -> str:
    """The plan for people: pairs, requests, tokens, cost, per model."""
    lines = [
        f"{plan.total} judge request(s): {len(plan.pairs)} pair(s) of CoTs of {plan.n_samples} sample(s), each "
        f"judged in both orders, x {len(plan.spec.models)} judge model(s).",
        f"Template {plan.template.key}, version {plan.template.version}.",
    ]
    cost = tokens_and_cost(
        plan.estimated_prompt_tokens,
        plan.estimated_completion_tokens,
        plan.estimated_cost,
        plan.cost_by_model,
        plan.unpriced_models,
    )
    lines.append(cost[0])
    if plan.single_cot_samples:
        lines.append(f"{plan.single_cot_samples} sample(s) with fewer than two CoTs to pair are left out.")
    return "\n".join(lines + cost[1:])


class JudgeRunDialog(PlannedRunDialog[JudgePlan]):
    """Plan a pairwise judge run and start it (signals as :class:`PlannedRunDialog`'s)."""

    object_name = "judgeRunDialog"
    title = "Judge pairs of CoTs"
    selection_title = "Pairs of CoTs (each judged in both orders)"
    unit = "pairs"
    limit_label = "&Limit (pairs)"
    preview_caption = "Exact prompts of the first pair, both orders (nothing has been sent):"
    start_text = "&Start judge run"
    model_noun = "judge model"
    models_tab = "Judge &models"

    def __init__(
        self,
        library_path: Path,
        templates: dict[str, JudgeTemplate],
        prices: PriceTable,
        models: ModelList,
        *,
        collection: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        self.templates = dict(templates)
        self.prices = prices
        super().__init__(library_path, models, collection=collection, parent=parent)

    def build_tabs(self) -> list[tuple[QWidget, str]]:
        self.only = only_combo("judgeOnly")
        self.conditions = QLineEdit(objectName="judgeConditions")
        self.conditions.setPlaceholderText("all pairs; or e.g. gpt-4o-mini, llama-3.1-8b")
        self.conditions.setToolTip(
            "Compare only CoTs of these conditions, separated by commas: a model, a prompt condition, or "
            "'model | prompt condition'. Empty: every pair of a sample's CoTs."
        )
        self.add_selection_row("&Which CoTs", self.only)
        self.add_selection_row("C&onditions", self.conditions)
        self.template = QComboBox(objectName="judgeTemplate")
        self.refresh_templates(self.templates)
        prompt = QGroupBox("Judge prompt")
        prompt_form = QFormLayout(prompt)
        prompt_form.addRow("&Template", self.template)
        prompt_form.addRow(
            plain_label(
                "MT-bench's pairwise judge: explanation first, then [[A]], [[B]] or [[C]] for a tie. Edit it in "
                "Generate > Fragments… (Pairwise judge prompts); an edited template is a new judge version.",
                name="judgeTemplateHint",
            )
        )
        what = QWidget()
        what_layout = QVBoxLayout(what)
        what_layout.addWidget(self.selection_group)
        what_layout.addWidget(prompt)
        what_layout.addStretch(1)
        return [(what, "&Pairs and prompt")]

    def connect_changes(self) -> None:
        for combo in (self.only, self.template):
            combo.currentIndexChanged.connect(lambda _: self.schedule_replan())
        self.conditions.textChanged.connect(lambda _: self.schedule_replan())

    def refresh_templates(self, templates: dict[str, JudgeTemplate]) -> None:
        """Refill the template list (the fragment editor changed), keeping the chosen key."""
        self.templates = dict(templates)
        current = self.template.currentData() or BUILTIN_KEY
        with blocked(self.template):
            self.template.clear()
            for key, template in self.templates.items():
                self.template.addItem(f"{key} ({template.source}, {template.version})", key)
            self.template.setCurrentIndex(max(0, self.template.findData(current)))
        self.schedule_replan()

    def spec(self) -> JudgeSpec:
        """The judge run the choices describe (raises ThoughtDeskError with what to fix)."""
        models = self.chosen_models()
        datasets, splits, limit, seed = self.selection()  # the limit and seed count pairs
        conditions = tuple(c.strip() for c in self.conditions.text().split(",") if c.strip())
        return JudgeSpec(
            CotSelection(self.collection.currentText(), datasets=datasets, splits=splits, only=self.only.currentData()),
            models,
            template=self.template.currentData() or BUILTIN_KEY,
            conditions=conditions,
            limit=limit,
            seed=seed,
            name=self.run_name.text().strip(),
        )

    def plan_job(self) -> Callable[[Library], JudgePlan]:
        spec, templates, prices = self.spec(), dict(self.templates), self.prices
        return lambda lib: plan_judge_run(lib, spec, templates=templates, prices=prices)

    def describe(self, plan: JudgePlan) -> str:
        return describe_judge_plan(plan)

    def create_planned_run(self, lib: Library, plan: JudgePlan, name: str | None) -> int:
        check_models_ready(plan.spec.models)
        check_models_exist(plan.spec.models)
        return create_judge_run(lib, plan, name=name)
