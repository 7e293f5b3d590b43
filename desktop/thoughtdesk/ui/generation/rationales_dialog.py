"""Generate > Mine rationales…: the GUI counterpart of ``thoughtdesk rationales extract|filter|export``.

A collection, a source, an extraction model and a scorer (``PROVIDER:MODEL`` with an optional
server address), the markers and tau. Extract and Filter are runs of the generation engine
(core/rationales/setup.py: listed in the Runs tab, resumable there too), executed here in a
background :class:`Task` with progress and Cancel (work already committed is kept; running
again resumes the cancelled run). After a
filter pass, a histogram of the loss reductions with the tau line and the kept/dropped counts
(the paper's Table 1); changing tau re-counts without calling any model. Texts from models are
never shown as rich text (the only model-derived text here is in error messages, shown plain).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np
import pyqtgraph as pg

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.defaults import default_chat
from thoughtdesk.core.generation.fragments import FragmentLibrary
from thoughtdesk.core.generation.runs import ModelSpec, RunControl, ScorerReport, scorer_report
from thoughtdesk.core.generation.scoring import DEFAULT_DECAY
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.export import export_rationales
from thoughtdesk.core.rationales.extraction import Markers
from thoughtdesk.core.rationales.filtering import DEFAULT_TAU, TAU_PRESETS
from thoughtdesk.core.rationales.mining import FilterTable, PassSummary, filter_table, histogram
from thoughtdesk.core.rationales.setup import (
    DEFAULT_EXTRACT_CONCURRENCY,
    DEFAULT_FILTER_CONCURRENCY,
    MAX_CONCURRENCY,
    ExtractionSetup,
    FilterSetup,
    extraction_setup,
    filter_setup,
    run_extraction,
    run_filter,
)
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.qt import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTimer,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.settings.model_choice import RegisteredNamesCompleter
from thoughtdesk.ui.widgets.labels import plain_label, set_plain_text
from thoughtdesk.ui.widgets.signals import blocked

SOURCES = ("reference", "generated")
#: The scorer line's colour when the scorer cannot score.
PROBLEM_STYLE = "color: #b3261e;"


def run_cancellable(make: Callable[[RunControl], Awaitable[PassSummary]], context: TaskContext) -> PassSummary:
    """Run the coroutine ``make(control)`` (a pass: runs of the engine) on a new event loop;
    when the task is cancelled, cancel its run through ``control`` (calls in flight finish and
    are stored; the run is left ``cancelled``, and the next pass resumes it)."""

    async def main() -> PassSummary:
        control = RunControl()
        work = asyncio.ensure_future(make(control))
        while not work.done():
            if context.cancelled():
                control.cancel()
            await asyncio.wait({work}, timeout=0.1)
        summary = await work
        if control.cancelled:
            raise ThoughtDeskError("cancelled; what finished is kept, and running again resumes")
        return summary

    return asyncio.run(main())


class RationalesDialog(QDialog):
    """Mine rationales from a collection (non-modal; one at a time)."""

    def __init__(
        self, library_path: Path, collections: list[str], fragments: FragmentLibrary, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Mine rationales")
        self.setObjectName("rationalesDialog")
        self.library_path = library_path
        self.fragments = fragments
        self.task: Task[object] | None = None
        self.table: FilterTable | None = None

        self.collection = QComboBox(objectName="rationaleCollection")
        self.collection.addItems(collections)
        self.source = QComboBox(objectName="rationaleSource", editable=True)
        self.source.addItems(SOURCES)
        self.source.setToolTip("reference CoTs, generated CoTs, or the path of a .txt or .jsonl file")
        browse = QPushButton("File…", objectName="rationaleBrowse")
        browse.clicked.connect(self._browse)
        source_row = QHBoxLayout()
        source_row.addWidget(self.source, 1)
        source_row.addWidget(browse)
        self.model = QLineEdit(
            objectName="rationaleModel",
            placeholderText="openai:NAME, llamacpp:NAME (a registered model) or a .gguf path",
        )
        self.model_url = QLineEdit(
            objectName="rationaleModelUrl",
            placeholderText="server address (optional; several: a pool, comma-separated)",
        )
        self.scorer = QLineEdit(objectName="rationaleScorer", placeholderText="a model that can score text")
        # The model library's names (Edit ▸ Models…) offered as llamacpp:NAME in both lines.
        self.model_names = RegisteredNamesCompleter(self.model)
        self.scorer_names = RegisteredNamesCompleter(self.scorer)
        self.scorer_url = QLineEdit(
            objectName="rationaleScorerUrl",
            placeholderText="server address (optional; several: a pool, comma-separated)",
        )
        self._note_timer = QTimer(self, singleShot=True, interval=400)
        self._note_timer.timeout.connect(self.check_scorer)
        self.n_ctx = QSpinBox(objectName="rationaleNCtx", minimum=64, maximum=1_048_576, value=2048, singleStep=512)
        self.n_ctx.setToolTip(
            "Context size in tokens of a local .gguf model; a local scorer keeps the log-probs of every "
            "position, so a smaller context needs less memory"
        )
        self.n_ctx.valueChanged.connect(lambda _: self._note_timer.start())
        self.markers = QLineEdit("<BOT>...<EOT>", objectName="rationaleMarkers")
        #: The prompt the scorer sees (core/rationales/filtering.py, docs/rationales.md).
        self.scoring_layout = QComboBox(objectName="rationaleLayout")
        self.scoring_layout.addItem("ThoughtDesk: raw text, the rationale between the markers", "thoughtdesk")
        self.scoring_layout.addItem('RATIONALYST paper: Llama-3 chat prompt, preceding + ". " + rationale', "paper")
        self.scoring_layout.setToolTip(
            "How the filter shows a rationale to the scorer. The paper's layout is its filter script's chat "
            "prompt (the template's tokens are scored too); its tau values 1.2 / 0.5 were calibrated for it. "
            "Scores of the two layouts are kept apart."
        )
        #: The name the last filter pass stored its scores under (export uses the same scores).
        self.scored_by: str | None = None
        self.preset = QComboBox(objectName="rationalePreset")
        for name, value in TAU_PRESETS.items():
            self.preset.addItem(f"{name} ({value:g})", value)
        self.preset.addItem("custom", None)
        self.tau = QDoubleSpinBox(objectName="rationaleTau", minimum=-100.0, maximum=100.0, singleStep=0.1, decimals=2)
        self.tau.setValue(DEFAULT_TAU)
        self.preset.currentIndexChanged.connect(self._preset_chosen)
        self.tau.valueChanged.connect(self._tau_changed)
        tau_row = QHBoxLayout()
        tau_row.addWidget(self.preset)
        tau_row.addWidget(self.tau)

        # The passes' concurrency, as `rationales extract|filter --concurrency` (core/rationales/setup.py).
        self.extract_concurrency = QSpinBox(
            objectName="rationaleExtractConcurrency",
            minimum=1,
            maximum=MAX_CONCURRENCY,
            value=DEFAULT_EXTRACT_CONCURRENCY,
        )
        self.filter_concurrency = QSpinBox(
            objectName="rationaleFilterConcurrency",
            minimum=1,
            maximum=MAX_CONCURRENCY,
            value=DEFAULT_FILTER_CONCURRENCY,
        )
        for box in (self.extract_concurrency, self.filter_concurrency):
            box.setToolTip("Requests in flight in all (a pool of servers shares them)")
        concurrency_row = QHBoxLayout()
        concurrency_row.addWidget(QLabel("extraction"))
        concurrency_row.addWidget(self.extract_concurrency)
        concurrency_row.addWidget(QLabel("filtering"))
        concurrency_row.addWidget(self.filter_concurrency)
        concurrency_row.addStretch(1)

        form = QFormLayout()
        form.addRow("Collection", self.collection)
        form.addRow("Source", source_row)
        form.addRow("Extraction model", self.model)
        form.addRow("", self.model_url)
        form.addRow("Scorer", self.scorer)
        form.addRow("", self.scorer_url)
        #: What the scorer can do: a local model's scoring copy and its memory, or why it cannot score.
        self.scorer_note = plain_label("", name="rationaleScorerNote", keep_height=True)
        form.addRow("", self.scorer_note)
        form.addRow("Local context (tokens)", self.n_ctx)
        self.scorer_report: ScorerReport | None = None
        self._note_generation = 0
        self.scorer.textChanged.connect(lambda _: self._note_timer.start())
        self.scorer_url.textChanged.connect(lambda _: self._note_timer.start())
        form.addRow("Markers", self.markers)
        form.addRow("Scoring layout", self.scoring_layout)
        form.addRow("Keep if loss reduction ≥", tau_row)
        form.addRow("Requests in flight", concurrency_row)

        self.extract_button = QPushButton("&Extract", objectName="rationaleExtract")
        self.filter_button = QPushButton("&Filter", objectName="rationaleFilter")
        self.export_button = QPushButton("E&xport…", objectName="rationaleExport")
        self.cancel_button = QPushButton("Cancel", objectName="rationaleCancel", enabled=False)
        self.extract_button.clicked.connect(self.start_extract)
        self.filter_button.clicked.connect(self.start_filter)
        self.export_button.clicked.connect(self._export)
        self.cancel_button.clicked.connect(self.cancel)
        buttons = QHBoxLayout()
        for button in (self.extract_button, self.filter_button, self.export_button, self.cancel_button):
            buttons.addWidget(button)
        buttons.addStretch(1)

        self.progress = QProgressBar(objectName="rationaleProgress")
        self.status = plain_label("", name="rationaleStatus")
        self.counts = plain_label("No rationales scored yet.", name="rationaleCounts")
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("rationaleHistogram")
        self.plot.setMinimumHeight(180)
        self.plot.setLabel("bottom", "loss reduction (nats, 0.9 decay)")
        self.plot.setLabel("left", "rationales")
        self.bars = pg.BarGraphItem(x=[0], height=[0], width=1, brush="#4C72B0")
        self.plot.addItem(self.bars)
        self.tau_line = pg.InfiniteLine(pos=DEFAULT_TAU, angle=90, pen=pg.mkPen("#C44E52", width=2))
        self.plot.addItem(self.tau_line)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.counts)
        layout.addWidget(self.plot, 1)
        self.resize(720, 640)

    # --- settings -------------------------------------------------------------------------

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Documents to mine", "", "Documents (*.txt *.jsonl)")
        if path:
            self.source.setCurrentText(path)

    def _preset_chosen(self) -> None:
        value = self.preset.currentData()
        if value is not None:
            self.tau.setValue(float(value))

    def _tau_changed(self, value: float) -> None:
        self.tau_line.setPos(value)
        if self.preset.currentData() != value:
            index = next((i for i in range(self.preset.count()) if self.preset.itemData(i) == value), None)
            with blocked(self.preset):
                self.preset.setCurrentIndex(index if index is not None else self.preset.count() - 1)
        self._show_counts()

    def _spec(self, text: str, url: str, endpoint: str, *, chat: bool = False) -> ModelSpec:
        """The model in ``text``; ``chat``: the rewriting model, sent prompts as the provider's
        default says (:func:`~thoughtdesk.core.generation.defaults.default_chat`, as ``generate``
        and ``rationales extract``); else a scorer, always a raw completion."""
        if not text.strip():
            raise ThoughtDeskError("name a model as PROVIDER:MODEL, e.g. llamacpp:/path/model.gguf")
        options: dict[str, object] = {"endpoint": endpoint, "timeout": 300.0, "n_ctx": self.n_ctx.value()}
        options["chat"] = default_chat(text.strip().partition(":")[0], endpoint) if chat else False
        # Several addresses separated by commas: a server pool (docs/serving.md).
        urls = [part.strip() for part in url.split(",") if part.strip()]
        if urls:
            options["base_url"] = urls[0]
            options["more_base_urls"] = tuple(urls[1:])
        return ModelSpec.parse(text.strip(), **options)

    def check_scorer(self) -> Task[ScorerReport] | None:
        """Say under the scorer what it can do (in a worker: a GGUF's vocabulary is read)."""
        self._note_generation += 1
        generation = self._note_generation
        try:
            spec = self._spec(self.scorer.text(), self.scorer_url.text(), "completions")
        except ThoughtDeskError:
            self.scorer_report = None
            self.scorer_note.setStyleSheet("")
            self.scorer_note.setText("")
            return None
        self.scorer_note.setStyleSheet("")
        set_plain_text(self.scorer_note, f"checking {spec.label}…")

        def shown(report: ScorerReport) -> None:
            if generation == self._note_generation:
                self.scorer_report = report
                self._show_report(report)

        task: Task[ScorerReport] = Task(lambda _ctx: scorer_report(spec))
        return task.on_success(shown).owned_by(self).start()

    def _show_report(self, report: ScorerReport) -> None:
        self.scorer_note.setStyleSheet("" if report.can_score else PROBLEM_STYLE)
        text = report.detail if report.can_score else f"{report.detail}. Filtering cannot start with it."
        set_plain_text(self.scorer_note, text)

    # --- work -----------------------------------------------------------------------------

    def extraction_setup(self) -> ExtractionSetup:
        """The extraction pass the dialog's choices ask for (core/rationales/setup.py, as the CLI)."""
        return extraction_setup(
            self._spec(self.model.text(), self.model_url.text(), "chat", chat=True),
            self.fragments,
            source=self.source.currentText().strip(),
            markers=Markers.parse(self.markers.text()),
            concurrency=self.extract_concurrency.value(),
        )

    def filter_setup(self) -> FilterSetup:
        """The filter pass the dialog's choices ask for (core/rationales/setup.py, as the CLI)."""
        return filter_setup(
            self._spec(self.scorer.text(), self.scorer_url.text(), "completions"),
            layout=str(self.scoring_layout.currentData()),
            markers=Markers.parse(self.markers.text()),
            concurrency=self.filter_concurrency.value(),
        )

    def start_extract(self) -> None:
        try:
            setup = self.extraction_setup()
        except ThoughtDeskError as error:
            self._report(str(error))
            return
        collection, path = self.collection.currentText(), self.library_path

        def work(context: TaskContext) -> PassSummary:
            async def make(control: RunControl) -> PassSummary:
                with Library.open(path, create=False) as lib:
                    return await run_extraction(lib, collection, setup, progress=context.progress, control=control)

            return run_cancellable(make, context)

        self._start(work, lambda summary: self._done("Extraction", summary))

    def start_filter(self) -> None:
        try:
            setup = self.filter_setup()
        except ThoughtDeskError as error:
            self._report(str(error))
            return
        collection, path, label = self.collection.currentText(), self.library_path, setup.label

        def work(context: TaskContext) -> tuple[PassSummary, FilterTable]:
            async def make(control: RunControl) -> PassSummary:
                with Library.open(path, create=False) as lib:
                    return await run_filter(lib, collection, setup, progress=context.progress, control=control)

            summary = run_cancellable(make, context)
            with Library.open(path, create=False) as lib:
                table = filter_table(lib, collection, label, tau=DEFAULT_TAU, decay=setup.decay)
            return summary, table

        def shown(result: tuple[PassSummary, FilterTable]) -> None:
            summary, table = result
            self.table = table
            self.scored_by = label
            self._draw()
            self._done("Filtering", summary)

        self._start(work, shown)

    def _start(self, work: Callable[[TaskContext], object], on_success: Callable) -> None:
        self._set_running(True)
        self.status.setText("Working… (Cancel keeps what has finished)")
        task: Task[object] = Task(work)
        task.on_progress(self._progress).on_success(on_success).on_failure(self._failed)
        task.on_finished(lambda: self._set_running(False)).owned_by(self).start()
        self.task = task

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _progress(self, done: int, total: int) -> None:
        self.progress.setMaximum(max(total, 1))
        self.progress.setValue(done)

    def _set_running(self, running: bool) -> None:
        for button in (self.extract_button, self.filter_button, self.export_button):
            button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if not running:
            self.task = None

    def _done(self, what: str, summary: PassSummary) -> None:
        text = f"{what}: {summary.done} done now, {summary.skipped} done before, {summary.failed} failed of {summary.total}."
        if summary.failed:
            text += " " + "; ".join(summary.errors[:2]) + " Run again to retry the failed ones."
        self.status.setText(text)

    def _failed(self, error: BaseException) -> None:
        self._report(str(error) if isinstance(error, ThoughtDeskError) else f"{type(error).__name__}: {error}")

    def _report(self, text: str) -> None:
        self.status.setText(text)

    # --- results --------------------------------------------------------------------------

    def _draw(self) -> None:
        table = self.table
        bins = histogram(table.reductions, bins=20) if table else []
        if bins:
            centres = np.array([(low + high) / 2 for low, high, _ in bins])
            width = max(bins[0][1] - bins[0][0], 1e-6) * 0.9
            self.bars.setOpts(x=centres, height=np.array([count for *_, count in bins], dtype=float), width=width)
        self._show_counts()

    def _show_counts(self) -> None:
        table = self.table
        if table is None or not table.scored:
            return
        tau = self.tau.value()
        kept = table.kept_at(tau)
        share = 100 * kept / table.scored
        self.counts.setText(
            f"{table.documents} documents rewritten, {table.valid_documents} valid; {table.rationales} rationales, "
            f"{table.scored} scored. At tau {tau:g}: {kept} kept ({share:.1f} %), {table.scored - kept} dropped."
        )

    def _export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export kept rationales", "rationales.jsonl", "JSON Lines (*.jsonl)"
        )
        if path:
            self.export_to(Path(path))

    def export_to(self, path: Path) -> None:
        """Write the rationales kept at the current tau to ``path`` (chat JSONL)."""
        try:
            with Library.open(self.library_path, create=False) as lib:
                count = export_rationales(
                    lib,
                    self.collection.currentText(),
                    path,
                    tau=self.tau.value(),
                    decay=DEFAULT_DECAY,
                    scorer=self.scored_by,
                    force=True,
                )
        except ThoughtDeskError as error:
            self._report(str(error))
            return
        self.status.setText(f"{count} rationales written to {path}.")
