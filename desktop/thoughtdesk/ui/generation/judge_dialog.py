"""Generate > Judge pairs…: plan a pairwise judge run (which CoTs, conditions, judge models,
template) and start it (docs/judges.md).

Like the critique dialog: every change re-plans in a worker
(:func:`thoughtdesk.core.generation.runs.plan_judge_run`), the dialog shows the counts (pairs,
requests in both orders, samples left out with fewer than two CoTs), tokens, cost and the exact
prompts of the first pair in both orders as plain text, before anything is sent; Start writes
the run in a worker and hands its id to the Runs tab (:class:`PlannedRunMixin`).
"""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs import (
    ONLY_CHOICES,
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

ONLY_LABELS = {"all": "All CoTs", "correct": "Only CoTs with a correct answer", "incorrect": "Only incorrect ones"}


def describe_judge_plan(plan: JudgePlan) -> str:
    """The plan for people: pairs, requests, tokens, cost, per model."""
    cost = (
        "unknown (no price for " + ", ".join(plan.unpriced_models) + ")"
        if plan.estimated_cost is None
        else f"at most ${plan.estimated_cost:.4f}"
    )
    lines = [
        f"{plan.total} judge request(s): {len(plan.pairs)} pair(s) of CoTs of {plan.n_samples} sample(s), each "
        f"judged in both orders, x {len(plan.spec.models)} judge model(s).",
        f"Template {plan.template.key}, version {plan.template.version}.",
        f"Tokens: about {plan.estimated_prompt_tokens:,} prompt + at most {plan.estimated_completion_tokens:,} "
        f"completion. Cost: {cost}.",
    ]
    if plan.single_cot_samples:
        lines.append(f"{plan.single_cot_samples} sample(s) with fewer than two CoTs to pair are left out.")
    for label, model_cost in plan.cost_by_model.items():
        lines.append(f"  {label}: " + ("no price" if model_cost is None else f"${model_cost:.4f}"))
    return "\n".join(lines)


class JudgeRunDialog(QDialog, PlannedRunMixin[JudgePlan]):
    """Plan a pairwise judge run and start it. ``plan_ready(JudgePlan)`` after each re-plan;
    ``run_created(int, RunLimits)`` once Start has written the run (the dialog then closes)."""

    plan_ready = Signal(object)
    plan_failed = Signal(str)
    run_created = Signal(int, object)

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
        super().__init__(parent)
        self.setObjectName("judgeRunDialog")
        self.setWindowTitle("Judge pairs of CoTs")
        self.templates = dict(templates)
        self.prices = prices
        self.chooser = models
        self._start_planning(library_path).close()
        self._build(collection)
        self._timer = QTimer(self, singleShot=True, interval=250)
        self._timer.timeout.connect(self.replan)
        for spin in (self.limit, self.seed):
            spin.valueChanged.connect(lambda _: self.schedule_replan())
        for combo in (self.split, self.only, self.template):
            combo.currentIndexChanged.connect(lambda _: self.schedule_replan())
        self.conditions.textChanged.connect(lambda _: self.schedule_replan())
        self.chooser.changed.connect(self.schedule_replan)
        fit_to_screen(self, 1240, 700)
        self.schedule_replan()

    def _build(self, collection: str | None) -> None:
        self.collection = QComboBox(objectName="judgeCollection")
        self.collection.addItems(list(self._collections))
        if collection in self._collections:
            self.collection.setCurrentText(collection)
        self.dataset = QComboBox(objectName="judgeDataset")
        self.split = QComboBox(objectName="judgeSplit")
        self.collection.currentIndexChanged.connect(self._fill_datasets)
        self.dataset.currentIndexChanged.connect(self._fill_splits)
        self._fill_datasets()
        self.only = QComboBox(objectName="judgeOnly")
        for value in ONLY_CHOICES:
            self.only.addItem(ONLY_LABELS[value], value)
        self.conditions = QLineEdit(objectName="judgeConditions")
        self.conditions.setPlaceholderText("all pairs; or e.g. gpt-4o-mini, llama-3.1-8b")
        self.conditions.setToolTip(
            "Compare only CoTs of these conditions, separated by commas: a model, a prompt condition, or "
            "'model | prompt condition'. Empty: every pair of a sample's CoTs."
        )
        self.limit = QSpinBox(objectName="judgeLimit", minimum=0, maximum=10_000_000)
        self.limit.setSpecialValueText("all")
        self.limit.setToolTip("Most pairs per dataset split")
        self.seed = QSpinBox(objectName="judgeSeed", minimum=-1, maximum=2_147_483_647, value=-1)
        self.seed.setSpecialValueText("first ones")
        cots = QGroupBox("Pairs of CoTs (each judged in both orders)")
        form = QFormLayout(cots)
        form.addRow("&Collection", self.collection)
        form.addRow("&Dataset", self.dataset)
        form.addRow("S&plit", self.split)
        form.addRow("&Which CoTs", self.only)
        form.addRow("C&onditions", self.conditions)
        form.addRow("&Limit (pairs)", self.limit)
        form.addRow("Random draw see&d", self.seed)
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
        what_layout.addWidget(cots)
        what_layout.addWidget(prompt)
        what_layout.addStretch(1)
        self.tabs = QTabWidget(objectName="judgeTabs")
        self.tabs.addTab(what, "&Pairs and prompt")
        self.tabs.addTab(self.chooser, "Judge &models")

        self.summary = plain_label("Planning…", name="judgeSummary")
        self.preview = QPlainTextEdit(objectName="judgePreview")
        self.preview.setReadOnly(True)  # plain text: dataset and model text is never markup
        self.run_name = QLineEdit(objectName="judgeRunName")
        self.run_name.setPlaceholderText("Run name (optional)")
        self.concurrency = QSpinBox(objectName="judgeConcurrency", minimum=1, maximum=256, value=8)
        self.attempts = QSpinBox(objectName="judgeAttempts", minimum=1, maximum=20, value=6)
        run_form = QFormLayout()
        run_form.addRow("Run &name", self.run_name)
        run_form.addRow("Con&current requests per server", self.concurrency)
        run_form.addRow("&Attempts per request", self.attempts)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.summary)
        right_layout.addWidget(QLabel("Exact prompts of the first pair, both orders (nothing has been sent):"))
        right_layout.addWidget(self.preview, 1)
        right_layout.addLayout(run_form)
        splitter = QSplitter()
        splitter.addWidget(self.tabs)
        splitter.addWidget(right)
        splitter.setSizes([600, 640])
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.start_button = self.buttons.addButton("&Start judge run", QDialogButtonBox.ButtonRole.AcceptRole)
        self.start_button.setObjectName("startJudgeRun")
        self.start_button.setEnabled(False)
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.buttons)

    def refresh_templates(self, templates: dict[str, JudgeTemplate]) -> None:
        """Refill the template list (the fragment editor changed), keeping the chosen key."""
        self.templates = dict(templates)
        current = self.template.currentData() or BUILTIN_KEY
        with blocked(self.template):
            self.template.clear()
            for key, template in self.templates.items():
                self.template.addItem(f"{key} ({template.source}, {template.version})", key)
            self.template.setCurrentIndex(max(0, self.template.findData(current)))
        if hasattr(self, "_timer"):
            self.schedule_replan()

    def spec(self) -> JudgeSpec:
        """The judge run the choices describe (raises ThoughtDeskError with what to fix)."""
        models = tuple(self.chooser.specs())
        if not models:
            raise ThoughtDeskError("Add at least one judge model in the Judge models tab.")
        dataset, split = self.dataset.currentData(), self.split.currentData()
        conditions = tuple(c.strip() for c in self.conditions.text().split(",") if c.strip())
        return JudgeSpec(
            CotSelection(
                self.collection.currentText(),
                datasets=(dataset,) if dataset else (),
                splits=(split,) if split else (),
                only=self.only.currentData(),
            ),
            models,
            template=self.template.currentData() or BUILTIN_KEY,
            conditions=conditions,
            limit=self.limit.value() or None,
            seed=None if self.seed.value() < 0 else self.seed.value(),
            name=self.run_name.text().strip(),
        )

    def schedule_replan(self) -> None:
        if hasattr(self, "_timer"):
            self.start_button.setEnabled(False)
            self._timer.start()

    def replan(self) -> Task[JudgePlan] | None:
        """Plan again in a worker; ``plan_ready`` or ``plan_failed`` after."""
        self._generation += 1
        generation = self._generation
        try:
            spec = self.spec()
        except ThoughtDeskError as error:
            self._failed(generation, error)
            return None
        templates, prices, path = dict(self.templates), self.prices, self.library_path

        def work(_ctx: TaskContext) -> JudgePlan:
            with Library.open(path) as lib:
                return plan_judge_run(lib, spec, templates=templates, prices=prices)

        self.summary.setText("Planning…")
        return (
            Task(work)
            .on_success(lambda plan: self._planned(generation, plan))
            .on_failure(lambda error: self._failed(generation, error))
            .owned_by(self, self._tasks)
            .start()
        )

    def describe(self, plan: JudgePlan) -> str:
        return describe_judge_plan(plan)

    def previews_text(self, plan: JudgePlan) -> str:
        return "\n\n".join(f"--- {p.sample_label} | {p.model} | {p.variant}\n{p.prompt}" for p in plan.previews(1))

    def create_planned_run(self, lib: Library, plan: JudgePlan, name: str | None) -> int:
        check_models_ready(plan.spec.models)
        check_models_exist(plan.spec.models)
        return create_judge_run(lib, plan, name=name)
