"""Generate > Label steps by rollouts…: plan an automatic step label run (Math-Shepherd rollouts,
docs/steps.md) and start it; what ``thoughtdesk autolabel`` does, in a window.

A kind of :class:`PlannedRunDialog`: every change re-plans in a worker
(:func:`thoughtdesk.core.generation.runs.rollouts.plan_autolabel_run`), the dialog shows the
rollout requests (one per step of each CoT to label), the CoTs left out (labelled before by
this completer, or without steps), tokens and cost, and the exact prompt of the first step,
before anything is sent; Start writes the run and hands its id to the Runs tab.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs import check_models_exist, check_models_ready
from thoughtdesk.core.generation.runs.kind_specs import AutolabelSpec
from thoughtdesk.core.generation.runs.rollouts import AutolabelPlan, create_autolabel_run, plan_autolabel_run
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.model_form import ModelList
from thoughtdesk.ui.generation.planned_dialog import PlannedRunDialog, tokens_and_cost
from thoughtdesk.ui.qt import QCheckBox, QFormLayout, QGroupBox, QSpinBox, QVBoxLayout, QWidget
from thoughtdesk.ui.widgets.labels import plain_label


def describe_autolabel_plan(plan: AutolabelPlan) -> str:
    """The plan for people: rollout requests, CoTs, what is left out, tokens, cost."""
    spec = plan.spec
    lines = [
        f"{plan.total:,} rollout request(s): every step of {plan.cots} CoT(s), {spec.k} rollout(s) each by "
        f"{spec.model.label}.",
    ]
    left = []
    if plan.labelled_before:
        left.append(f"{plan.labelled_before} labelled before by {plan.author!r}")
    if plan.without_steps:
        left.append(f"{plan.without_steps} without steps")
    if left:
        lines.append("Left out: " + ", ".join(left) + ".")
    return "\n".join(
        lines
        + tokens_and_cost(
            plan.estimated_prompt_tokens,
            plan.estimated_completion_tokens,
            plan.estimated_cost,
            plan.cost_by_model,
            plan.unpriced_models,
        )
    )


class AutolabelRunDialog(PlannedRunDialog[AutolabelPlan]):
    """Plan an automatic step label run and start it (signals as :class:`PlannedRunDialog`'s)."""

    object_name = "autolabelRunDialog"
    title = "Label steps by rollouts"
    selection_title = "CoTs whose steps are labelled (the collection's generated CoTs)"
    unit = "CoTs"
    limit_label = "&Limit (CoTs)"
    selects_splits = False  # an autolabel run takes a collection's CoTs, the first ones
    draws_at_random = False
    model_noun = "completer model"
    models_tab = "Completer &model"
    preview_caption = "Exact prompt of the first step's rollouts (nothing has been sent):"
    start_text = "&Start labelling run"

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

    def build_tabs(self) -> list[tuple[QWidget, str]]:
        self.limit.setToolTip("Label only the first N CoTs of the collection")
        self.k = QSpinBox(objectName="autolabelK", minimum=1, maximum=64, value=4)
        self.k.setToolTip("Continuations the completer samples from each step (one request with n = K)")
        self.rollout_seed = QSpinBox(objectName="autolabelSeed", minimum=-1, maximum=2_147_483_647, value=-1)
        self.rollout_seed.setSpecialValueText("none")
        self.rollout_seed.setToolTip("The completer's seed, where its server takes one")
        self.force = QCheckBox("La&bel again the CoTs this completer labelled before")
        self.force.setObjectName("autolabelForce")
        rollouts = QGroupBox("Rollouts")
        form = QFormLayout(rollouts)
        form.addRow("&Rollouts per step (K)", self.k)
        form.addRow("Completer s&eed", self.rollout_seed)
        form.addRow("", self.force)
        form.addRow(
            plain_label(
                "A step is labelled +1 when any of its K continuations reaches the gold answer, else -1 (and the "
                "share that do, as the soft label); the labels are the completer's, beside the reviewers'.",
                name="autolabelHint",
            )
        )
        what = QWidget()
        layout = QVBoxLayout(what)
        layout.addWidget(self.selection_group)
        layout.addWidget(rollouts)
        layout.addStretch(1)
        return [(what, "CoTs and roll&outs")]

    def connect_changes(self) -> None:
        for spin in (self.k, self.rollout_seed):
            spin.valueChanged.connect(lambda _: self.schedule_replan())
        self.force.toggled.connect(lambda _: self.schedule_replan())

    def spec(self) -> AutolabelSpec:
        """The run the choices describe (raises ThoughtDeskError with what to fix)."""
        models = self.chosen_models()
        if len(models) > 1:
            raise ThoughtDeskError(
                f"Keep one model in the {self.models_tab.replace('&', '')} tab: an automatic step label run has "
                f"one completer ({len(models)} are listed)."
            )
        return AutolabelSpec(
            self.collection.currentText(),
            models,
            k=self.k.value(),
            limit=self.limit.value() or None,
            seed=None if self.rollout_seed.value() < 0 else self.rollout_seed.value(),
            force=self.force.isChecked(),
            name=self.run_name.text().strip(),
        )

    def plan_job(self) -> Callable[[Library], AutolabelPlan]:
        spec, prices = self.spec(), self.prices
        return lambda lib: plan_autolabel_run(lib, spec, prices=prices)

    def describe(self, plan: AutolabelPlan) -> str:
        return describe_autolabel_plan(plan)

    def create_planned_run(self, lib: Library, plan: AutolabelPlan, name: str | None) -> int:
        check_models_ready(plan.spec.models)  # offline mode, a missing model file: no run is written
        check_models_exist(plan.spec.models)  # a model its server does not have (a typo): no run either
        return create_autolabel_run(lib, plan, name=name)
