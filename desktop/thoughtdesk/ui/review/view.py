"""The Review tab: compare a sample's CoTs and annotate them from the keyboard.

Left the compare view (similarity highlighting, word diff, filters), right the annotation panel
for the current CoT. Every edit (annotations, ratings, pairwise preferences, step labels) is a
core ``PlannedEdit`` pushed on the tab's one undo stack (:mod:`thoughtdesk.ui.review.undo`),
written at once with the reviewer's name and the time.
Samples come from the main window's sample list (the Samples tab's filters and order) or from a
review queue; blind mode hides model and prompt and shows CoTs in the reviewer's own order.

``install(window)`` (:mod:`thoughtdesk.ui.review`) adds the tab and the Review menu.
"""

from __future__ import annotations

from collections.abc import Callable

from thoughtdesk.core.critiques import Critique, ExplanationRating, critiques_for_cots, explanation_ratings_for_cots
from thoughtdesk.core.critiques.quotes import quotes_by_cot
from thoughtdesk.core.library.queries import cot_sample
from thoughtdesk.core.library.reader import StoredSample, load_sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import (
    AnnotationStore,
    CotReview,
    LabelSet,
    ReviewQueue,
    StoredAnnotation,
    label_set,
    label_sets,
    review_from,
)
from thoughtdesk.core.review.undo import PlannedEdit
from thoughtdesk.core.settings.registry import LABEL_SET, REVIEW_BLIND, USER_NAME
from thoughtdesk.ui.qt import (
    QEvent,
    QHBoxLayout,
    QPlainTextEdit,
    QScrollArea,
    QSplitter,
    Qt,
    QTabWidget,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.review.annotation_panel import AnnotationPanel
from thoughtdesk.ui.review.compare.view import CompareView, CotPanel, CotView, SpanMark
from thoughtdesk.ui.review.edits import OTHERS_CHARS, ReviewEdits, others_text, reviewer_name
from thoughtdesk.ui.review.keys import ReviewKeys
from thoughtdesk.ui.review.preferences import ReviewPreferences
from thoughtdesk.ui.review.prefetch import SimilarityPrefetch
from thoughtdesk.ui.review.queue_nav import ReviewNavigation
from thoughtdesk.ui.review.rating_tab import RatingTab
from thoughtdesk.ui.review.ratings import ReviewRatings
from thoughtdesk.ui.review.sample_views import (
    QUESTION_BOX_CHARS,
    cot_note,
    cot_views,
    flaw_marks,
    pairwise_summary,
    question_text,
    span_marks,
)
from thoughtdesk.ui.review.steps import ReviewSteps, StepsPanel
from thoughtdesk.ui.review.undo import ReviewUndo
from thoughtdesk.ui.settings.options import read, write
from thoughtdesk.ui.widgets.long_text import fill_text
from thoughtdesk.ui.widgets.sizing import ElidedLabel

#: Milliseconds between the last edit and telling the rest of the window (counts, tree).
NOTIFY_DELAY_MS = 800


class ReviewView(QWidget):
    """The Review tab's widget. Call :meth:`set_library`, then :meth:`show_sample` or a queue.

    Its :class:`ReviewEdits` (``edits``) makes the changes; the view is its
    :class:`~thoughtdesk.ui.review.edits.EditsHost`.
    """

    #: A plain-text status message for the status bar.
    message = Signal(str)
    #: Annotations were written (debounced by the installer into notify_data_changed).
    annotationsChanged = Signal()
    #: The sample shown changed (primary key).
    sampleShown = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewView")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.library: Library | None = None
        self.store: AnnotationStore | None = None
        self.author = reviewer_name()
        self.label_set: LabelSet | None = None
        self.stored: StoredSample | None = None
        self.cot_pks: list[int | None] = []  # per compare-view panel; None for the reference
        self.notes: dict[int, list[StoredAnnotation]] = {}
        self.reviews: dict[int, CotReview] = {}
        #: The shown sample's critiques and explanation ratings (all authors), by CoT key: read
        #: with the sample, one query each, never per CoT.
        self.critiques: dict[int, list[Critique]] = {}
        self.explanation_ratings: dict[int, list[ExplanationRating]] = {}
        self.flaw_marks: dict[int, list[SpanMark]] = {}
        self.blind = read(REVIEW_BLIND)
        #: The review queue worked through, n / p, the progress line (ui/review/queue_nav.py).
        self.nav = ReviewNavigation(self)
        #: ``(sample_pk or None, step) -> sample_pk or None``: the Samples tab's list (set by install).
        self.sample_neighbour: Callable[[int | None, int], int | None] = lambda _pk, _step: None
        self._pending: Callable[[], None] | None = None  # work deferred until the tab is shown
        #: The one undo stack of every edit, and the writes waiting for another process.
        self.undo = ReviewUndo(self, self)
        self.undo_stack, self.later = self.undo.stack, self.undo.later
        self.edits = ReviewEdits(self, self)
        self.ratings = ReviewRatings(self)
        self.preferences = ReviewPreferences(self)
        self.prefetch = SimilarityPrefetch(self)

        self.status = ElidedLabel(name="reviewStatus")
        # One line each, never wrapped: a wrapped label beside a stretched one was squeezed to a
        # few characters per line. The queue's progress is shown whole while there is room.
        self.progress = ElidedLabel(name="queueProgress", max_hint=900)
        bold = self.progress.font()
        bold.setBold(True)
        self.progress.setFont(bold)
        self.question = QPlainTextEdit(objectName="reviewQuestion")
        self.question.setReadOnly(True)
        self.question.setMaximumHeight(96)
        self.compare = CompareView()
        self.compare.currentChanged.connect(self._current_changed)
        self.compare.thinkingToggled.connect(lambda _on: self.reload())
        self.panel = AnnotationPanel()
        self.panel.labelToggled.connect(lambda key: self.edits.toggle_label_key(key))
        self.panel.spanRemoveRequested.connect(self.edits.remove_span)
        self.panel.commentRequested.connect(self.edits.edit_comment)
        self.panel.preferredToggled.connect(self.edits.set_preferred)
        self.panel.qualityChosen.connect(self.edits.set_quality)
        self.panel.labelSetChosen.connect(self.choose_label_set)
        #: The "Critiques & rating" side tab (ui/review/rating_tab.py).
        self.rating_tab = RatingTab(self)
        self.rating_panel = self.rating_tab.panel
        self.rating_panel.scoreChosen.connect(lambda score: self.ratings.set_score(score))
        self.rating_panel.dimensionToggled.connect(lambda name: self.ratings.toggle_dimension(name))
        self.rating_panel.critiqueRated.connect(lambda score: self.ratings.rate_critique(score))
        # Both panes scroll: the tab then fits a 1366x768 screen however many labels a set has.
        annotation_scroll = QScrollArea(objectName="annotationScroll")
        annotation_scroll.setWidgetResizable(True)
        annotation_scroll.setWidget(self.panel)
        self.side_tabs = QTabWidget(objectName="reviewSideTabs")
        self.side_tabs.addTab(annotation_scroll, "Annotations")
        # The scroll areas would let the splitter squeeze it; no wider, so CoT columns get the room.
        self.side_tabs.setMinimumWidth(365)
        self.side_tabs.addTab(self.rating_tab.scroll, "Critiques && rating")
        self.steps_panel = StepsPanel()
        self.side_tabs.addTab(self.steps_panel, "Steps")
        self.steps = ReviewSteps(self, self.steps_panel)
        self.side_tabs.currentChanged.connect(lambda _index: self._side_tab_changed())

        top = QHBoxLayout()
        top.addWidget(self.progress, 3)
        top.addWidget(self.status, 1)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.question)
        left_layout.addWidget(self.compare, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.side_tabs)
        self.splitter.setStretchFactor(0, 4)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)

        self.keys = ReviewKeys(
            self,
            letters={
                Qt.Key.Key_J: lambda: self.move_cot(+1),
                Qt.Key.Key_K: lambda: self.move_cot(-1),
                Qt.Key.Key_N: lambda: self.nav.move_sample(+1),
                Qt.Key.Key_P: lambda: self.nav.move_sample(-1),
                Qt.Key.Key_C: self.edits.edit_comment,
                Qt.Key.Key_S: self.edits.toggle_preferred,
                Qt.Key.Key_F: lambda: self.rating_tab.move_critique(+1),
                Qt.Key.Key_BracketLeft: lambda: self.preferences.prefer("left"),
                Qt.Key.Key_BracketRight: lambda: self.preferences.prefer("right"),
                Qt.Key.Key_Equal: lambda: self.preferences.prefer("tie"),
                # Step labels (ui/review/steps.py); + is Shift+= on most keyboards (the chord below).
                Qt.Key.Key_Minus: lambda: self.steps.rate(-1),
                Qt.Key.Key_0: lambda: self.steps.rate(0),
                Qt.Key.Key_Plus: lambda: self.steps.rate(1),
                Qt.Key.Key_X: self.steps.first_error,
                Qt.Key.Key_U: self.steps.flag,
                Qt.Key.Key_W: self.steps.correct,
                Qt.Key.Key_T: self.steps.toggle_trace,
            },
            on_digit=self.edits.toggle_label_digit,
            on_alt_digit=lambda d: self.edits.set_quality(d or None),
            chords={
                "Ctrl+Z": self.undo_stack.undo,
                "Ctrl+Shift+Z": self.undo_stack.redo,
                "Ctrl+Y": self.undo_stack.redo,
                "Shift+F": lambda: self.rating_tab.move_critique(-1),
                "Alt+Down": lambda: self.steps.move(+1),
                "Alt+Up": lambda: self.steps.move(-1),
                "Shift+X": lambda: self.steps.first_error(none=True),
                "Shift++": lambda: self.steps.rate(1),
            },
            prefixes={
                Qt.Key.Key_E: self.ratings.set_score,
                Qt.Key.Key_D: self.ratings.toggle_dimension_digit,
                Qt.Key.Key_R: self.ratings.rate_critique,
                Qt.Key.Key_O: self.steps.finish_digit,
            },
            on_pending=self.rating_tab.prefix_pending,
        )
        self.keys.install()
        self._notify_timer = QTimer(self, singleShot=True, interval=NOTIFY_DELAY_MS)
        self._notify_timer.timeout.connect(self.annotationsChanged)
        self.compare.set_identity_filters_visible(not self.blind)
        self.nav.update_progress()

    # ---- library, label sets, author ---------------------------------------------------------

    def set_library(self, library: Library) -> None:
        """Review ``library`` (clears the undo history and any queue)."""
        self.library = library
        self.panel.set_read_only(library.read_only_reason)
        self.prefetch.forget_critiques()  # sample keys of another library mean other samples
        self.store = AnnotationStore(library, self.author)
        self.undo.set_library(library)
        self.nav.queue = None
        self.stored = None
        self.reload_label_sets(read(LABEL_SET))
        self.nav.update_progress()

    def reload_label_sets(self, wanted: str | None = None) -> None:
        """Read the label sets again (after the editor saved or deleted one) and use ``wanted``,
        else the set in use if it still exists, else the first."""
        if self.library is None:
            return
        sets = label_sets(self.library)
        current = self.label_set.name if self.label_set is not None else None
        chosen = (
            next((s for s in sets if s.name == wanted), None)
            or next((s for s in sets if s.name == current), None)
            or (sets[0] if sets else None)
        )
        if chosen is not None:
            self.panel.set_label_sets([s.name for s in sets], chosen.name)
            if wanted is not None and chosen.name == wanted:
                write(LABEL_SET, chosen.name)
            self._use_label_set(chosen)

    def set_author(self, name: str) -> None:
        """Annotate as ``name`` from now on (saved in the settings)."""
        name = name.strip()
        if not name:
            return
        write(USER_NAME, name)
        self.sync_author()

    def sync_author(self) -> None:
        """Annotate as the user's name from the settings (after Settings changed it)."""
        name = reviewer_name()
        if name == self.author:
            return
        self.author = name
        if self.library is not None:
            self.store = AnnotationStore(self.library, name)
            self.reload()
        self.nav.update_progress()

    def choose_label_set(self, name: str) -> None:
        """Use the label set called ``name`` (remembered in the settings)."""
        if self.library is None:
            return
        try:
            chosen = label_set(self.library, name)
        except KeyError:
            self.message.emit(f"No label set called {name!r}")
            return
        write(LABEL_SET, name)
        self._use_label_set(chosen)

    def _use_label_set(self, chosen: LabelSet) -> None:
        self.label_set = chosen
        self.panel.set_label_set(chosen)
        self._refresh_all_cots()

    def label_names(self) -> dict[str, str]:
        return {label.key: label.name for label in self.label_set.labels} if self.label_set else {}

    # ---- showing samples ---------------------------------------------------------------------

    def show_sample(self, sample_pk: int | None) -> None:
        """Show one sample's reference and generated CoTs with this reviewer's annotations."""
        if self.library is None or self.store is None or sample_pk is None:
            return
        # Its annotations are read once, below, with their row keys (a 10 MB comment: 50 ms a read).
        stored = load_sample(self.library, sample_pk, annotations=False)
        if stored is None:
            self.message.emit(f"Sample {sample_pk} is no longer in the library")
            return
        self.stored = stored
        self._read_critiques(stored)  # before the views: their statistics line lists the critiques
        self.preferences.read_shown()
        views, self.cot_pks = self.cot_views(stored)
        # Other reviewers' notes are shown a short line each (others_text): read cut.
        self.notes = self.store.sample_annotations(sample_pk, others_chars=OTHERS_CHARS)
        names = self.label_names()
        reviews = {pk: review_from(pk, self.author, self.notes.get(pk, [])) for pk in self.cot_pks if pk is not None}
        # Notes and marks go with the panels: set afterwards, each would lay out or paint again.
        panel_notes = ["" if pk is None else self._note(reviews[pk], pk, names) for pk in self.cot_pks]
        panel_marks = [[] if pk is None else self._marks(reviews[pk], pk, names) for pk in self.cot_pks]
        # Every part capped, invisible characters shown: a long question never stalls the box.
        fill_text(self.question, question_text(stored), QUESTION_BOX_CHARS)
        self.rating_tab.shown_cot = -1  # the critiques were read again
        self.compare.set_cots(views, self.prefetch.take(views), panel_notes, panel_marks)
        self._refresh_all_cots(from_notes=True)
        first = next((i for i, pk in enumerate(self.cot_pks) if pk is not None), 0 if views else -1)
        self.compare.set_current(first)
        self._show_current()
        self.nav.update_progress()
        self.sampleShown.emit(sample_pk)
        self.prefetch.schedule()

    def _read_critiques(self, stored: StoredSample) -> None:
        """The sample's critiques and ratings (one query each for all its CoTs) and the CoT text
        each main flaw quotes (marked in the CoT)."""
        assert self.library is not None
        pks = list(stored.cot_pks)
        ahead = self.prefetch.take_critiques(stored.pk)
        if ahead is not None:
            self.critiques, self.explanation_ratings, quotes = ahead
        else:
            self.critiques = critiques_for_cots(self.library, pks, for_view=True)
            self.explanation_ratings = explanation_ratings_for_cots(self.library, pks)
            texts = {pk: cot.cot or "" for pk, cot in zip(stored.cot_pks, stored.sample.generated_cot, strict=False)}
            quotes = quotes_by_cot(self.critiques, texts)
        self.flaw_marks = flaw_marks(self.critiques, quotes, self.compare.theme(), blind=self.blind)

    @property
    def queue(self) -> ReviewQueue | None:
        """The review queue worked through, if any (``nav``)."""
        return self.nav.queue

    def next_sample_key(self) -> int | None:
        """The sample ``n`` would show (for computing its similarity ahead)."""
        return self.nav.next_sample_key()

    def cot_views(self, stored: StoredSample) -> tuple[list[CotView], list[int | None]]:
        """What the compare view shows of ``stored``, in display order, and the CoT keys."""
        # Guided CoTs are marked (one indexed look-up; blind mode hides the method anyway). The
        # run engine's package is imported on first use, not with the window.
        from thoughtdesk.core.generation.runs.trajectories import guided_cot_pks

        guided = () if self.blind or self.library is None else set(guided_cot_pks(self.library, stored.pk))
        return cot_views(
            stored,
            blind=self.blind,
            author=self.author,
            critiques=self.critiques,
            guided=guided,
            thinking=self.compare.thinking_button.isChecked(),
        )

    def reload(self) -> None:
        """Show the current sample again (after an import, a name change, blind mode...)."""
        self.prefetch.forget_critiques()  # an import or another name: read everything again
        if self.stored is not None:
            current = self.current_cot_pk()
            self.show_sample(self.stored.pk)
            if current in self.cot_pks:
                self.compare.set_current(self.cot_pks.index(current))
                self._show_current()

    def set_blind(self, blind: bool) -> None:
        """Blind mode: no model or prompt shown, CoTs in this reviewer's own shuffled order."""
        self.blind = blind
        write(REVIEW_BLIND, blind)
        self.compare.set_identity_filters_visible(not blind)
        if blind:
            self.compare.set_filters(correct=None)
        self.reload()

    # ---- the current CoT ---------------------------------------------------------------------

    def current_cot_pk(self) -> int | None:
        """The current generated CoT's key (None: the reference, or no CoT)."""
        index = self.compare.current_index()
        return self.cot_pks[index] if 0 <= index < len(self.cot_pks) else None

    def current_panel(self) -> CotPanel | None:
        """The compare-view panel of the current CoT."""
        index = self.compare.current_index()
        return self.compare.panels[index] if 0 <= index < len(self.cot_pks) else None

    def read_only_reason(self) -> str | None:
        """Why nothing can be written (the library opened read-only), or None."""
        return self.library.read_only_reason if self.library is not None else None

    def push_edit(self, planned: PlannedEdit) -> None:
        """Write ``planned`` through the tab's one undo stack."""
        self.undo.push(planned)

    def show_message(self, text: str) -> None:
        """A plain-text status message (the controller shows it in the status bar)."""
        self.message.emit(text)

    def reveal_cot_pk(self, cot_pk: int, description: str, critique_pk: int | None = None) -> None:
        """Show ``cot_pk`` (its sample first, if another is shown) and make it current; ``critique_pk``
        is focused in the rating panel.

        Called before an undo or redo, so a change is never undone out of sight. A CoT whose
        sample is not shown because the filters hide it is still changed, and said so.
        """
        if cot_pk not in self.cot_pks and self.library is not None:
            sample_pk = cot_sample(self.library, cot_pk)
            if sample_pk is None:
                return  # the CoT is gone; the write reports it
            if not self.nav.go_to_sample(sample_pk):
                self.show_sample(sample_pk)
        if cot_pk in self.cot_pks:
            index = self.cot_pks.index(cot_pk)
            if index != self.compare.current_index():
                self.compare.set_current(index)
                self._show_current()
            if critique_pk is not None:
                self.rating_tab.focus_critique(critique_pk)
            if self.compare.panels[index].isHidden():
                self.message.emit(f"{description}: the CoT is hidden by the filters")

    def cot_written(self, cot_pk: int) -> None:
        """A change of ``cot_pk`` was written or undone: show it, and tell the window soon."""
        if cot_pk in self.cot_pks:
            index = self.cot_pks.index(cot_pk)
            self._refresh_cot(index, cot_pk)
            if index == self.compare.current_index():
                self._show_current()
        self._notify_timer.start()

    def ratings_written(self, cot_pk: int) -> None:
        """A rating of ``cot_pk`` or of one of its critiques (or a pairwise preference) was written
        or undone: read that CoT's ratings again (one query each) and show them."""
        self.prefetch.forget_critiques()
        if self.library is None or cot_pk not in self.cot_pks:
            return
        if self.preferences.read_shown():  # a preference names two CoTs: every note may change
            self._refresh_all_cots()
        self.explanation_ratings[cot_pk] = explanation_ratings_for_cots(self.library, [cot_pk]).get(cot_pk, [])
        fresh = critiques_for_cots(self.library, [cot_pk], for_view=True).get(cot_pk, [])
        self.critiques[cot_pk] = fresh
        index = self.cot_pks.index(cot_pk)
        self._show_review(index, cot_pk, self.reviews.get(cot_pk) or CotReview(cot_pk, self.author))
        self.rating_tab.ratings_read(cot_pk)
        self._notify_timer.start()

    def my_explanation_rating(self, cot_pk: int) -> ExplanationRating | None:
        """This reviewer's rating of ``cot_pk``, as read with the sample or after the last change."""
        return self.rating_tab.my_rating(cot_pk)

    def focused_critique(self) -> Critique | None:
        """The critique of the current CoT the rating keys act on."""
        return self.rating_tab.focused_critique()

    def move_cot(self, step: int) -> None:
        """Next (+1) or previous (-1) generated CoT the filters show (j / k)."""
        candidates = [i for i in self.compare.visible_indices() if self.cot_pks[i] is not None]
        if not candidates:
            return
        current = self.compare.current_index()
        later = [i for i in candidates if (i > current if step > 0 else i < current)]
        target = (later[0] if step > 0 else later[-1]) if later else current
        if target != current:
            self.compare.set_current(target)
            self._show_current()

    def _current_changed(self, _index: int) -> None:
        self._show_current()

    def _show_current(self) -> None:
        index = self.compare.current_index()
        cot_pk = self.current_cot_pk()
        if cot_pk is None:
            self.panel.show_review(None, "The reference CoT is not annotated here" if index >= 0 else "No CoT")
        else:
            title = self.compare.panels[index].title.text()
            self.panel.show_review(
                self.reviews.get(cot_pk), f"Annotating {title}", others_text(self.notes.get(cot_pk, []), self.author)
            )
        if cot_pk != self.rating_tab.shown_cot:
            self.rating_tab.forget()  # filled now if its tab is shown, else when it is
        self.steps.show_current()

    # ---- step labels (ui/review/steps.py) ----------------------------------------------------

    def current_target(self) -> tuple[int | None, bool]:
        """(the current panel's CoT key, None for the reference; whether any panel is current)."""
        index = self.compare.current_index()
        return self.current_cot_pk(), 0 <= index < len(self.cot_pks)

    def _side_tab_changed(self) -> None:
        self.rating_tab.fill()
        if self.side_tabs.currentWidget() is self.steps_panel:
            if self.steps.stale:
                self.steps.show_current()
        else:
            self.steps.leave()  # time spent counts while the steps are shown

    def show_steps_tab(self) -> None:
        """Bring the Steps tab to the front (the step keys act on what it shows)."""
        self.side_tabs.setCurrentWidget(self.steps_panel)

    def steps_written(self) -> None:
        """A step label was written or undone: tell the window soon."""
        self._notify_timer.start()

    def _refresh_all_cots(self, from_notes: bool = False) -> None:
        """Every CoT's note and span marks: ``from_notes`` builds the reviews from the sample's
        annotations just read (no query per CoT); otherwise the reviews are current and only
        the label set or the theme changed."""
        if self.store is None:
            return
        if from_notes:
            self.reviews = {
                pk: review_from(pk, self.author, self.notes.get(pk, [])) for pk in self.cot_pks if pk is not None
            }
        for index, cot_pk in enumerate(self.cot_pks):
            if cot_pk is not None:
                self._show_review(index, cot_pk, self.reviews.get(cot_pk) or self.store.review(cot_pk))

    def _refresh_cot(self, index: int, cot_pk: int) -> None:
        """Re-read one CoT's review after an edit and show it."""
        if self.store is not None:
            self._show_review(index, cot_pk, self.store.review(cot_pk))

    def _show_review(self, index: int, cot_pk: int, review: CotReview) -> None:
        self.reviews[cot_pk] = review
        names = self.label_names()
        self.compare.set_note(index, self._note(review, cot_pk, names))
        self.compare.set_marks(index, self._marks(review, cot_pk, names))

    def _marks(self, review: CotReview, cot_pk: int, names: dict[str, str]) -> list[SpanMark]:
        """A CoT's span-label marks, then the text its critiques' main flaws quote (none while the
        thinking is compared: marks are offsets into the visible text)."""
        if self.compare.thinking_button.isChecked():
            return []
        return span_marks(review, self.label_set, self.compare.theme(), names, self.flaw_marks.get(cot_pk, []))

    def _note(self, review: CotReview, cot_pk: int, names: dict[str, str]) -> str:
        """The CoT's one-line note: the review, this reviewer's rating and pairwise verdicts
        (hidden when empty)."""
        return cot_note(
            review, names, self.my_explanation_rating(cot_pk), pairwise_summary(cot_pk, self.preferences.shown)
        )

    # ---- samples and queues -----------------------------------------------------------------

    def when_shown(self, action: Callable[[], None]) -> None:
        """Run ``action`` now if the tab is shown, else when it is (the latest action wins)."""
        if self.isVisible():
            self._pending = None
            action()
        else:
            self._pending = action

    def showEvent(self, event) -> None:  # Qt override
        super().showEvent(event)
        if self._pending is not None:
            action, self._pending = self._pending, None
            action()
        elif self.side_tabs.currentWidget() is self.steps_panel:
            self.steps.show_current(keep_step=True)  # the time spent counts from here again
        self.setFocus(Qt.FocusReason.OtherFocusReason)

    def hideEvent(self, event) -> None:  # Qt override
        self.steps.leave()  # time spent counts while the tab is shown
        super().hideEvent(event)

    def changeEvent(self, event) -> None:  # Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.cot_pks:
            self._refresh_all_cots()  # span mark colours depend on the theme
