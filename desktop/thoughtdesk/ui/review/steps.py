"""Step labels in the Review tab (docs/steps.md): the current CoT's steps (or its reasoning
trace's, or the reference CoT's) in the "Steps" side tab, labelled by keyboard.

Keys (routed by :class:`~thoughtdesk.ui.review.keys.ReviewKeys`; listed in Help ▸ Keyboard
shortcuts): Alt+Down / Alt+Up move between steps, ``-`` ``0`` ``+`` rate the
current step -1/0/+1 (the same again clears it), ``x`` marks it the first wrong step (the steps
before it +1 unless rated), Shift+X says no step is wrong, ``u`` flags it (unsure), ``w``
writes a corrected step, ``o`` then 1-4 sets the finish reason (found_error, solution,
bad_problem, give_up; ``o`` Delete clears it), ``t`` switches between a CoT's text and its
reasoning trace. Every change is an edit on the review's one undo stack
(:func:`thoughtdesk.core.review.undo.step_edit`), written at once as the reviewer's own (one row
per reviewer and step list). The time a reviewer spends on a step list
while the tab is shown is added to their row when they leave it, if they labelled it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from thoughtdesk.core.library.reader import StoredSample
from thoughtdesk.core.library.store import Library, LibraryBusyError
from thoughtdesk.core.review.undo import EditSlot, PlannedEdit, step_edit
from thoughtdesk.core.steps import changes
from thoughtdesk.core.steps.changes import StepChange
from thoughtdesk.core.steps.split import Step, Trace, cot_steps, reasoning_steps, reference_steps
from thoughtdesk.core.steps.store import FINISH_REASONS, StepReview, StepTarget, add_time_spent, review_of
from thoughtdesk.core.visible_text import elide
from thoughtdesk.ui.qt import (
    QBrush,
    QColor,
    QComboBox,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.review.dialogs import CommentDialog
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked

#: Characters of a step shown in its row (more in the tooltip; the whole step is in the CoT panel).
ROW_CHARS = 160
TIP_CHARS = 2000
#: Steps listed at most (a 2 MB CoT of one-line steps would be 100,000 rows).
MAX_ROWS = 500
_MARKS = {1: "+1", 0: " 0", -1: "-1", None: "  "}
_COLOURS = {1: QColor(46, 160, 67, 60), 0: QColor(150, 150, 150, 50), -1: QColor(218, 54, 51, 70)}
_REASONS = ("", *FINISH_REASONS)


class StepsHost(Protocol):
    """What :class:`ReviewSteps` needs from the Review tab."""

    @property
    def library(self) -> Library | None: ...

    @property
    def author(self) -> str: ...

    @property
    def blind(self) -> bool: ...

    @property
    def stored(self) -> StoredSample | None: ...

    def current_target(self) -> tuple[int | None, bool]:
        """(the current panel's CoT key or None, whether a panel is current at all)."""
        ...

    def reveal_cot_pk(self, cot_pk: int, description: str, critique_pk: int | None = None) -> None: ...

    def show_message(self, text: str) -> None: ...

    def show_steps_tab(self) -> None: ...

    def steps_written(self) -> None: ...

    def push_edit(self, planned: PlannedEdit) -> None:
        """Write ``planned`` through the review's one undo stack."""
        ...


class StepsPanel(QWidget):
    """The "Steps" side tab: a row per step with this reviewer's rating, flag and first-error
    mark; below, the current step's corrected text, the finish reason and the time spent."""

    finishChosen = Signal(str)
    traceChosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stepsPanel")
        self.title = plain_label("No CoT", bold=True, name="stepsTitle")
        self.trace = QComboBox(objectName="stepsTrace")
        self.trace.addItem("CoT text", "cot")
        self.trace.addItem("Reasoning trace", "reasoning")
        self.trace.currentIndexChanged.connect(lambda _i: self.traceChosen.emit(self.trace.currentData() or "cot"))
        self.list = QListWidget(objectName="stepsList")
        self.list.setWordWrap(True)
        self.list.setUniformItemSizes(False)
        self.summary = plain_label("", name="stepsSummary")
        self.corrected = plain_label("", name="stepsCorrected", selectable=True)
        self.finish = QComboBox(objectName="stepsFinish")
        for reason in _REASONS:
            self.finish.addItem(reason or "(no finish reason)", reason)
        self.finish.activated.connect(lambda _i: self.finishChosen.emit(self.finish.currentData() or ""))
        self.hint = plain_label(
            "Alt+Down/Up step · - 0 + rate · x first error · Shift+X none wrong · u flag · w correct · "
            "o 1-4 finish · t trace",
            name="stepsHint",
        )
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.trace)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.corrected)
        layout.addWidget(self.summary)
        layout.addWidget(self.finish)
        layout.addWidget(self.hint)

    def show_steps(
        self, title: str, steps: list[Step], review: StepReview | None, current: int, reasoning: bool
    ) -> None:
        """Fill the list (one row per step) and the summary."""
        self.title.setText(title)
        with blocked(self.trace):
            self.trace.setVisible(reasoning)
        self.list.clear()
        for step in steps[:MAX_ROWS]:
            item = QListWidgetItem()
            item.setToolTip(elide(step.text, TIP_CHARS))
            self.list.addItem(item)
            self.paint_step(step, review)
        if len(steps) > MAX_ROWS:
            self.list.addItem(f"… {len(steps) - MAX_ROWS} more step(s) not listed")
        self.set_current(current)
        self.show_review(review, steps)

    def paint_step(self, step: Step, review: StepReview | None) -> None:
        """Repaint one step's row after its label changed (the rest stay as they are)."""
        item = self.list.item(step.index)
        if item is None:
            return
        label = review.label(step.index) if review is not None else None
        rating = label.rating if label is not None else None
        first = review is not None and review.first_error == step.index
        flag = " ?" if label is not None and label.flagged else ""
        fixed = " ✎" if label is not None and label.corrected else ""
        cut = elide(" ".join(step.text[: ROW_CHARS * 4].split()), ROW_CHARS)  # invisible characters shown
        item.setText(
            f"{step.index + 1}. [{_MARKS.get(rating, '  ')}]{flag}{fixed}{' ✗ first error' if first else ''}  {cut}"
        )
        item.setBackground(QBrush(_COLOURS[rating]) if rating in _COLOURS else QBrush())

    def set_current(self, index: int) -> None:
        if 0 <= index < self.list.count():
            self.list.setCurrentRow(index)
            self.list.scrollToItem(self.list.item(index))

    def show_review(self, review: StepReview | None, steps: list[Step]) -> None:
        index = self.list.currentRow()
        label = review.label(index) if review is not None and index >= 0 else None
        self.corrected.setText(
            f"Corrected: {elide(label.corrected, TIP_CHARS)}" if label is not None and label.corrected else ""
        )
        self.corrected.setVisible(bool(self.corrected.text()))
        rated = len([x for x in review.labels if x.rating is not None]) if review is not None else 0
        first = review.first_error if review is not None else None
        where = "not marked" if first is None else "none" if first < 0 else f"step {first + 1}"
        spent = (review.time_ms or 0) // 1000 if review is not None else 0
        self.summary.setText(
            f"{rated} of {len(steps)} rated · first error: {where} · time: {spent // 60}m {spent % 60:02d}s"
        )
        with blocked(self.finish):
            reason = review.finish_reason if review is not None else None
            found = self.finish.findData(reason or "")
            self.finish.setCurrentIndex(max(0, found))


class ReviewSteps:
    """The Review tab's step labelling: what is shown, the keys' actions, the time spent."""

    def __init__(self, host: StepsHost, panel: StepsPanel) -> None:
        self.host = host
        self.panel = panel
        self.trace: Trace = "cot"
        self.target: StepTarget | None = None
        self.steps: list[Step] = []
        self.review: StepReview | None = None
        self.index = 0
        self._since: float | None = None  # when the reviewer started on the target (monotonic)
        self.stale = True  # the list shown is not the current CoT's (filled when the tab is shown)
        panel.finishChosen.connect(lambda reason: self.finish(reason or None))
        panel.traceChosen.connect(self._trace_chosen)
        panel.list.currentRowChanged.connect(self._row_clicked)

    # ---- what is shown -----------------------------------------------------------------------

    def show_current(self, *, keep_step: bool = False) -> None:
        """Show the current panel's step list (called when the current CoT or sample changes).
        Only while the Steps tab is shown: otherwise when it is (splitting a long CoT costs)."""
        self.leave()
        if not self.panel.isVisible():
            self.stale = True
            return
        self.stale = False
        stored = self.host.stored
        cot_pk, any_current = self.host.current_target()
        library = self.host.library
        self.target, self.steps, self.review = None, [], None
        reasoning = False
        if stored is None or library is None or not any_current:
            self.panel.show_steps("No CoT", [], None, -1, False)
            return
        if cot_pk is None:
            self.steps = reference_steps(stored.sample.cot)
            target = StepTarget(stored.pk, None, "reference")
            title = "Steps of the reference CoT"
        else:
            position = stored.cot_pks.index(cot_pk) if cot_pk in stored.cot_pks else -1
            cot = stored.sample.generated_cot[position] if position >= 0 else None
            reasoning = cot is not None and bool(cot.reasoning)
            trace: Trace = self.trace if reasoning else "cot"
            if cot is None:
                self.steps = []
            elif trace == "reasoning":
                self.steps = reasoning_steps(cot.reasoning)
            else:
                self.steps = cot_steps(cot.cot, cot.extra)
            target = StepTarget(stored.pk, cot_pk, trace)
            title = "Steps of the reasoning trace" if trace == "reasoning" else "Steps of the CoT"
        self.target = target
        self.review = review_of(library.conn, target, self.host.author)
        if not keep_step or not 0 <= self.index < len(self.steps):
            self.index = 0
        self.panel.show_steps(f"{title} ({len(self.steps)})", self.steps, self.review, self.index, reasoning)
        self._since = time.monotonic()

    def leave(self) -> None:
        """The reviewer leaves the current step list: add the time spent to their row if they
        labelled it (a glance at a CoT records nothing)."""
        since, self._since = self._since, None
        library, target = self.host.library, self.target
        if since is None or library is None or target is None:
            return
        ms = int((time.monotonic() - since) * 1000)
        if ms <= 0:
            return
        try:
            with library.transaction() as conn:
                add_time_spent(conn, target, self.host.author, ms)  # only to a row they labelled
        except LibraryBusyError:
            pass  # another process writes: this visit's time is not counted

    def _trace_chosen(self, trace: str) -> None:
        self.trace = "reasoning" if trace == "reasoning" else "cot"
        self.show_current()

    def toggle_trace(self) -> None:
        """t: a CoT's text or its reasoning trace."""
        self.host.show_steps_tab()
        self.trace = "cot" if self.trace == "reasoning" else "reasoning"
        self.show_current()
        if self.trace == "reasoning" and self.target is not None and self.target.trace != "reasoning":
            self.host.show_message("This CoT has no reasoning trace")

    def _row_clicked(self, row: int) -> None:
        if 0 <= row < min(len(self.steps), MAX_ROWS) and row != self.index:
            self.index = row
            self.panel.show_review(self.review, self.steps)

    def move(self, delta: int) -> None:
        """Alt+Down / Alt+Up: the next or previous step."""
        self.host.show_steps_tab()
        if not self.steps:
            return
        self.index = max(0, min(min(len(self.steps), MAX_ROWS) - 1, self.index + delta))
        self.panel.set_current(self.index)
        self.panel.show_review(self.review, self.steps)

    # ---- the keys' actions -------------------------------------------------------------------

    def _ready(self) -> tuple[Library, StepTarget, Step] | None:
        self.host.show_steps_tab()
        library, target = self.host.library, self.target
        if library is None or target is None or not self.steps:
            self.host.show_message("No step to label here")
            return None
        return library, target, self.steps[self.index]

    def _push(self, make: Callable[[Library, StepTarget, Step], StepChange]) -> None:
        ready = self._ready()
        if ready is None:
            return
        library, target, step = ready
        change = make(library, target, step)
        if change.changes_anything:
            self.host.push_edit(step_edit(change))

    def rate(self, rating: int) -> None:
        blind = self.host.blind
        self._push(
            lambda lib, target, step: changes.rate(lib.conn, target, self.host.author, step, rating, blind=blind)
        )

    def flag(self) -> None:
        self._push(lambda lib, target, step: changes.flag(lib.conn, target, self.host.author, step))

    def first_error(self, *, none: bool = False) -> None:
        blind = self.host.blind
        self._push(
            lambda lib, target, step: changes.first_error_here(
                lib.conn, target, self.host.author, self.steps, -1 if none else step.index, blind=blind
            )
        )

    def finish(self, reason: str | None) -> None:
        self._push(lambda lib, target, _step: changes.finish(lib.conn, target, self.host.author, reason))

    def finish_digit(self, digit: int | None) -> None:
        """o then 1-4: a finish reason; o Delete: none."""
        if digit is None:
            current = self.review.finish_reason if self.review is not None else None
            if current is not None:
                self.finish(current)  # the same again clears it
            return
        if 1 <= digit <= len(FINISH_REASONS):
            self.finish(FINISH_REASONS[digit - 1])

    def correct(self) -> None:
        """w: write the corrected step in a dialog; saving pushes the change."""
        ready = self._ready()
        if ready is None:
            return
        _library, target, step = ready
        label = self.review.label(step.index) if self.review is not None else None
        dialog = CommentDialog(
            f"Corrected step {step.index + 1}", label.corrected or step.text if label else step.text, self.panel
        )
        dialog.setWindowTitle("Corrected step")
        dialog.editor.setPlaceholderText("The step as it should read (empty removes the correction)")

        def saved() -> None:
            library = self.host.library
            if library is None or self.target != target:
                return
            change = changes.correct(library.conn, target, self.host.author, step, dialog.text())
            if change.changes_anything:
                self.host.push_edit(step_edit(change))

        dialog.accepted.connect(saved)
        self.dialog = dialog
        dialog.open()
        dialog.editor.setFocus()

    # ---- writes ------------------------------------------------------------------------------

    def reveal(self, slot: EditSlot, description: str) -> None:
        """Show the step list an edit of ``slot`` changes before it is undone or redone."""
        target = _target(slot)
        self.host.show_steps_tab()
        if target.cot_pk is not None:
            self.trace = target.trace
            self.host.reveal_cot_pk(target.cot_pk, description)
        if self.target != target:
            self.show_current()

    def written(self, slot: EditSlot) -> None:
        """An edit of ``slot`` was written, undone or redone: repaint the rows that changed."""
        library, target = self.host.library, _target(slot)
        if library is not None and self.target == target and slot.author == self.host.author:
            old = self.review
            review = review_of(library.conn, target, self.host.author)
            self.review = None if review is None or review.empty else review
            for index in _changed_steps(old, self.review):  # only the rows that changed
                if 0 <= index < len(self.steps):
                    self.panel.paint_step(self.steps[index], self.review)
            self.panel.show_review(self.review, self.steps)
        self.host.steps_written()


def _target(slot: EditSlot) -> StepTarget:
    sample_pk, trace = slot.key
    return StepTarget(sample_pk, slot.cot_pk, trace)


def _changed_steps(before: StepReview | None, after: StepReview | None) -> set[int]:
    """The steps whose row shows something else after a change: their label changed, or the
    first-error mark moved to or from them."""
    old = {x.step: x for x in before.labels} if before is not None else {}
    new = {x.step: x for x in after.labels} if after is not None else {}
    out = {step for step in old.keys() | new.keys() if old.get(step) != new.get(step)}
    for review in (before, after):
        if review is not None and review.first_error is not None and review.first_error >= 0:
            out.add(review.first_error)
    return out
