"""Generate > Critique…: plan a critique run (which CoTs, critique models, template, wrapper) and
start it.

Every change re-plans in a worker (:func:`thoughtdesk.core.generation.runs.plan_critique_run`
reads the library), so the dialog stays responsive on large collections. It shows the counts
(CoTs by correctness, requests), the estimated tokens and cost, and the exact prompt of the first
CoT as plain text, before anything is sent. Start writes the run's request rows in a worker and
hands the run id to the Runs tab through :attr:`CritiqueRunDialog.run_created`.
The models widget (``ModelList``, shared with the run planner) is handed in by the Generate menu
that opens the dialog; the planning and starting are :class:`PlannedRunMixin`'s, as the run
planner's.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import cast

from thoughtdesk.core.critiques.prompts import BUILTIN_KEY, DS_PRESET, CritiqueTemplate
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs import (
    ONLY_CHOICES,
    CotSelection,
    CritiquePlan,
    CritiqueSpec,
    ModelSpec,
    check_models_exist,
    check_models_ready,
    create_critique_run,
    plan_critique_run,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.generation.model_form import ModelList
from thoughtdesk.ui.generation.planned_dialog import PlannedRunMixin
from thoughtdesk.ui.qt import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked
from thoughtdesk.ui.widgets.sizing import fit_to_screen

#: The wrapper choices: (data, label). "ds" is the Digital Socrates preset.
WRAPPER_CHOICES = (
    ("chat", "Chat messages: system + user (API models, GGUF chat template)"),
    ("ds", "Digital Socrates preset: the DS-7B/13B card's input, greedy, 512 tokens"),
    ("llama2", "Llama-2 chat form, one raw prompt"),
)
ONLY_LABELS = {"all": "All CoTs", "correct": "Only CoTs with a correct answer", "incorrect": "Only incorrect ones"}


def apply_preset(model: ModelSpec, wrapper: str) -> ModelSpec:
    """``model`` with the DS preset's decoding (greedy, 512 new tokens) when ``wrapper`` is ds."""
    if wrapper != "ds":
        return model
    temperature, max_tokens = cast(float, DS_PRESET["temperature"]), cast(int, DS_PRESET["max_tokens"])
    return dataclasses.replace(model, temperature=temperature, max_tokens=max_tokens)


def describe_critique_plan(plan: CritiquePlan) -> str:
    """The plan for people: counts, tokens, cost, per model."""
    counts = plan.counts_by_correctness()
    cost = (
        "unknown (no price for " + ", ".join(plan.unpriced_models) + ")"
        if plan.estimated_cost is None
        else f"at most ${plan.estimated_cost:.4f}"
    )
    lines = [
        f"{plan.total} critique request(s): {plan.n_cots} CoT(s) of {plan.n_samples} sample(s) x "
        f"{len(plan.spec.models)} critique model(s).",
        f"CoTs: {counts['correct']} correct, {counts['incorrect']} incorrect, {counts['unscored']} without a "
        "scored answer.",
        f"Tokens: about {plan.estimated_prompt_tokens:,} prompt + at most {plan.estimated_completion_tokens:,} "
        f"completion. Cost: {cost}.",
    ]
    for label, model_cost in plan.cost_by_model.items():
        lines.append(f"  {label}: " + ("no price" if model_cost is None else f"${model_cost:.4f}"))
    return "\n".join(lines)


def format_critique_previews(plan: CritiquePlan, limit: int = 1) -> str:
    """The exact text of the first CoT's prompt(s), one per wrapper, as plain text."""
    parts = []
    for preview in plan.previews(limit):
        parts.append(f"--- {preview.sample_label} | {preview.model} | {preview.variant}\n{preview.prompt}")
    return "\n\n".join(parts)


class CritiqueRunDialog(QDialog, PlannedRunMixin[CritiquePlan]):
    """Plan a critique run and start it. ``plan_ready(CritiquePlan)`` after each re-plan;
    ``run_created(int, RunLimits)`` once Start has written the run (the dialog then closes)."""

    plan_ready = Signal(object)
    plan_failed = Signal(str)
    run_created = Signal(int, object)

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
        super().__init__(parent)
        self.setObjectName("critiqueRunDialog")
        self.setWindowTitle("Critique CoTs")
        self.templates = dict(templates)
        self.prices = prices
        self.models_widget = models
        self.chooser = models
        self._start_planning(library_path).close()
        self._build(collection)
        self._timer = QTimer(self, singleShot=True, interval=250)
        self._timer.timeout.connect(self.replan)
        self._connect_changes()
        fit_to_screen(self, 1240, 700)
        self.schedule_replan()

    # Layout ---------------------------------------------------------------------------------

    def _build(self, collection: str | None) -> None:
        self.collection = QComboBox(objectName="critiqueCollection")
        self.collection.addItems(list(self._collections))
        if collection in self._collections:
            self.collection.setCurrentText(collection)
        self.dataset = QComboBox(objectName="critiqueDataset")
        self.split = QComboBox(objectName="critiqueSplit")
        self.collection.currentIndexChanged.connect(self._fill_datasets)
        self.dataset.currentIndexChanged.connect(self._fill_splits)
        self._fill_datasets()
        self.only = QComboBox(objectName="critiqueOnly")
        for value in ONLY_CHOICES:
            self.only.addItem(ONLY_LABELS[value], value)
        self.judge = QComboBox(objectName="critiqueJudge")
        self.judge.addItem("Visible explanation (Digital Socrates)", "explanation")
        self.judge.addItem("Thinking (reasoning models; CoTs without it left out)", "thinking")
        self.judge.setToolTip("What the critique model reads of each CoT as its explanation")
        self.limit = QSpinBox(objectName="critiqueLimit", minimum=0, maximum=10_000_000)
        self.limit.setSpecialValueText("all")
        self.limit.setToolTip("Most CoTs per dataset split")
        self.seed = QSpinBox(objectName="critiqueSeed", minimum=-1, maximum=2_147_483_647, value=-1)
        self.seed.setSpecialValueText("first ones")
        self.seed.setToolTip("With a seed the limited CoTs are drawn at random")
        cots = self.cots_group = QGroupBox("CoTs to critique (bare answers included)")
        form = QFormLayout(cots)
        form.addRow("&Collection", self.collection)
        form.addRow("&Dataset", self.dataset)
        form.addRow("S&plit", self.split)
        form.addRow("&Which", self.only)
        form.addRow("&Judge", self.judge)
        form.addRow("&Limit", self.limit)
        form.addRow("Random draw see&d", self.seed)

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
        what_layout.addWidget(cots)
        what_layout.addWidget(prompt)
        what_layout.addStretch(1)
        self.tabs = QTabWidget(objectName="critiqueTabs")
        self.tabs.addTab(what, "&CoTs and prompt")
        self.tabs.addTab(self.models_widget, "Critique &models")

        self.summary = plain_label("Planning…", name="critiqueSummary")
        self.preview = QPlainTextEdit(objectName="critiquePreview")
        self.preview.setReadOnly(True)  # plain text: dataset and model text is never markup
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.run_name = QLineEdit(objectName="critiqueRunName")
        self.run_name.setPlaceholderText("Run name (optional)")
        self.concurrency = QSpinBox(objectName="critiqueConcurrency", minimum=1, maximum=256, value=8)
        self.attempts = QSpinBox(objectName="critiqueAttempts", minimum=1, maximum=20, value=6)
        run_form = QFormLayout()
        run_form.addRow("Run &name", self.run_name)
        run_form.addRow("Con&current requests per server", self.concurrency)
        self.concurrency.setToolTip(
            "Requests in flight at once for each provider; a model served by a pool of servers gets this many per server"
        )
        run_form.addRow("&Attempts per request", self.attempts)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.summary)
        right_layout.addWidget(QLabel("Exact prompt of the first CoT (nothing has been sent):"))
        right_layout.addWidget(self.preview, 1)
        right_layout.addLayout(run_form)

        splitter = QSplitter()
        splitter.addWidget(self.tabs)
        splitter.addWidget(right)
        splitter.setSizes([600, 640])
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.start_button = self.buttons.addButton("&Start critique run", QDialogButtonBox.ButtonRole.AcceptRole)
        self.start_button.setObjectName("startCritiqueRun")
        self.start_button.setEnabled(False)
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.buttons)

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
        if hasattr(self, "_timer"):
            self.schedule_replan()

    def _connect_changes(self) -> None:
        for spin in (self.limit, self.seed):
            spin.valueChanged.connect(lambda _: self.schedule_replan())
        for combo in (self.split, self.only, self.judge, self.template, self.wrapper):
            combo.currentIndexChanged.connect(lambda _: self.schedule_replan())
        self.chooser.changed.connect(self.schedule_replan)

    # Planning -------------------------------------------------------------------------------

    def spec(self) -> CritiqueSpec:
        """The critique run the choices describe (raises ThoughtDeskError with what to fix)."""
        wrapper = self.wrapper.currentData()
        models = tuple(apply_preset(m, wrapper) for m in self.chooser.specs())
        if not models:
            raise ThoughtDeskError("Add at least one critique model in the Critique models tab.")
        dataset, split = self.dataset.currentData(), self.split.currentData()
        return CritiqueSpec(
            CotSelection(
                self.collection.currentText(),
                datasets=(dataset,) if dataset else (),
                splits=(split,) if split else (),
                only=self.only.currentData(),
                limit=self.limit.value() or None,
                seed=None if self.seed.value() < 0 else self.seed.value(),
            ),
            models,
            template=self.template.currentData() or BUILTIN_KEY,
            wrappers=(wrapper,),
            name=self.run_name.text().strip(),
            judge=self.judge.currentData() or "explanation",
        )

    def schedule_replan(self) -> None:
        if hasattr(self, "_timer"):
            self.start_button.setEnabled(False)
            self._timer.start()

    def replan(self) -> Task[CritiquePlan] | None:
        """Plan again in a worker; ``plan_ready`` or ``plan_failed`` after."""
        self._generation += 1
        generation = self._generation
        try:
            spec = self.spec()
        except ThoughtDeskError as error:
            self._failed(generation, error)
            return None
        templates, prices, path = dict(self.templates), self.prices, self.library_path

        def work(_ctx: TaskContext) -> CritiquePlan:
            with Library.open(path) as lib:
                return plan_critique_run(lib, spec, templates=templates, prices=prices)

        self.summary.setText("Planning…")
        return (
            Task(work)
            .on_success(lambda plan: self._planned(generation, plan))
            .on_failure(lambda error: self._failed(generation, error))
            .owned_by(self, self._tasks)
            .start()
        )

    def describe(self, plan: CritiquePlan) -> str:
        return describe_critique_plan(plan)

    def previews_text(self, plan: CritiquePlan) -> str:
        return format_critique_previews(plan)

    def create_planned_run(self, lib: Library, plan: CritiquePlan, name: str | None) -> int:
        check_models_ready(plan.spec.models)  # offline mode, a missing model file: no run is written
        check_models_exist(plan.spec.models)  # a model its server does not have (a typo): no run either
        return create_critique_run(lib, plan, name=name)
