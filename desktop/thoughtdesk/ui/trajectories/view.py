"""TrajectoryView: a guided CoT's steps in order (each with its rationale and its candidates
with scores, the chosen one marked and the others greyed) beside a plain CoT of the same model on
the same question; TrajectoryDialog holds it in a window that fits 1366x768.

Every text comes from a model or a dataset and is untrusted: it is shown as plain text only
(list items and a plain-text editor; nothing is read as HTML), with invisible characters (bidi
overrides) revealed as ``<U+202E>`` and capped (:mod:`thoughtdesk.core.visible_text`; the CoTs
in :class:`~thoughtdesk.ui.widgets.long_text.PlainTextBox`, with "Show all"). A trajectory is
small (at most max-steps x candidates short sentences), so it is read on the GUI thread in one
query.
"""

from __future__ import annotations

from collections.abc import Sequence

from thoughtdesk.core.generation.runs import TrajectoryContext, TrajectoryStep, cot_steps, trajectory_context
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.split import cot_steps as split_cot
from thoughtdesk.core.steps.store import StepReview, reviews_for_cots
from thoughtdesk.core.visible_text import elide
from thoughtdesk.ui.qt import (
    QDialog,
    QDialogButtonBox,
    QFont,
    QListWidget,
    QListWidgetItem,
    QPalette,
    QSplitter,
    Qt,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import breakable_text, plain_label
from thoughtdesk.ui.widgets.long_text import PlainTextBox

#: Characters of the question shown above the steps (the Samples tab shows it whole).
QUESTION_CHARS = 500
#: Shown characters of a rationale or a candidate in the list of steps.
ROW_CHARS = 2_000


def score_text(score: float | None) -> str:
    """A candidate's score as shown: three decimals, or "no score"."""
    return "no score" if score is None else f"{score:.3f}"


def step_label_texts(steps: Sequence[TrajectoryStep], cot_text: str, reviews: Sequence[StepReview]) -> dict[int, str]:
    """Trajectory step index -> its step labels as one line (``alice +1, judge: first error``;
    docs/steps.md). A trajectory step is matched to the CoT's step list by text (the chosen
    candidate's text equal to a step of the list, in order); a step that matches none shows
    no labels rather than another step's."""
    listed = [step.text.strip() for step in split_cot(cot_text)]
    out: dict[int, str] = {}
    cursor = 0
    for step in steps:
        if not step.candidates or not 0 <= step.chosen < len(step.candidates):
            continue
        chosen = step.candidates[step.chosen].text.strip()
        if chosen not in listed[cursor:]:
            continue
        index = listed.index(chosen, cursor)
        cursor = index + 1
        parts = []
        for review in reviews:
            label = review.label(index)
            if label is not None and label.rating is not None:
                parts.append(f"{review.author} {label.rating:+d}{' (unsure)' if label.flagged else ''}")
            if review.first_error == index:
                parts.append(f"{review.author}: first error")
        if parts:
            out[step.index] = ", ".join(parts)
    return out


def step_lines(step: TrajectoryStep, labels: str | None = None) -> list[tuple[str, str]]:
    """The rows of one step as (kind, text): ``step``, ``rationale``, ``chosen``, ``other``,
    ``labels`` (the step labels people and judges gave it, when any)."""
    tokens = step.prompt_tokens + step.completion_tokens
    cost = "" if step.cost is None else f", ${step.cost:.4f}"
    end = " (last step)" if step.final else ""
    rows = [("step", f"Step {step.index + 1}{end} · {tokens} tokens{cost}")]
    if step.rationale is not None:
        rows.append(("rationale", f"    Rationale: {elide(step.rationale, ROW_CHARS)}"))
    for index, candidate in enumerate(step.candidates):
        chosen = index == step.chosen
        mark = "✓" if chosen else "  "
        score = score_text(candidate.score) if step.unparsed_rating(index) is None else "no 0-3 rating in the reply"
        text = elide(candidate.text, ROW_CHARS) if candidate.text.strip() else "(empty: the model wrote nothing)"
        rows.append(("chosen" if chosen else "other", f"    {mark} [{score}] {text}"))
    if labels:
        rows.append(("labels", f"    Step labels: {elide(labels, ROW_CHARS)}"))
    return rows


class TrajectoryView(QWidget):
    """The steps of one guided CoT (left) beside a plain CoT of the same model (right)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trajectoryView")
        layout = QVBoxLayout(self)
        # Breakable: a long unbroken question (or model name) would widen the window past the screen.
        self.header = plain_label(
            "", name="trajectoryHeader", bold=True, selectable=True, keep_height=True, breakable=True
        )
        self.question = plain_label("", name="trajectoryQuestion", selectable=True, keep_height=True, breakable=True)
        layout.addWidget(self.header)
        layout.addWidget(self.question)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(plain_label("Guided CoT, step by step", bold=True))
        self.steps = QListWidget(objectName="trajectorySteps")
        self.steps.setWordWrap(True)
        self.steps.setTextElideMode(Qt.TextElideMode.ElideNone)
        left_layout.addWidget(self.steps)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        self.plain_title = plain_label("Plain CoT of the same model", bold=True)
        right_layout.addWidget(self.plain_title)
        self.plain = PlainTextBox(name="plainCot", title="Plain CoT of the same model")
        right_layout.addWidget(self.plain, 1)  # the spare height goes to the plain CoT, not between titles
        self.guided = PlainTextBox(name="guidedCot", title="The guided CoT as stored", max_height=140)
        right_layout.addWidget(plain_label("The guided CoT as stored", bold=True))
        right_layout.addWidget(self.guided)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout.addWidget(splitter, 1)

    def show_trajectory(
        self,
        context: TrajectoryContext | None,
        steps: Sequence[TrajectoryStep],
        reviews: Sequence[StepReview] = (),
    ) -> None:
        """Show a guided CoT's steps (with their step labels: ``reviews``) and its plain
        counterpart (None: say the CoT is gone)."""
        self.steps.clear()
        if context is None:
            self.header.setText("This CoT is no longer in the library.")
            self.question.setText("")
            self.plain.set_text("")
            self.guided.set_text("")
            return
        self.header.setText(f"{context.model} · {context.method or 'guided'} · {len(steps)} step(s)")
        # Revealed and cut: a long vignette would push the steps off a 768 px screen.
        self.question.setText(f"Question: {elide(context.question, QUESTION_CHARS)}")
        grey = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        bold = QFont(self.steps.font())
        bold.setBold(True)
        labels = step_label_texts(steps, context.cot, reviews) if reviews else {}
        for step in steps:
            for kind, text in step_lines(step, labels.get(step.index)):
                # Plain text (a list item never renders markup) with break points in long words.
                item = QListWidgetItem(breakable_text(text))
                item.setData(Qt.ItemDataRole.UserRole, kind)
                if kind in ("step", "chosen"):
                    item.setFont(bold)
                if kind == "other":
                    item.setForeground(grey)
                self.steps.addItem(item)
        if not steps:
            self.steps.addItem(QListWidgetItem("(no stored steps: this CoT was not written by a guided run)"))
        if context.plain_cot is None:
            self.plain_title.setText("Plain CoT of the same model: none for this question")
            self.plain.set_text("Generate a plain (one-shot) CoT with the same model to compare it here.")
        else:
            self.plain_title.setText("Plain CoT of the same model")
            self.plain.set_text(context.plain_cot)
        self.guided.set_text(context.cot)

    def item_texts(self, kind: str | None = None) -> list[str]:
        """The step rows shown (of one kind: step, rationale, chosen, other), for tests."""
        items = (self.steps.item(i) for i in range(self.steps.count()))
        return [i.text() for i in items if kind is None or i.data(Qt.ItemDataRole.UserRole) == kind]


class TrajectoryDialog(QDialog):
    """A guided CoT's trajectory in its own window (Escape closes it)."""

    def __init__(self, library: Library, cot_pk: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trajectoryDialog")
        self.setWindowTitle("Trajectory of a guided CoT")
        layout = QVBoxLayout(self)
        self.view = TrajectoryView(self)
        layout.addWidget(self.view)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(1100, 640)  # fits a 1366x768 screen with the task bar
        reviews = reviews_for_cots(library.conn, [cot_pk]).get(cot_pk, [])
        self.view.show_trajectory(trajectory_context(library, cot_pk), cot_steps(library, cot_pk), reviews)


def open_trajectory(parent: QWidget, library: Library | None, cot_pk: int | None) -> TrajectoryDialog | None:
    """Open the trajectory of ``cot_pk`` (non-modal); None when there is no library or CoT."""
    if library is None or cot_pk is None:
        return None
    dialog = TrajectoryDialog(library, cot_pk, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog


__all__ = ["TrajectoryDialog", "TrajectoryView", "open_trajectory", "step_lines"]
