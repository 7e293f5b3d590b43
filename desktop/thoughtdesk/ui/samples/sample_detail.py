"""The right-hand pane: one sample with its choices, context, reference CoT and generated CoTs.

All text from datasets and models goes into widgets set to plain text (``Qt.PlainText``), so
markup such as ``<img src=x>`` or ``<a href=...>`` is shown literally and never interpreted;
invisible characters (bidi overrides) are shown as ``<U+202E>``. A text too long for a label, or
with a word longer than a line, goes into a :class:`~thoughtdesk.ui.widgets.long_text.LongText`:
capped, wrapped anywhere, with "Show all" (a 10 MB one-word question opens like a short one);
the context is a capped :class:`~thoughtdesk.ui.widgets.long_text.PlainTextBox`. What is laid
out is bounded whatever the sample holds: a few short reference steps are a label each, more
(2,000 steps took 1.1 s as labels) or longer ones are one capped text, numbered.
A reasoning model's thinking is a collapsed :class:`~thoughtdesk.ui.widgets.thinking.ThinkingSection`
above the CoT's visible text (built when opened). Each generated CoT shows its critiques (:mod:`thoughtdesk.ui.critiques.cards`) and the human
ratings of it; CoT text a critique's main flaw quotes is marked (plain text with a format).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from thoughtdesk.core.critiques import Critique, ExplanationRating
from thoughtdesk.core.critiques.quotes import find_quote_spans
from thoughtdesk.core.library.reader import StoredSample
from thoughtdesk.core.library.records import Annotation, GeneratedCot, model_name
from thoughtdesk.core.trace_marks import TRUNCATED_FINISH_REASONS
from thoughtdesk.ui.critiques.cards import CritiqueList, one_line, score_text
from thoughtdesk.ui.critiques.text import FittedText, Part
from thoughtdesk.ui.qt import (
    QFrame,
    QLabel,
    QScrollArea,
    Qt,
    QToolButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.long_text import DISPLAY_CHARS, LongText, PlainTextBox, fits_label
from thoughtdesk.ui.widgets.thinking import ThinkingSection, finish_note

#: Characters of a CoT shown with its flaw quotes marked (a label shows a CoT without quotes whole).
MARKED_COT_CHARS = 20_000
#: Characters of each annotation's text read to show a sample (more than its view shows before
#: "Show all", :data:`~thoughtdesk.ui.widgets.long_text.DISPLAY_CHARS`; "Show all" reads the rest).
ANNOTATION_CHARS = 100_000
#: A sample with at most this many critiques shows their cards at once; with more, each CoT has
#: a "Show critiques" button (a card lays out text: 180 cards would stall the GUI for seconds).
OPEN_CRITIQUES = 12
#: Reference steps shown as a label each, at most (and only when all fit labels and
#: :data:`~thoughtdesk.ui.widgets.long_text.DISPLAY_CHARS` in all); more are one numbered text.
STEP_LABELS = 30


def heading(text: str) -> QLabel:
    return plain_label(text, name="heading", bold=True, keep_height=True)


def data_text(text: str, name: str, *, bold: bool = False, title: str = "Full text") -> QWidget:
    """A selectable plain label for ``text``, or a :class:`LongText` when the text is too long
    for one or has a word a label could not wrap."""
    if fits_label(text):
        return plain_label(text, name=name, bold=bold, selectable=True, keep_height=True, breakable=True)
    return LongText(text, name=name, title=title)


def annotations_text(annotations: Sequence[Annotation]) -> str:
    """``"Annotations: key: value (author); ..."``: a CoT's annotations as one text."""
    return "Annotations: " + "; ".join(
        f"{a.key}: {a.value if isinstance(a.value, str) else str(a.value).lower()} ({a.author})"
        if a.author
        else f"{a.key}: {a.value}"
        for a in annotations
    )


def step_labels(steps: Sequence[str]) -> bool:
    """Whether reference steps are shown a label each: few, each fits a label, short in all."""
    return (
        len(steps) <= STEP_LABELS
        and sum(len(step) for step in steps) <= DISPLAY_CHARS
        and all(fits_label(step) for step in steps)
    )


def numbered_steps(steps: Sequence[str]) -> str:
    """``"1. first\n2. second"``: reference steps as one text."""
    return "\n".join(f"{n}. {step}" for n, step in enumerate(steps, start=1))


def numbered_length(steps: Sequence[str]) -> int:
    """``len(numbered_steps(steps))`` without building it (100,000 steps: joined in 130 ms)."""
    count = len(steps)
    numbers = sum(count - 10**d + 1 for d in range(len(str(count))))  # the digits of 1..count
    return sum(map(len, steps)) + numbers + 2 * count + max(0, count - 1)


def steps_text(steps: Sequence[str]) -> LongText:
    """Reference steps as one numbered :class:`LongText`; only the steps it shows are joined,
    the whole text is built when Show all asks for it."""
    size, count = 0, 0
    while count < len(steps) and size <= DISPLAY_CHARS:
        size += len(steps[count]) + 12
        count += 1
    long = LongText(name="referenceSteps", title="Reference CoT")
    long.set_text(numbered_steps(steps[:count]), length=numbered_length(steps), full=lambda: numbered_steps(steps))
    return long


def letters(n: int) -> list[str]:
    return [string.ascii_uppercase[i] if i < 26 else str(i + 1) for i in range(n)]


class CotCard(QFrame):
    """One generated CoT: model, prompt fragments, the CoT text, extracted answer and verdict,
    then its critiques and human ratings."""

    def __init__(
        self,
        cot: GeneratedCot,
        parent: QWidget | None = None,
        critiques: Sequence[Critique] = (),
        ratings: Sequence[ExplanationRating] = (),
        open_critiques: bool = True,
        on_trajectory: Callable[[], None] | None = None,
        annotations_cut: int = 0,
        whole_annotations: Callable[[], list[Annotation]] | None = None,
    ) -> None:
        """``annotations_cut``: characters of the annotations' values not read (the CoT's
        ``annotations`` were read cut), which "Show all" reads with ``whole_annotations()``."""
        super().__init__(parent)
        self.setObjectName("cotCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = self._layout = QVBoxLayout(self)
        name = model_name(cot.model) or "unknown model"
        service = f" via {cot.api_service}" if cot.api_service else ""
        layout.addWidget(
            plain_label(
                f"{name}{service}", name="cotModel", bold=True, selectable=True, keep_height=True, breakable=True
            )
        )
        keys = [k for k in (cot.instruction, cot.cot_trigger) if k]
        extraction = [a.answer_extraction for a in cot.answers if a.answer_extraction]
        fragments = "prompt: " + (" + ".join(keys) if keys else "(no instruction or trigger)")
        if extraction:
            fragments += "; extraction: " + ", ".join(dict.fromkeys(extraction))
        layout.addWidget(plain_label(fragments, name="cotFragments", keep_height=True))
        guide = (cot.extra.get("thoughtdesk") or {}).get("guide") if isinstance(cot.extra, dict) else None
        if isinstance(guide, dict) and on_trajectory is not None:
            # A guided CoT (written step by step): its rationales and candidates are one click away.
            steps = guide.get("steps", "?")
            button = QToolButton(objectName="trajectoryButton")
            button.setText(f"Trajectory… ({guide.get('label', 'guided')}, {steps} steps)")
            button.clicked.connect(on_trajectory)
            layout.addWidget(button)
        if cot.reasoning:
            # A reasoning model's thinking: collapsed above the answer, built when opened.
            self.thinking: ThinkingSection | None = ThinkingSection(self)
            self.thinking.set_trace(cot.reasoning, cot.reasoning_tokens, note=finish_note(cot.finish_reason))
            layout.addWidget(self.thinking)
        else:
            self.thinking = None
            if cot.finish_reason in TRUNCATED_FINISH_REASONS:
                layout.addWidget(
                    plain_label(
                        "Truncated: generation stopped at the token limit", name="cotTruncated", keep_height=True
                    )
                )
        text = cot.cot or ""
        quotes = sorted(
            {(q.start, q.end) for critique in critiques for q in find_quote_spans(critique.parsed.main_flaw, text)}
        )
        if quotes:
            marked = FittedText(self, name="cotText")
            marked.set_parts([Part("", text, tuple(quotes))], limit=MARKED_COT_CHARS)
            layout.addWidget(marked)
        else:
            layout.addWidget(data_text(text or "(empty CoT)", "cotText", title=f"CoT of {name}"))
        for answer in cot.answers:
            verdict = {True: "✓ correct", False: "✗ incorrect", None: "not scored"}[answer.correct_answer]
            scoring = answer.scoring
            if answer.correct_answer is None and scoring is not None and scoring.outcome == "unextractable":
                # scored, no answer found: not the same as never scored (issue 17.5)
                verdict = f"✗ not extractable ({scoring.reason})" if scoring.reason else "✗ not extractable"
            if cot.finish_reason in TRUNCATED_FINISH_REASONS:  # evaluate counts it as truncated
                verdict += " · truncated (left out of accuracy)"
            text = f"Answer: {(answer.answer or '').strip() or '(none)'}    {verdict}"
            label = data_text(text, "cotAnswer", bold=True, title="Extracted answer")
            if answer.correct_answer is not None:
                label.setProperty("correct", answer.correct_answer)
            layout.addWidget(label)
        if cot.annotations:
            notes = annotations_text(cot.annotations)
            if annotations_cut and whole_annotations is not None:  # read cut: Show all reads them whole
                more = LongText(name="cotAnnotations", title="Annotations")
                more.set_text(
                    notes,
                    length=len(notes) + annotations_cut,
                    full=lambda: annotations_text(whole_annotations()),
                )
                layout.addWidget(more)
            else:
                layout.addWidget(data_text(notes, "cotAnnotations", title="Annotations"))
        if ratings:
            rated = "; ".join(
                f"{r.author or '(no author)'} "
                + ("—" if r.score is None else f"{r.score}/5")
                + (f" ({', '.join(r.dimensions)})" if r.dimensions else "")
                for r in ratings
            )
            layout.addWidget(
                plain_label("Ratings: " + rated, name="cotRatings", selectable=True, keep_height=True, breakable=True)
            )
        self.critiques = list(critiques)
        self.critique_list: CritiqueList | None = None
        self.critiques_toggle: QToolButton | None = None
        if critiques and open_critiques:
            self._open_critiques()
        elif critiques:
            scores = " ".join(score_text(c.parsed).replace("score: ", "") for c in critiques[:6])
            self.critiques_toggle = QToolButton(objectName="critiquesToggle")
            # A button reads "&" as a mnemonic: doubled, it shows as itself.
            toggle_text = f"Show {len(critiques)} critique(s): {one_line(scores, 80)}".replace("&", "&&")
            self.critiques_toggle.setText(toggle_text)
            self.critiques_toggle.clicked.connect(self._open_critiques)
            layout.addWidget(self.critiques_toggle)

    def _open_critiques(self) -> None:
        """Show the critique cards (made on demand when the sample has many critiques)."""
        if self.critique_list is not None:
            return
        self.critique_list = CritiqueList(self)
        self.critique_list.show_critiques(self.critiques)
        self._layout.addWidget(self.critique_list)
        if self.critiques_toggle is not None:
            self.critiques_toggle.hide()


class SampleDetail(QScrollArea):
    """Shows one :class:`StoredSample`; empty until :meth:`show_sample` is called.
    ``trajectory_requested(cot_pk)``: the user asked for a guided CoT's trajectory."""

    trajectory_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        # Everything wraps (plain_label(breakable=True)): the pane never scrolls sideways.
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.current: StoredSample | None = None
        #: Reads a CoT's annotations whole (set by the owner, which knows the library): for
        #: "Show all" of annotations read cut (``StoredSample.annotations_cut``).
        self.whole_annotations: Callable[[int], list[Annotation]] | None = None
        self.critiques: Mapping[int, Sequence[Critique]] = {}
        self.ratings: Mapping[int, Sequence[ExplanationRating]] = {}
        self._placeholder()

    def _placeholder(self) -> None:
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(
            plain_label("Select a sample to see its question, reference CoT and generated CoTs.", keep_height=True)
        )
        layout.addStretch(1)
        self.setWidget(body)

    def clear(self) -> None:
        self.current = None
        self._placeholder()

    def show_sample(
        self,
        stored: StoredSample | None,
        critiques: Mapping[int, Sequence[Critique]] | None = None,
        ratings: Mapping[int, Sequence[ExplanationRating]] | None = None,
    ) -> None:
        """Show ``stored`` with the critiques and explanation ratings of its CoTs (by CoT key,
        read with the sample: ``critiques_for_cots`` / ``explanation_ratings_for_cots``)."""
        if stored is None:
            self.clear()
            return
        self.current = stored
        self.critiques, self.ratings = critiques or {}, ratings or {}
        s = stored.sample
        body = QWidget()
        body.setObjectName("sampleDetail")
        layout = QVBoxLayout(body)
        layout.addWidget(
            plain_label(
                f"{stored.dataset} / {stored.split} / {s.id}  ·  {s.type}",
                name="sampleHeader",
                selectable=True,
                keep_height=True,
                breakable=True,
            )
        )
        layout.addWidget(heading("Question"))
        layout.addWidget(data_text(s.question or "", "question", title="Question"))

        gold = {str(a) for a in (s.answer or [])}
        if s.choices:
            layout.addWidget(heading("Choices"))
            for letter, choice in zip(letters(len(s.choices)), s.choices, strict=False):
                is_gold = str(choice) in gold or letter in gold
                mark = "✓ " if is_gold else "   "
                label = data_text(f"{mark}{letter}) {choice}", "choice", bold=is_gold, title=f"Choice {letter}")
                label.setProperty("gold", is_gold)
                layout.addWidget(label)
        layout.addWidget(
            data_text(
                "Gold answer: " + ("; ".join(str(a) for a in s.answer or []) or "(none)"),
                "gold",
                bold=True,
                title="Gold answer",
            )
        )

        if s.context:
            toggle = QToolButton()
            toggle.setObjectName("contextToggle")
            toggle.setText("Context")
            toggle.setCheckable(True)
            toggle.setChecked(len(s.context) < 600)
            toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            toggle.setArrowType(Qt.ArrowType.DownArrow if toggle.isChecked() else Qt.ArrowType.RightArrow)
            # Capped (Show all opens the whole of it in a viewer): a 10 MB context took 240 ms.
            context = PlainTextBox(name="context", title="Context", max_height=180)
            context.set_text(s.context)
            context.setVisible(toggle.isChecked())

            def flip(checked: bool, c: PlainTextBox = context, t: QToolButton = toggle) -> None:
                c.setVisible(checked)
                t.setArrowType(Qt.ArrowType.DownArrow if checked else Qt.ArrowType.RightArrow)

            toggle.toggled.connect(flip)
            layout.addWidget(toggle)
            layout.addWidget(context)

        steps = [str(step) for step in (s.cot or [])]
        layout.addWidget(heading(f"Reference CoT ({len(steps)} steps)"))
        if steps and step_labels(steps):
            for n, step in enumerate(steps, start=1):
                layout.addWidget(data_text(f"{n}. {step}", "referenceStep", title=f"Reference step {n}"))
        elif steps:
            layout.addWidget(steps_text(steps))
        else:
            layout.addWidget(plain_label("(this dataset has no reference CoT for the sample)", keep_height=True))

        layout.addWidget(heading(f"Generated CoTs ({len(s.generated_cot)})"))
        open_critiques = sum(len(c) for c in self.critiques.values()) <= OPEN_CRITIQUES
        for cot_pk, cot in zip(stored.cot_pks, s.generated_cot, strict=False):
            layout.addWidget(
                CotCard(
                    cot,
                    critiques=self.critiques.get(cot_pk, ()),
                    ratings=self.ratings.get(cot_pk, ()),
                    open_critiques=open_critiques,
                    on_trajectory=partial(self.trajectory_requested.emit, cot_pk),
                    annotations_cut=stored.annotations_cut.get(cot_pk, 0),
                    whole_annotations=None
                    if self.whole_annotations is None
                    else partial(self.whole_annotations, cot_pk),
                )
            )
        layout.addStretch(1)
        self.setWidget(body)

    def texts(self) -> list[str]:
        """Every text shown (for tests and accessibility checks)."""
        widget = self.widget()
        if widget is None:
            return []
        return (
            [label.text() for label in widget.findChildren(QLabel)]
            + [view.toPlainText() for view in widget.findChildren(FittedText)]
            + [long.shown_text() for long in widget.findChildren(LongText)]
        )
