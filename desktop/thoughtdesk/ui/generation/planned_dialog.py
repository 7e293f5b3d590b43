"""The one planning dialog every kind of run shares (issue 28, point 12): the GUI's side of
:mod:`thoughtdesk.core.generation.runs.planning`.

:class:`PlannedRunDialog` owns what every planned run has: the selection (collection, dataset,
split, limit, random-draw seed), re-planning in a background Task a moment after each change
(an older plan finishing late is dropped), the plan's summary (requests, tokens, cost,
warnings) or its error in one red line, the exact prompts of its first requests, the run's
name, concurrency and attempts, Cancel and Start (which writes the run's request rows in a
worker and hands the run id on through ``run_created``), and the fit to a 1366x768 screen.

A kind of run is a subclass that supplies only what differs: its form fields (tabs, and rows
in the selection box), the job that plans it in the worker, its plan described for people,
and the call that writes it (``create_run``, ``create_critique_run``, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.runs import ONLY_CHOICES, CotSelection, ModelSpec, RunLimits
from thoughtdesk.core.generation.runs.kind_specs import Only
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.generation.model_form import ModelList
from thoughtdesk.ui.qt import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.mnemonics import distinct_mnemonics
from thoughtdesk.ui.widgets.signals import blocked
from thoughtdesk.ui.widgets.sizing import compact_combo, fit_to_screen

P = TypeVar("P")

#: Milliseconds after the last change before the dialog plans again.
REPLAN_MS = 250
ERROR_STYLE = "color: #b3261e;"
#: The "Which CoTs" choices of the kinds that read generated CoTs (critique, revision, judge).
ONLY_LABELS = {"all": "All CoTs", "correct": "Only CoTs with a correct answer", "incorrect": "Only incorrect ones"}


def tokens_and_cost(
    prompt_tokens: int,
    completion_tokens: int,
    cost: float | None,
    by_model: dict[str, float | None],
    unpriced: list[str],
) -> list[str]:
    """A plan's estimate for people (tokens, USD), as the kinds of run say it: a line of tokens
    and cost, then one line per model."""
    total = "unknown (no price for " + ", ".join(unpriced) + ")" if cost is None else f"at most ${cost:.4f}"
    lines = [f"Tokens: about {prompt_tokens:,} prompt + at most {completion_tokens:,} completion. Cost: {total}."]
    lines += [
        f"  {label}: " + ("no price" if model_cost is None else f"${model_cost:.4f}")
        for label, model_cost in by_model.items()
    ]
    return lines


def only_combo(name: str) -> QComboBox:
    """A "Which CoTs" combo box: all, only correct ones, only incorrect ones."""
    combo = QComboBox(objectName=name)
    for value in ONLY_CHOICES:
        combo.addItem(ONLY_LABELS[value], value)
    return combo


class PlannedRunDialog(QDialog, Generic[P]):
    """Plan a run of one kind and start it. ``plan_ready(plan)`` after each re-plan,
    ``plan_failed(str)`` with the one-line error, ``run_created(int, RunLimits)`` once Start
    has written the run (the dialog then closes)."""

    plan_ready = Signal(object)
    plan_failed = Signal(str)
    run_created = Signal(int, object)

    # What a kind says about itself (class attributes; the texts are shown as they are).
    object_name: ClassVar[str] = "plannedRunDialog"
    title: ClassVar[str] = "Plan a run"
    #: What the selection picks, for its box's title and the limit's tooltip.
    selection_title: ClassVar[str] = "Samples"
    unit: ClassVar[str] = "samples"
    limit_label: ClassVar[str] = "&Limit"
    #: Whether the kind's runs choose datasets and splits, and draw limited items at random
    #: (else those rows are hidden: an automatic step label run takes the first CoTs).
    selects_splits: ClassVar[bool] = True
    draws_at_random: ClassVar[bool] = True
    #: The run's models: what one is called, and the title of their tab (the second).
    model_noun: ClassVar[str] = "model"
    models_tab: ClassVar[str] = "&Models"
    preview_caption: ClassVar[str] = "Exact prompts of the first requests (nothing has been sent):"
    start_text: ClassVar[str] = "&Start run"
    #: The dialog's size on a large screen (fit to smaller ones), and the split between the
    #: choices (left) and the plan (right).
    initial_size: ClassVar[tuple[int, int]] = (1240, 700)
    split_sizes: ClassVar[tuple[int, int]] = (600, 640)

    def __init__(
        self,
        library_path: Path,
        models: ModelList,
        *,
        collection: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(self.object_name)
        self.setWindowTitle(self.title)
        self.library_path = library_path
        #: The run's models (the Generate menu hands in a list started from the user's Settings).
        self.models = models
        self.plan: P | None = None
        self.error = ""
        self._generation = 0
        self._tasks: set[Task[Any]] = set()
        # Each collection's (dataset, split) pairs: small reads, names and split counts only.
        with Library.open(library_path) as lib:
            self._collections: dict[str, list[tuple[str, str]]] = {
                info.name: lib.splits(info.id) for info in lib.collections()
            }
            self.read_library(lib)
        self._build_selection()
        self._build()
        self.select_source(*self.opening_source(collection))
        self._timer = QTimer(self, singleShot=True, interval=REPLAN_MS)
        self._timer.timeout.connect(self.replan)
        for spin in (self.limit, self.seed):
            spin.valueChanged.connect(lambda _: self.schedule_replan())
        self.split.currentIndexChanged.connect(lambda _: self.schedule_replan())
        self.models.changed.connect(self.schedule_replan)
        self.connect_changes()
        distinct_mnemonics(self)
        fit_to_screen(self, *self.initial_size)
        self.schedule_replan()

    # What a kind supplies -------------------------------------------------------------------

    def read_library(self, lib: Library) -> None:
        """The kind's own small reads when the dialog opens (the library is open for them)."""

    def build_tabs(self) -> list[tuple[QWidget, str]]:
        """The kind's form: the tabs on the left, the first holding ``selection_group`` (the
        models' tab goes second). It may add rows to ``selection_form``
        (:meth:`add_selection_row`) and to ``run_form``."""
        raise NotImplementedError

    def opening_source(self, collection: str | None) -> tuple[str | None, str | None, str | None]:
        """The collection, dataset and split the dialog opens on (``collection``: the caller's)."""
        return collection, None, None

    def connect_changes(self) -> None:
        """Connect the kind's own fields to :meth:`schedule_replan`."""

    def plan_job(self) -> Callable[[Library], P]:
        """Read the form (on the GUI thread) into the job that plans the run in the worker, from
        the library opened there. Raises ThoughtDeskError saying what to fix in the form."""
        raise NotImplementedError

    def check_plan(self, plan: P) -> P:
        """More checks of a plan in the worker, after the library is closed (a slow read of a
        model file); raise ThoughtDeskError to show the plan as an error."""
        return plan

    def describe(self, plan: P) -> str:
        """The plan for people: requests, tokens, cost, warnings."""
        raise NotImplementedError

    def previews_text(self, plan: P) -> str:
        """The exact prompts of the plan's first CoT (pair, step), each under a one-line header."""
        previews = plan.previews(1)  # type: ignore[attr-defined]  # every kind's plan has them
        return "\n\n".join(f"--- {p.sample_label} | {p.model} | {p.variant}\n{p.prompt}" for p in previews)

    def create_planned_run(self, lib: Library, plan: P, name: str | None) -> int:
        """Write the run (in the worker); checks that must pass before a run is written go here."""
        raise NotImplementedError

    # Layout ---------------------------------------------------------------------------------

    def _build_selection(self) -> None:
        self.collection = compact_combo(QComboBox(objectName="collection"))
        self.collection.addItems(list(self._collections))
        self.dataset = compact_combo(QComboBox(objectName="dataset"))
        self.split = compact_combo(QComboBox(objectName="split"))
        self.collection.currentIndexChanged.connect(self._fill_datasets)
        self.dataset.currentIndexChanged.connect(self._fill_splits)
        self.limit = QSpinBox(objectName="limit", minimum=0, maximum=10_000_000)
        self.limit.setSpecialValueText("all")
        self.limit.setToolTip(f"Most {self.unit} per dataset split")
        self.seed = QSpinBox(objectName="seed", minimum=-1, maximum=2_147_483_647, value=-1)
        self.seed.setSpecialValueText("first ones")
        self.seed.setToolTip(f"With a seed the limited {self.unit} are drawn at random")
        self.selection_group = QGroupBox(self.selection_title)
        form = self.selection_form = QFormLayout(self.selection_group)
        form.addRow("&Collection", self.collection)
        form.addRow("&Dataset", self.dataset)
        form.addRow("S&plit", self.split)
        form.addRow(self.limit_label, self.limit)
        form.addRow("Random draw see&d", self.seed)
        form.setRowVisible(self.dataset, self.selects_splits)
        form.setRowVisible(self.split, self.selects_splits)
        form.setRowVisible(self.seed, self.draws_at_random)

    def add_selection_row(self, label: str, field: QWidget) -> None:
        """A row of the kind's in the selection box, after the split (before the limit)."""
        self.selection_form.insertRow(self.selection_form.rowCount() - 2, label, field)

    def _build(self) -> None:
        # The plan's side first: a kind's form may add rows to the run's form (the batch option).
        self.summary = plain_label("Planning…", name="planSummary")
        self.preview = QPlainTextEdit(objectName="promptPreview")
        self.preview.setReadOnly(True)  # plain text: dataset and model text is never markup
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.run_name = QLineEdit(objectName="runName")
        self.run_name.setPlaceholderText("Run name (optional)")
        self.concurrency = QSpinBox(objectName="concurrency", minimum=1, maximum=256, value=8)
        self.concurrency.setToolTip(
            "Requests in flight at once for each provider; a model served by a pool of servers gets this many per server"
        )
        self.attempts = QSpinBox(objectName="attempts", minimum=1, maximum=20, value=6)
        self.run_form = QFormLayout()
        self.run_form.addRow("Run &name", self.run_name)
        self.run_form.addRow("Con&current requests per server", self.concurrency)
        self.run_form.addRow("&Attempts per request", self.attempts)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.start_button: QPushButton = self.buttons.addButton(self.start_text, QDialogButtonBox.ButtonRole.AcceptRole)
        self.start_button.setObjectName("startRun")
        self.start_button.setEnabled(False)
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.reject)

        self.tabs = QTabWidget(objectName="planTabs")
        tabs = self.build_tabs()
        tabs.insert(1, (self.models, self.models_tab))
        for widget, title in tabs:
            self.tabs.addTab(widget, title)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.summary)
        right_layout.addWidget(QLabel(self.preview_caption))
        right_layout.addWidget(self.preview, 1)
        right_layout.addLayout(self.run_form)
        splitter = QSplitter()
        splitter.addWidget(self.tabs)
        splitter.addWidget(right)
        splitter.setSizes(list(self.split_sizes))
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.buttons)

    # The selection --------------------------------------------------------------------------

    def select_source(self, collection: str | None, dataset: str | None = None, split: str | None = None) -> None:
        """Start on this collection (and dataset and split), where it exists: the one selected in
        the main window's tree, not the first alphabetically (a first run once went to the wrong
        collection)."""
        self._fill_datasets()
        if collection not in self._collections:
            return
        self.collection.setCurrentText(collection)  # refills datasets and splits
        for combo, value in ((self.dataset, dataset), (self.split, split)):
            index = combo.findData(value) if value is not None else -1
            if index >= 0:
                combo.setCurrentIndex(index)

    def _fill_datasets(self) -> None:
        with blocked(self.dataset):
            self.dataset.clear()
            self.dataset.addItem("All datasets", None)
            for dataset in dict.fromkeys(d for d, _ in self._collections.get(self.collection.currentText(), [])):
                self.dataset.addItem(dataset, dataset)
        self._fill_splits()

    def _fill_splits(self) -> None:
        with blocked(self.split):
            self.split.clear()
            self.split.addItem("All splits", None)
            dataset = self.dataset.currentData()
            for split in dict.fromkeys(
                s
                for d, s in self._collections.get(self.collection.currentText(), [])
                if dataset is None or d == dataset
            ):
                self.split.addItem(split, split)
        self.schedule_replan()

    def selection(self) -> tuple[tuple[str, ...], tuple[str, ...], int | None, int | None]:
        """The chosen datasets, splits (empty: all), limit and seed (None: all, the first ones)."""
        dataset, split = self.dataset.currentData(), self.split.currentData()
        return (
            (dataset,) if dataset else (),
            (split,) if split else (),
            self.limit.value() or None,
            None if self.seed.value() < 0 else self.seed.value(),
        )

    def chosen_models(self) -> tuple[ModelSpec, ...]:
        """The run's models; ThoughtDeskError when there is none yet."""
        models = tuple(self.models.specs())
        if not models:
            tab = self.models_tab.replace("&", "")
            raise ThoughtDeskError(f"Add at least one {self.model_noun} in the {tab} tab.")
        return models

    def cot_selection(self, only: Only = "all") -> CotSelection:
        """The selection as the generated CoTs it chooses (``only``: all, correct, incorrect)."""
        datasets, splits, limit, seed = self.selection()
        return CotSelection(
            self.collection.currentText(), datasets=datasets, splits=splits, only=only, limit=limit, seed=seed
        )

    # Planning -------------------------------------------------------------------------------

    def schedule_replan(self) -> None:
        """Plan again a moment after the last change; Start waits for that plan."""
        if hasattr(self, "_timer"):
            self.start_button.setEnabled(False)
            self._timer.start()

    def replan(self) -> Task[P] | None:
        """Plan again in a worker from the current choices; ``plan_ready`` or ``plan_failed`` after."""
        self._generation += 1
        generation = self._generation
        try:
            job = self.plan_job()
        except ThoughtDeskError as error:
            self._failed(generation, error)
            return None
        path, check = self.library_path, self.check_plan

        def work(_ctx: TaskContext) -> P:
            with Library.open(path) as lib:
                plan = job(lib)
            return check(plan)

        self.summary.setText("Planning…")
        return (
            Task(work)
            .on_success(lambda plan: self._planned(generation, plan))
            .on_failure(lambda error: self._failed(generation, error))
            .owned_by(self, self._tasks)
            .start()
        )

    def _planned(self, generation: int, plan: P) -> None:
        if generation != self._generation:
            return  # an older plan finishing after a newer one was asked for
        self.plan, self.error = plan, ""
        self.summary.setStyleSheet("")
        self.summary.setText(self.describe(plan))
        self.preview.setPlainText(self.previews_text(plan))
        self.start_button.setEnabled(getattr(plan, "total", 0) > 0)
        self.plan_ready.emit(plan)

    def _failed(self, generation: int, error: BaseException) -> None:
        if generation != self._generation:
            return
        self.plan = None
        self.error = str(error) if isinstance(error, ThoughtDeskError) else f"{type(error).__name__}: {error}"
        self.summary.setStyleSheet(ERROR_STYLE)
        self.summary.setText(self.error)
        self.preview.setPlainText("")
        self.start_button.setEnabled(False)
        self.plan_failed.emit(self.error)

    # Starting -------------------------------------------------------------------------------

    def limits(self) -> RunLimits:
        return RunLimits(concurrency=self.concurrency.value(), max_attempts=self.attempts.value())

    def start(self) -> Task[int] | None:
        """Write the planned run (nothing is sent yet) in a worker, then emit ``run_created``."""
        plan = self.plan
        if plan is None or self._timer.isActive():
            return None
        self.start_button.setEnabled(False)
        self.summary.setText("Writing the run's requests…")
        path, name, limits = self.library_path, self.run_name.text().strip() or None, self.limits()
        create = self.create_planned_run

        def work(_ctx: TaskContext) -> int:
            with Library.open(path) as lib:
                return create(lib, plan, name)

        def created(run_id: int) -> None:
            self.run_created.emit(run_id, limits)
            self.accept()

        return (
            Task(work)
            .on_success(created)
            .on_failure(lambda error: self._failed(self._generation, error))
            .owned_by(self, self._tasks)
            .start()
        )
