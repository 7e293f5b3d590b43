"""Generate > Critique…: plan a critique run (which CoTs, critique models, template, wrapper) and
start it.

Every change re-plans in a worker (:func:`thoughtdesk.core.generation.runs.plan_critique_run`
reads the library), so the dialog stays responsive on large collections. It shows the counts
(CoTs by correctness, requests), the estimated tokens and cost, and the exact prompt of the first
CoT as plain text, before anything is sent. Start writes the run's request rows in a worker and
hands the run id to the Runs tab through :attr:`CritiqueRunDialog.run_created`.
The models widget (``ModelList``, shared with the run planner) is handed in by the Generate menu
that opens the dialog; the selection, planning and starting are :class:`PlannedRunDialog`'s, as
every kind of run's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import cast

from thoughtdesk.core.critiques.prompts import BUILTIN_KEY, DS_PRESET, CritiqueTemplate
from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs import (
    CritiquePlan,
    CritiqueSpec,
    ModelSpec,
    check_models_exist,
    check_models_ready,
    create_critique_run,
    plan_critique_run,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.model_form import ModelList
from thoughtdesk.ui.generation.planned_dialog import PlannedRunDialog, only_combo, tokens_and_cost
from thoughtdesk.ui.qt import QComboBox, QFormLayout, QGroupBox, QVBoxLayout, QWidget
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked

#: The wrapper choices: (data, label). "ds" is the Digital Socrates preset.
WRAPPER_CHOICES = (
    ("chat", "Chat messages: system + user (API models, GGUF chat template)"),
    ("ds", "Digital Socrates preset: the DS-7B/13B card's input, greedy, 512 tokens"),
    ("llama2", "Llama-2 chat form, one raw prompt"),
)


def apply_preset(model: ModelSpec, wrapper: str) -> ModelSpec:
    """``model`` with the DS preset's decoding (greedy, 512 new tokens) when ``wrapper`` is ds."""
    if wrapper != "ds":
        return model
    temperature, max_tokens = cast(float, DS_PRESET["temperature"]), cast(int, DS_PRESET["max_tokens"])
    return dataclasses.replace(model, temperature=temperature, max_tokens=max_tokens)


def describe_critique_plan(plan: CritiquePlan) -> str:
    """The plan for people: counts, tokens, cost, per model."""
    counts = plan.counts_by_correctness()
    lines = [
        f"{plan.total} critique request(s): {plan.n_cots} CoT(s) of {plan.n_samples} sample(s) x "
        f"{len(plan.spec.models)} critique model(s).",
        f"CoTs: {counts['correct']} correct, {counts['incorrect']} incorrect, {counts['unscored']} without a "
        "scored answer.",
    ]
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


class CritiqueRunDialog(PlannedRunDialog[CritiquePlan]):
    """Plan a critique run and start it (signals as :class:`PlannedRunDialog`'s)."""

    object_name = "critiqueRunDialog"
    title = "Critique CoTs"
    selection_title = "CoTs to critique (bare answers included)"
    unit = "CoTs"
    preview_caption = "Exact prompt of the first CoT (nothing has been sent):"
    start_text = "&Start critique run"
    model_noun = "critique model"
    models_tab = "Critique &models"

    def __init__(
        self,
        library_path: Path,
        templates: dict[str, CritiqueTemplate],
        prices: PriceTable,
        models: ModelList,
        *,
        collection: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        self.templates = dict(templates)
        self.prices = prices
        super().__init__(library_path, models, collection=collection, parent=parent)

    # The form -------------------------------------------------------------------------------

    def build_tabs(self) -> list[tuple[QWidget, str]]:
        self.only = only_combo("critiqueOnly")
        self.judge = QComboBox(objectName="critiqueJudge")
        self.judge.addItem("Visible explanation (Digital Socrates)", "explanation")
        self.judge.addItem("Thinking (reasoning models; CoTs without it left out)", "thinking")
        self.judge.setToolTip("What the critique model reads of each CoT as its explanation")
        self.cots_group = self.selection_group
        self.add_selection_row("&Which", self.only)
        self.add_selection_row("&Judge", self.judge)

        self.template = QComboBox(objectName="critiqueTemplate")
        self.refresh_templates(self.templates)
        self.wrapper = QComboBox(objectName="critiqueWrapper")
        for wrapper, label in WRAPPER_CHOICES:
            self.wrapper.addItem(label, wrapper)
        prompt = self.prompt_group = QGroupBox("Critique prompt")
        prompt_form = self.prompt_form = QFormLayout(prompt)
        prompt_form.addRow("&Template", self.template)
        prompt_form.addRow("&Wrapper", self.wrapper)
        prompt_form.addRow(
            plain_label(
                "Templates are edited in Generate > Fragments… (Critique prompts); DSCB-prompts.json "
                "can be imported there.",
                name="critiqueTemplateHint",
            )
        )

        what = QWidget()
        what_layout = QVBoxLayout(what)
        what_layout.addWidget(self.selection_group)
        what_layout.addWidget(prompt)
        what_layout.addStretch(1)
        return [(what, "&CoTs and prompt")]

    def refresh_templates(self, templates: dict[str, CritiqueTemplate]) -> None:
        """Refill the template list (the fragment editor changed), keeping the chosen key."""
        self.templates = dict(templates)
        current = self.template.currentData() or BUILTIN_KEY
        with blocked(self.template):
            self.template.clear()
            for key, template in self.templates.items():
                self.template.addItem(f"{key} ({template.source})", key)
            index = self.template.findData(current)
            self.template.setCurrentIndex(max(0, index))
        self.schedule_replan()

    def connect_changes(self) -> None:
        for combo in (self.only, self.judge, self.template, self.wrapper):
            combo.currentIndexChanged.connect(lambda _: self.schedule_replan())

    # Planning -------------------------------------------------------------------------------

    def spec(self) -> CritiqueSpec:
        """The critique run the choices describe (raises ThoughtDeskError with what to fix)."""
        wrapper = self.wrapper.currentData()
        models = tuple(apply_preset(m, wrapper) for m in self.chosen_models())
        return CritiqueSpec(
            self.cot_selection(self.only.currentData()),
            models,
            template=self.template.currentData() or BUILTIN_KEY,
            wrappers=(wrapper,),
            name=self.run_name.text().strip(),
            judge=self.judge.currentData() or "explanation",
        )

    def plan_job(self) -> Callable[[Library], CritiquePlan]:
        spec, templates, prices = self.spec(), dict(self.templates), self.prices
        return lambda lib: plan_critique_run(lib, spec, templates=templates, prices=prices)

    def describe(self, plan: CritiquePlan) -> str:
        return describe_critique_plan(plan)

    def create_planned_run(self, lib: Library, plan: CritiquePlan, name: str | None) -> int:
        check_models_ready(plan.spec.models)  # offline mode, a missing model file: no run is written
        check_models_exist(plan.spec.models)  # a model its server does not have (a typo): no run either
        return create_critique_run(lib, plan, name=name)
