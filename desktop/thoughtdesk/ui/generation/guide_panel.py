"""The run planner's Guide tab: write each CoT one step at a time, guided by rationales
(RATIONALYST), or as a baseline (plain step-by-step, process supervision); docs/rationales.md.

The helper models (rationale, scorer, rater) use the same model form as the Models tab. The
scorer must give log-probs of given text: the tab says which backends can, and what the chosen
scorer can do (checked in a worker: an in-process GGUF's scoring copy and its memory, or why it
cannot score).
"""

from __future__ import annotations

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.defaults import TEMPERATURE_RANGE, ModelDefaults
from thoughtdesk.core.generation.runs import GuideSpec, ModelSpec, ScorerReport, scorer_report
from thoughtdesk.core.generation.runs.spec import as_scorer
from thoughtdesk.core.settings.network import is_offline
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.generation.model_form import ModelForm
from thoughtdesk.ui.qt import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label, set_plain_text

#: (label, GuideSpec.method or None for an ordinary run)
METHODS: tuple[tuple[str, str | None], ...] = (
    ("Off (one request per CoT)", None),
    ("RATIONALYST (rationales)", "rationalyst"),
    ("Step-by-step (baseline)", "stepwise"),
    ("Process supervision (rater)", "process"),
)
#: (label, GuideSpec.rater_style): how a process guide's rater judges candidates (docs/steps.md).
RATER_STYLES: tuple[tuple[str, str], ...] = (
    ("Rating 0-3 (rater prompt)", "rating"),
    ("Step judge (ProcessBench's template)", "processbench"),
)
SCORING_NOTE = (
    "Implicit supervision needs a scorer that gives the log-probs of given text: llama.cpp in-process "
    "(a second copy of the model that keeps the logits of every position) or an OpenAI-compatible server "
    "whose /v1/completions echoes log-probs (vLLM, llama-cpp-python's server). llama.cpp's own "
    "llama-server, chat-only APIs and Anthropic cannot score."
)
#: The scorer line's colour when the chosen scorer cannot score.
PROBLEM_STYLE = "color: #b3261e;"


class GuidePanel(QWidget):
    """Edits the run's :class:`GuideSpec` (None: an ordinary run); ``changed`` on every edit."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.method = QComboBox(objectName="guideMethod")
        for label, value in METHODS:
            self.method.addItem(label, value)
        self.supervision = QComboBox(objectName="guideSupervision")
        self.supervision.addItem("Implicit (scorer picks)", "implicit")
        self.supervision.addItem("Explicit (rationale in context)", "explicit")
        self.supervision.setToolTip(
            "Implicit: the scorer keeps the candidate the rationale makes likeliest. "
            "Explicit: the rationale goes into the agent's context."
        )
        self.rater_style = QComboBox(objectName="guideRaterStyle")
        for label, value in RATER_STYLES:
            self.rater_style.addItem(label, value)
        self.rater_style.setToolTip(
            "Process supervision: the rater rates each candidate 0-3, or a step judge reads ProcessBench's "
            "prompt over the steps so far and the candidate (1: no wrong step, 0: the candidate is the first "
            "wrong one, 0.5: an earlier step is)."
        )
        self.decay = QCheckBox("Weights 0.9^i in the mean log-prob", objectName="guideDecay")
        self.candidates = QSpinBox(objectName="guideCandidates", minimum=1, maximum=32, value=3)
        self.max_steps = QSpinBox(objectName="guideMaxSteps", minimum=1, maximum=200, value=15)
        self.step_temperature = QDoubleSpinBox(
            objectName="guideStepTemperature",
            minimum=TEMPERATURE_RANGE[0],
            maximum=TEMPERATURE_RANGE[1],
            singleStep=0.1,
            value=0.7,
        )
        self.step_max_tokens = QSpinBox(objectName="guideStepMaxTokens", minimum=1, maximum=4096, value=64)
        self.scorer_same = QCheckBox("The scorer is the rationale model", objectName="guideScorerSame")
        self.scorer_same.setChecked(True)
        self.rationale_form = ModelForm()
        self.scorer_form = ModelForm()
        self.rater_form = ModelForm()
        self.helpers = QTabWidget(objectName="guideHelpers")
        for form, title in (
            (self.rationale_form, "Rationale model"),
            (self.scorer_form, "Scorer model"),
            (self.rater_form, "Rater model"),
        ):
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(form)
            self.helpers.addTab(scroll, title)

        options = QFormLayout()
        options.addRow("&Guide", self.method)
        options.addRow("Super&vision", self.supervision)
        options.addRow("", self.decay)
        options.addRow("&Rater style", self.rater_style)
        options.addRow("&Candidates per step", self.candidates)
        options.addRow("Ma&x steps", self.max_steps)
        options.addRow("Step &temperature", self.step_temperature)
        options.addRow("Tokens per step", self.step_max_tokens)
        options.addRow("", self.scorer_same)
        layout = QVBoxLayout(self)
        layout.addLayout(options)
        note = plain_label(SCORING_NOTE, name="guideScoringNote", keep_height=True)
        layout.addWidget(note)
        #: What the chosen scorer can do (its memory, or why it cannot score), checked in a worker.
        self.scorer_status = plain_label("", name="guideScorerStatus", keep_height=True)
        layout.addWidget(self.scorer_status)
        layout.addWidget(self.helpers, 1)
        self.report: ScorerReport | None = None  # the last scorer checked (None: none to check)
        self._check_generation = 0
        self._tasks: set[Task[object]] = set()
        self._check_timer = QTimer(self, singleShot=True, interval=300)
        self._check_timer.timeout.connect(self.check_scorer)
        self.changed.connect(self._check_timer.start)

        self.method.currentIndexChanged.connect(lambda _: self._update())
        self.supervision.currentIndexChanged.connect(lambda _: self._update())
        self.rater_style.currentIndexChanged.connect(lambda _: self.changed.emit())
        self.scorer_same.toggled.connect(lambda _: self._update())
        for box in (self.candidates, self.max_steps, self.step_max_tokens):
            box.valueChanged.connect(lambda _: self.changed.emit())
        self.step_temperature.valueChanged.connect(lambda _: self.changed.emit())
        self.decay.toggled.connect(lambda _: self.changed.emit())
        for model_form in (self.rationale_form, self.scorer_form, self.rater_form):
            for combo in (model_form.provider, model_form.endpoint, model_form.template):
                combo.currentIndexChanged.connect(lambda _: self.changed.emit())
            for line in (model_form.model_name, model_form.base_url, model_form.gguf_path):
                line.textChanged.connect(lambda _: self.changed.emit())
            model_form.more_base_urls.textChanged.connect(self.changed.emit)
            model_form.completion_template.textChanged.connect(self.changed.emit)
            # The context size changes what a local scorer's copy costs; the rest what is planned.
            for spin in (
                model_form.n_ctx,
                model_form.n_threads,
                model_form.n_gpu_layers,
                model_form.temperature,
                model_form.max_tokens,
                model_form.seed,
                model_form.timeout,
            ):
                spin.valueChanged.connect(lambda _: self.changed.emit())
        self._update()

    def start_from(self, defaults: ModelDefaults) -> None:
        """Each helper model (rationale, scorer, rater) starts as the run's first model does: the
        local model of Settings, else an enabled provider (offline: only one on this machine)."""
        for form in (self.rationale_form, self.scorer_form, self.rater_form):
            form.start_from(defaults, efforts=False)

    def follow_main_model(self, main: ModelSpec | None) -> None:
        """The run's main model is a local GGUF: a helper form with no GGUF file yet gets its file
        (choosing Local then needs no browsing), and one still on a remote provider while offline
        mode is on switches to it."""
        if main is None or main.provider != "llamacpp":
            return
        for form in (self.rationale_form, self.scorer_form, self.rater_form):
            if not form.gguf_path.text().strip():
                form.gguf_path.setText(main.model)
            if is_offline() and form.provider.currentData() != "llamacpp":
                form.provider.setCurrentIndex(form.provider.findData("llamacpp"))

    def _update(self) -> None:
        """Enable what the chosen guide uses, then re-plan."""
        method = self.method.currentData()
        rationalyst = method == "rationalyst"
        implicit = rationalyst and self.supervision.currentData() == "implicit"
        for widget in (self.supervision, self.scorer_same):
            widget.setEnabled(rationalyst)
        self.decay.setEnabled(implicit)
        for box in (self.max_steps, self.step_temperature, self.step_max_tokens):
            box.setEnabled(method is not None)
        self.candidates.setEnabled(implicit or method == "process")
        self.rater_style.setEnabled(method == "process")
        self.helpers.setTabEnabled(0, rationalyst)
        self.helpers.setTabEnabled(1, implicit and not self.scorer_same.isChecked())
        self.helpers.setTabEnabled(2, method == "process")
        self.changed.emit()

    def guide(self) -> GuideSpec | None:
        """The guide chosen (None: off); RunSpecError or ModelFileError saying what to fix."""
        method = self.method.currentData()
        if method is None:
            return None
        rationale: ModelSpec | None = None
        scorer: ModelSpec | None = None
        rater: ModelSpec | None = None
        if method == "rationalyst":
            rationale = self.rationale_form.spec()
            if self.supervision.currentData() == "implicit" and not self.scorer_same.isChecked():
                scorer = self.scorer_form.spec()
        if method == "process":
            rater = self.rater_form.spec()
        return GuideSpec(
            method=method,
            supervision=self.supervision.currentData(),
            rationale_model=rationale,
            scorer_model=scorer,
            rater_model=rater,
            candidates=self.candidates.value(),
            max_steps=self.max_steps.value(),
            step_temperature=self.step_temperature.value(),
            step_max_tokens=self.step_max_tokens.value(),
            decay=0.9 if self.decay.isChecked() and self.decay.isEnabled() else None,
            rater_style=self.rater_style.currentData() if method == "process" else "rating",
        )

    # --- the scorer -----------------------------------------------------------------------

    def scorer_model(self) -> ModelSpec | None:
        """The model that would score candidates, as it is asked (None: the guide scores
        nothing); RunSpecError or ModelFileError when its form is incomplete."""
        if self.method.currentData() != "rationalyst" or self.supervision.currentData() != "implicit":
            return None
        form = self.rationale_form if self.scorer_same.isChecked() else self.scorer_form
        return as_scorer(form.spec())

    def check_scorer(self) -> Task[ScorerReport] | None:
        """Say in the tab what the chosen scorer can do; the check runs in a worker (reading a
        GGUF's vocabulary takes about a second)."""
        self._check_generation += 1
        generation = self._check_generation
        try:
            model = self.scorer_model()
        except ThoughtDeskError:
            model = None  # the form says what is missing (in the plan's summary)
        if model is None:
            self.report = None
            self.scorer_status.setStyleSheet("")
            self.scorer_status.setText("")
            return None
        self.scorer_status.setStyleSheet("")
        set_plain_text(self.scorer_status, f"Scorer: checking {model.label}…")

        def shown(report: ScorerReport) -> None:
            if generation != self._check_generation:
                return  # the choice changed meanwhile
            self.report = report
            self.scorer_status.setStyleSheet("" if report.can_score else PROBLEM_STYLE)
            text = f"Scorer: {report.detail}"
            if not report.can_score:
                text += ". Implicit supervision cannot start with it: choose another scorer or explicit supervision."
            set_plain_text(self.scorer_status, text)

        def work(_ctx: TaskContext) -> ScorerReport:
            return scorer_report(model)

        return Task(work).on_success(shown).owned_by(self, self._tasks).start()
