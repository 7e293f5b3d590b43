"""The run planner's Guide tab: write each CoT one step at a time, guided by rationales
(RATIONALYST), or as a baseline (plain step-by-step, process supervision); docs/rationales.md.

The helper models (rationale, scorer, rater) use the same model form as the Models tab. The
scorer must give log-probs of given text, and the tab says which backends can.
"""

from __future__ import annotations

from thoughtdesk.core.generation.defaults import TEMPERATURE_RANGE
from thoughtdesk.core.generation.runs import GuideSpec, ModelSpec
from thoughtdesk.ui.generation.model_form import ModelForm
from thoughtdesk.ui.qt import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label

#: (label, GuideSpec.method or None for an ordinary run)
METHODS: tuple[tuple[str, str | None], ...] = (
    ("Off (one request per CoT)", None),
    ("RATIONALYST (rationales)", "rationalyst"),
    ("Step-by-step (baseline)", "stepwise"),
    ("Process supervision (rater 0-3)", "process"),
)
SCORING_NOTE = (
    "Implicit supervision needs a scorer that gives the log-probs of given text: llama.cpp in-process "
    "(a second copy of the model with logits for every token; its memory is shown when it loads) or an "
    "OpenAI-compatible server whose /v1/completions echoes log-probs (vLLM, llama-cpp-python's server). "
    "llama.cpp's own llama-server, chat-only APIs and Anthropic cannot score: the run stops and says so."
)


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
        options.addRow("&Candidates per step", self.candidates)
        options.addRow("Ma&x steps", self.max_steps)
        options.addRow("Step &temperature", self.step_temperature)
        options.addRow("Tokens per step", self.step_max_tokens)
        options.addRow("", self.scorer_same)
        layout = QVBoxLayout(self)
        layout.addLayout(options)
        note = plain_label(SCORING_NOTE, name="guideScoringNote", keep_height=True)
        layout.addWidget(note)
        layout.addWidget(self.helpers, 1)

        self.method.currentIndexChanged.connect(lambda _: self._update())
        self.supervision.currentIndexChanged.connect(lambda _: self._update())
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
        self._update()

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
        )
