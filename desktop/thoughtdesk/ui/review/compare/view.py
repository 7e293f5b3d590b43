"""The compare view: one sample's reference CoT and generated CoTs side by side, highlighted.

* Columns (one per CoT, all in one scroll area, so they scroll together) or stacked cards.
* Sentences aligned across CoTs share a background colour; the threshold slider re-groups live
  (the similarity matrix is computed once per sample, moving the slider only replays merges).
* A word-diff pane between any two CoTs (:mod:`thoughtdesk.ui.review.compare.diff_pane`).
* Per CoT: model, prompt keys, length, number of steps, extracted answer, correct or not.
* Filters by model, prompt and correctness (they hide cards; colours do not change).

Speed (issue 6: < 100 ms to show the next sample of 60 CoTs): panels are pooled and reused,
never rebuilt; only panels in view are painted at once, the others get an estimated height and
are painted a few at a time when the event loop is idle (or at once when scrolled to).

Long text (issue 15): the caller cuts each CoT to ``cot_panel.REVIEW_CHARS`` characters. Sentence
similarity grows with the square of the number of sentences (0.43 s for 60 CoTs of 2,000
characters), so it does not run on the GUI thread beyond a small size: up to
:data:`SYNC_SIMILARITY_CHARS` it is computed in place, up to :data:`SIMILARITY_CHARS` in a worker
(the texts are shown plain meanwhile), and beyond that not at all, which the view says. The word
diff has limits of its own (:mod:`~thoughtdesk.ui.review.compare.diff_pane`).

Untrusted text: every document is built by :mod:`thoughtdesk.ui.review.compare.safe_text` from escaped HTML
only, span marks are character formats (not markup), and every label is plain text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from thoughtdesk.core.review.compare.colours import Theme
from thoughtdesk.core.review.compare.similarity import (
    DEFAULT_THRESHOLD,
    Alignment,
    CotInput,
    SimilarityMatrix,
)
from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.qt import (
    QComboBox,
    QEvent,
    QHBoxLayout,
    QPalette,
    QScrollArea,
    QSlider,
    QSplitter,
    Qt,
    QTimer,
    QToolButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.review.compare.cot_panel import CotPanel, CotView, FittedTextView, SpanMark, numbered_label
from thoughtdesk.ui.review.compare.diff_pane import WordDiffPane
from thoughtdesk.ui.review.compare.painting import HighlightPainter
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked

__all__ = ["CompareView", "CotPanel", "CotView", "FittedTextView", "LayoutMode", "SpanMark"]

LayoutMode = Literal["columns", "cards"]
ALL = "(all)"
#: Column widths in the columns layout: as many as :data:`FIT_COLUMNS` CoTs share the width
#: (at 1366x768 a reference and three CoTs fit beside the annotation panel), each between these bounds.
MIN_COLUMN_WIDTH = 215
MAX_COLUMN_WIDTH = 460
FIT_COLUMNS = 4
#: Characters of CoT text in all up to which the similarity is computed on the GUI thread (~50 ms).
SYNC_SIMILARITY_CHARS = 40_000
#: Up to this many it is computed in a worker; beyond, the CoTs are shown without highlighting
#: (the score matrix would take seconds and hundreds of megabytes).
SIMILARITY_CHARS = 300_000


def texts_of(cots: Sequence[CotView]) -> tuple[str, ...]:
    """The display texts of ``cots`` (a reference's steps joined by line breaks)."""
    return tuple(c.text if isinstance(c.text, str) else "\n".join(c.text) for c in cots)


class CompareView(QWidget):
    """Reference and generated CoTs of one sample with similarity highlighting and a word diff.

    Its :class:`HighlightPainter` (``painter``) paints the highlighted documents.
    """

    #: The threshold in percent after the slider moved.
    thresholdChanged = Signal(float)
    #: The user clicked into (or focused) the panel with this index.
    currentChanged = Signal(int)
    #: "Thinking" was switched: compare the thinking (True) or the visible texts.
    thinkingToggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None, threshold: float = DEFAULT_THRESHOLD) -> None:
        super().__init__(parent)
        self._cots: list[CotView] = []
        self._matrix: SimilarityMatrix | None = None
        self._pool: list[CotPanel] = []  # every panel ever made; the first len(_cots) are in use
        self._current = -1
        self._mode: LayoutMode = "columns"
        self.highlight_note = ""
        # Coalesce slider moves: a drag emits many values, only the last one is painted.
        self._regroup_timer = QTimer(self, singleShot=True, interval=0)
        self._regroup_timer.timeout.connect(self._apply_threshold)

        self.mode_box = QComboBox(objectName="layoutMode")
        self.mode_box.addItems(["Columns", "Cards"])
        self.mode_box.currentIndexChanged.connect(lambda i: self.set_layout_mode("columns" if i == 0 else "cards"))
        self.slider = QSlider(Qt.Orientation.Horizontal, objectName="thresholdSlider")
        self.slider.setRange(1, 100)
        self.slider.setValue(round(threshold))
        self.slider.setToolTip("Sentences at least this similar (percent of shared words) share a colour")
        self.slider.valueChanged.connect(self._on_slider)
        self.threshold_label = plain_label("", name="thresholdLabel", selectable=True, keep_height=True)
        self.groups_label = plain_label("", name="groupsLabel", selectable=True, keep_height=True)
        self.model_filter, self.prompt_filter, self.correct_filter = QComboBox(), QComboBox(), QComboBox()
        self.model_filter.setObjectName("modelFilter")
        self.prompt_filter.setObjectName("promptFilter")
        self.correct_filter.setObjectName("correctFilter")
        self.correct_filter.addItems([ALL, "correct", "incorrect"])
        for box in (self.model_filter, self.prompt_filter, self.correct_filter):
            box.currentIndexChanged.connect(self._apply_filters)
        self.model_label, self.prompt_label = (
            plain_label("Model", selectable=True, keep_height=True),
            plain_label("Prompt", selectable=True, keep_height=True),
        )

        bar = QHBoxLayout()
        for widget in (
            plain_label("Layout", selectable=True, keep_height=True),
            self.mode_box,
            plain_label("Similarity", selectable=True, keep_height=True),
            self.slider,
            self.threshold_label,
            self.groups_label,
            self.model_label,
            self.model_filter,
            self.prompt_label,
            self.prompt_filter,
            plain_label("Answer", selectable=True, keep_height=True),
            self.correct_filter,
        ):
            bar.addWidget(widget)
        bar.setStretchFactor(self.slider, 2)

        self.scroll_area = QScrollArea(objectName="compareScroll")
        self.scroll_area.setWidgetResizable(True)
        self._container = QWidget(objectName="compareContainer")
        self._container_layout: QHBoxLayout | QVBoxLayout = QHBoxLayout(self._container)
        self._container_layout.addStretch(1)
        self.scroll_area.setWidget(self._container)
        self.painter = HighlightPainter(self.scroll_area, self)

        self.diff = WordDiffPane()
        # The word diff starts folded away (the CoTs get the height on a laptop screen); the
        # button, or dragging the splitter's handle up, opens it. It is computed either way.
        self.diff_button = QToolButton(objectName="wordDiffButton")
        self.diff_button.setText("Word diff")
        self.diff_button.setCheckable(True)
        self.diff_button.setToolTip("Show the word diff of two CoTs below them")
        self.diff_button.toggled.connect(self.show_word_diff)
        bar.addWidget(self.diff_button)
        # Similarity and the word diff compare the visible texts; this compares the thinking.
        self.thinking_button = QToolButton(objectName="compareThinkingButton")
        self.thinking_button.setText("Thinking")
        self.thinking_button.setCheckable(True)
        self.thinking_button.setToolTip(
            "Compare the models' thinking instead of their visible answers (similarity and word diff); "
            "span labels stay on the visible text"
        )
        self.thinking_button.toggled.connect(self.thinkingToggled)
        bar.addWidget(self.thinking_button)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.scroll_area)
        self.splitter.addWidget(self.diff)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setCollapsible(1, True)
        self.splitter.setSizes([3000, 0])
        self.splitter.splitterMoved.connect(self._diff_dragged)
        self._column_width = MIN_COLUMN_WIDTH
        # Columns are fitted to the width once a resize has settled (a window drag resizes often).
        self._fit_timer = QTimer(self, singleShot=True, interval=60)
        self._fit_timer.timeout.connect(self._fit_columns)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.splitter)
        self._update_threshold_label()

    # ---- public API -------------------------------------------------------------------------

    @property
    def threshold(self) -> float:
        """The similarity threshold in percent."""
        return float(self.slider.value())

    @property
    def alignment(self) -> Alignment | None:
        """The current sentence groups (``None`` before :meth:`set_cots`)."""
        return self.painter.alignment

    @property
    def panels(self) -> list[CotPanel]:
        """The panels of the current sample, in CoT order."""
        return self._pool[: len(self._cots)]

    @property
    def cots(self) -> list[CotView]:
        return list(self._cots)

    def theme(self) -> Theme:
        """``"dark"`` when the text background is dark, else ``"light"``."""
        return "dark" if self.palette().color(QPalette.ColorRole.Base).lightness() < 128 else "light"

    def set_cots(
        self,
        cots: Sequence[CotView],
        matrix: SimilarityMatrix | None = None,
        notes: Sequence[str] | None = None,
        marks: Sequence[Sequence[SpanMark]] | None = None,
    ) -> None:
        """Show a new sample's CoTs (reference first, if any); computes the similarity once.

        ``matrix``: the similarity of exactly these CoTs, computed ahead (e.g. in a worker while
        the reviewer read the previous sample); ignored unless its texts match. Panels in view
        are painted before this returns; the rest follow when the event loop is idle (at most
        :data:`IDLE_BUDGET_MS` per step) or as soon as they are scrolled to. ``notes``: each
        panel's note line (as :meth:`set_note`), given here so notes are not hidden and shown again;
        ``marks``: each panel's span marks (as :meth:`set_marks`), so no panel is painted twice.
        """
        self._cots = list(cots)
        texts = texts_of(self._cots)
        #: Why the CoTs are not highlighted ("" when they are, or soon will be).
        self.highlight_note = ""
        if matrix is None or matrix.texts != texts:
            matrix = self._similarity([c.text for c in self._cots], texts)
        self._matrix = matrix
        alignment = self._matrix.groups(self.threshold)
        self._container.setUpdatesEnabled(False)  # one repaint at the end, not one per panel
        while len(self._pool) < len(self._cots):
            self._add_panel()
        for index, cot in enumerate(self._cots):
            panel = self._pool[index]
            note = notes[index] if notes is not None and index < len(notes) else ""
            steps = cot.steps if cot.steps is not None else len(self._matrix.sentences[index])
            panel.show_cot(index, cot, steps, note)
            if marks is not None and index < len(marks):
                panel.marks = tuple(marks[index])
            panel.set_current(False)
            panel.text_view.estimate(alignment.texts[index])
        for panel in self._pool[len(self._cots) :]:
            panel.setVisible(False)
        self._current = -1
        self.painter.restart(alignment, self.theme(), self.panels)
        self._fill_filter(self.model_filter, sorted({c.model for c in self._cots if c.model}))
        self._fill_filter(self.prompt_filter, sorted({k for c in self._cots for k in c.prompt_keys}))
        self.diff.set_choices([numbered_label(i, c) for i, c in enumerate(self._cots)])
        self._apply_filters(paint=False)
        self._fit_columns(settle=False)
        self._settle_geometry()
        self.scroll_area.horizontalScrollBar().setValue(0)
        self.scroll_area.verticalScrollBar().setValue(0)
        self._highlights_changed()
        self._container.setUpdatesEnabled(True)
        self._update_diff()

    def _similarity(self, cots: list[CotInput], texts: tuple[str, ...]) -> SimilarityMatrix:
        """The matrix to show now: computed in place when small, else unaligned (and computed in
        a worker when not too long: :meth:`_similarity_ready` shows it)."""
        total = sum(len(text) for text in texts)
        if total <= SYNC_SIMILARITY_CHARS:
            return SimilarityMatrix.compute(cots)
        if total <= SIMILARITY_CHARS:
            self.highlight_note = "highlighting…"
            Task(lambda _ctx: SimilarityMatrix.compute(cots)).on_success(self._similarity_ready).owned_by(self).start()
        else:
            self.highlight_note = f"no highlighting: {total:,} characters (limit {SIMILARITY_CHARS:,})"
        return SimilarityMatrix.unaligned(cots)

    def _similarity_ready(self, matrix: SimilarityMatrix) -> None:
        """A matrix computed in a worker: shown if the view still shows these CoTs."""
        if matrix.texts != texts_of(self._cots):
            return  # another sample meanwhile
        self._matrix = matrix
        self.highlight_note = ""
        self.painter.restart(matrix.groups(self.threshold), self.theme())
        self._highlights_changed()
        self._update_diff()

    def set_threshold(self, percent: float) -> None:
        """Move the slider (and re-group at once)."""
        self.slider.setValue(round(percent))
        self._apply_threshold()

    def set_layout_mode(self, mode: LayoutMode) -> None:
        """``"columns"``: CoTs side by side; ``"cards"``: CoTs stacked."""
        if mode not in ("columns", "cards"):
            raise ValueError(f"layout mode is 'columns' or 'cards', got {mode!r}")
        if mode == self._mode:
            return
        self._mode = mode
        with blocked(self.mode_box):
            self.mode_box.setCurrentIndex(0 if mode == "columns" else 1)
        self._rebuild_container()

    def layout_mode(self) -> LayoutMode:
        return self._mode

    def set_filters(self, model: str | None = None, prompt: str | None = None, correct: bool | None = None) -> None:
        """Show only CoTs of this model / with this prompt key / with this verdict (None: any)."""
        for box, value in ((self.model_filter, model), (self.prompt_filter, prompt)):
            with blocked(box):
                box.setCurrentText(value or ALL)
        with blocked(self.correct_filter):
            self.correct_filter.setCurrentIndex({None: 0, True: 1, False: 2}[correct])
        self._apply_filters()

    def set_identity_filters_visible(self, visible: bool) -> None:
        """Show or hide the model and prompt filters (blind review hides them)."""
        for widget in (self.model_label, self.model_filter, self.prompt_label, self.prompt_filter):
            widget.setVisible(visible)

    def show_diff(self, first: int, second: int) -> None:
        """Word diff of CoT ``first`` (deletions) against CoT ``second`` (insertions)."""
        self.diff.show_pair(first, second)

    def current_index(self) -> int:
        """Index of the current panel (the one the keyboard acts on), -1 if none."""
        return self._current

    def set_current(self, index: int, *, scroll: bool = True) -> None:
        """Make panel ``index`` current: framed, scrolled into view and painted."""
        if not 0 <= index < len(self._cots):
            return
        if 0 <= self._current < len(self._cots) and self._current != index:
            self._pool[self._current].set_current(False)
        self._current = index
        panel = self._pool[index]
        panel.set_current(True)
        if index in self.painter.stale:
            self.painter.paint([index])
        if scroll:
            self.scroll_area.ensureWidgetVisible(panel, 8, 8)

    def visible_indices(self) -> list[int]:
        """Indices of the panels the filters let through, in order."""
        return [i for i in range(len(self._cots)) if not self._pool[i].isHidden()]

    def set_note(self, index: int, text: str) -> None:
        """A plain-text summary line on panel ``index`` (labels, score...)."""
        if 0 <= index < len(self._cots):
            self._pool[index].set_note(text)

    def set_marks(self, index: int, marks: Sequence[SpanMark]) -> None:
        """Span marks of panel ``index``; an already painted panel is repainted at once (~1 ms)."""
        if not 0 <= index < len(self._cots):
            return
        panel = self._pool[index]
        if tuple(marks) == panel.marks:
            return
        panel.marks = tuple(marks)
        if index not in self.painter.stale:
            self.painter.paint([index])

    def paint_all(self) -> None:
        """Paint every stale panel now (tests, screenshots, printing)."""
        self.painter.paint_all()

    # ---- internals --------------------------------------------------------------------------

    def _on_slider(self, _value: int) -> None:
        self._update_threshold_label()
        self._regroup_timer.start()

    def _apply_threshold(self) -> None:
        self._regroup_timer.stop()
        if self._matrix is None:
            return
        self.painter.restart(self._matrix.groups(self.threshold), self.painter.theme)
        self._highlights_changed()
        self.thresholdChanged.emit(self.threshold)

    def _update_threshold_label(self) -> None:
        self.threshold_label.setText(f"{self.slider.value()} %")

    def _highlights_changed(self) -> None:
        """New groups or colours: paint the panels in view now, the others when idle."""
        alignment = self.painter.alignment
        if alignment is None:
            return
        self.painter.paint_in_view()
        self.groups_label.setText(self.highlight_note or f"{len(alignment.groups)} groups")

    def _add_panel(self) -> CotPanel:
        panel = CotPanel(len(self._pool), parent=self._container)
        panel.text_view.activated.connect(lambda p=panel: self._panel_activated(p))
        self._place(panel)
        self._pool.append(panel)
        return panel

    def _place(self, panel: CotPanel) -> None:
        layout = self._container_layout
        position = layout.count() - 1  # before the trailing stretch
        if self._mode == "columns":
            panel.setFixedWidth(self._column_width)
            layout.insertWidget(position, panel, 0, Qt.AlignmentFlag.AlignTop)
        else:
            panel.setMinimumWidth(0)
            panel.setMaximumWidth(16_777_215)
            layout.insertWidget(position, panel)

    def _panel_activated(self, panel: CotPanel) -> None:
        if panel.index < len(self._cots) and panel is self._pool[panel.index]:
            self.set_current(panel.index, scroll=False)
            self.currentChanged.emit(panel.index)

    def _rebuild_container(self) -> None:
        container = QWidget(objectName="compareContainer")
        self._container_layout = QHBoxLayout(container) if self._mode == "columns" else QVBoxLayout(container)
        self._container_layout.addStretch(1)
        self._container = container
        for panel in self._pool:
            hidden = panel.isHidden()
            panel.setParent(container)
            self._place(panel)
            panel.setVisible(not hidden)
        old = self.scroll_area.takeWidget()
        self.scroll_area.setWidget(container)
        if old is not None:
            old.deleteLater()
        self._settle_geometry()
        self.painter.paint_in_view()

    def _settle_geometry(self) -> None:
        """Lay the panels out now (not at the next event), so "in view" is known."""
        self._container_layout.activate()
        wanted = self.scroll_area.viewport().size().expandedTo(self._container.minimumSizeHint())
        if wanted != self._container.size():
            self._container.resize(wanted)

    def _fill_filter(self, box: QComboBox, values: list[str]) -> None:
        with blocked(box):
            box.clear()
            box.addItems([ALL, *values])

    def _apply_filters(self, _index: int = 0, paint: bool = True) -> None:
        model, prompt = self.model_filter.currentText(), self.prompt_filter.currentText()
        verdict = {0: None, 1: True, 2: False}[max(0, self.correct_filter.currentIndex())]
        for panel in self.panels:
            cot = panel.cot
            visible = cot.is_reference or (
                (model in ("", ALL) or cot.model == model)
                and (prompt in ("", ALL) or prompt in cot.prompt_keys)
                and (verdict is None or cot.correct is verdict)
            )
            if panel.isHidden() == visible:
                panel.setVisible(visible)
        if paint:
            self._fit_columns(settle=False)  # fewer (or more) columns shown share the width
            self._settle_geometry()
            self.painter.paint_in_view()

    def show_word_diff(self, shown: bool) -> None:
        """Open (a quarter of the height) or fold away the word diff pane."""
        with blocked(self.diff_button):
            self.diff_button.setChecked(shown)
        total = max(sum(self.splitter.sizes()), 4)
        self.splitter.setSizes([total * 3 // 4, total // 4] if shown else [total, 0])

    def word_diff_shown(self) -> bool:
        return self.splitter.sizes()[1] > 0

    def _diff_dragged(self, *_args: object) -> None:
        with blocked(self.diff_button):
            self.diff_button.setChecked(self.word_diff_shown())

    def column_width(self) -> int:
        """The width of each CoT column now (the columns layout)."""
        return self._column_width

    def _wanted_column_width(self) -> int:
        shown = sum(1 for panel in self.panels if not panel.isHidden()) or 1
        columns = min(shown, FIT_COLUMNS)
        margins = self._container_layout.contentsMargins()
        spacing = max(self._container_layout.spacing(), 0)
        # The vertical scroll bar's width is kept free: a tall CoT brings it in.
        room = (
            self.scroll_area.width()
            - 2 * self.scroll_area.frameWidth()
            - self.scroll_area.verticalScrollBar().sizeHint().width()
            - margins.left()
            - margins.right()
        )
        width = (room - spacing * (columns - 1)) // columns
        return max(MIN_COLUMN_WIDTH, min(MAX_COLUMN_WIDTH, width))

    def _fit_columns(self, settle: bool = True) -> None:
        """Share the width among up to :data:`FIT_COLUMNS` columns (a change of width re-lays
        the panels' text out, so it is done only when the width really changes)."""
        if self._mode != "columns":
            return
        width = self._wanted_column_width()
        if abs(width - self._column_width) < 4:
            return
        self._column_width = width
        for panel in self._pool:
            panel.setFixedWidth(width)
        if settle:
            self._settle_geometry()
            self.painter.paint_in_view()

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        self._fit_timer.start()

    def _update_diff(self) -> None:
        """The diff pane shown again for the current texts and theme."""
        alignment = self.painter.alignment
        if alignment is not None:
            self.diff.set_texts(alignment.texts, self.painter.theme)

    def changeEvent(self, event) -> None:  # Qt override
        super().changeEvent(event)
        alignment = self.painter.alignment
        if event.type() == QEvent.Type.PaletteChange and alignment is not None and self.theme() != self.painter.theme:
            self.painter.restart(alignment, self.theme())  # colours depend on the theme: repaint everything
            self._highlights_changed()
            self._update_diff()
