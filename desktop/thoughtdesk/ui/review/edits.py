"""The Review tab's edits: every change is an ``AnnotationOp`` pushed on the undo stack.

:class:`ReviewEditsMixin` is mixed into :class:`~thoughtdesk.ui.review.view.ReviewView`; it uses
the view's ``store``, ``undo_stack``, ``compare``, ``label_set``, ``reviews``, ``author`` and
``message`` signal. The plain-text helpers for review summaries live here too.
"""

from __future__ import annotations

from thoughtdesk.core.library.queries import cot_sample
from thoughtdesk.core.review import AnnotationOp, CotReview, StoredAnnotation
from thoughtdesk.ui.review.annotation_panel import short
from thoughtdesk.ui.review.commands import AnnotationCommand
from thoughtdesk.ui.review.dialogs import CommentDialog
from thoughtdesk.ui.settings.options import user_name


def reviewer_name() -> str:
    """The reviewer: the user's name from Settings (see :func:`thoughtdesk.ui.settings.options.user_name`)."""
    return user_name() or "reviewer"


def review_summary(review: CotReview, names: dict[str, str]) -> str:
    """One plain-text line about a review: labels on, span labels, preferred, score, comment."""
    parts = [", ".join(names.get(k, k) for k, on in review.labels.items() if on)]
    if review.spans:
        parts.append(f"{len(review.spans)} span label{'s' if len(review.spans) != 1 else ''}")
    if review.preferred:
        parts.append("★ preferred")
    if review.quality is not None:
        parts.append(f"quality {review.quality}/5")
    if review.comment:
        parts.append("comment")
    return " · ".join(p for p in parts if p)


def others_text(notes: list[StoredAnnotation], me: str) -> str:
    """Other reviewers' annotations on one CoT, one line each, plain text."""
    lines = []
    for note in notes:
        if note.author == me:
            continue
        value = note.value if isinstance(note.value, str) else str(note.value).lower()
        where = f" on “{short(note.span.text, 30)}”" if note.span is not None else ""
        lines.append(f"{note.author or '(no author)'}: {note.key}{where} = {short(value, 80)}")
    return "\n".join(lines)


class ReviewEditsMixin:
    """Label toggles, spans, preferred, quality and comments, each undoable."""

    def push(self, op: AnnotationOp) -> None:
        """Apply ``op`` through the undo stack (written at once)."""
        if self.store is not None:
            self.undo_stack.push(AnnotationCommand(self.store, op, self._after_change, self._failed, self.reveal_cot))

    def reveal_cot(self, op: AnnotationOp) -> None:
        """Show the CoT ``op`` changes (its sample first, if another is shown) and make it current.

        Called before an undo or redo, so a change is never undone out of sight. A CoT whose
        sample is not shown because the filters hide it is still changed, and said so.
        """
        if op.cot_pk not in self.cot_pks and self.library is not None:
            sample_pk = cot_sample(self.library, op.cot_pk)
            if sample_pk is None:
                return  # the CoT is gone; the write reports it
            if self.queue is not None and sample_pk in self.queue.sample_pks:
                self.go_to_queue_index(self.queue.sample_pks.index(sample_pk))
            else:
                self.show_sample(sample_pk)
        if op.cot_pk in self.cot_pks:
            index = self.cot_pks.index(op.cot_pk)
            if index != self.compare.current_index():
                self.compare.set_current(index)
                self._show_current()
            if self.compare.panels[index].isHidden():
                self.message.emit(f"{op.description}: the CoT is hidden by the filters")

    def _after_change(self, op: AnnotationOp) -> None:
        if op.cot_pk in self.cot_pks:
            index = self.cot_pks.index(op.cot_pk)
            self._refresh_cot(index, op.cot_pk)
            if index == self.compare.current_index():
                self._show_current()
        self._notify_timer.start()

    def _failed(self, op: AnnotationOp, error: Exception) -> None:
        self.message.emit(f"Could not save “{op.description}”: {error}")

    def _writable_cot(self) -> int | None:
        cot_pk = self.current_cot_pk()
        if cot_pk is None or self.store is None:
            self.message.emit("Choose a generated CoT first (j / k)")
        return cot_pk

    def toggle_label_digit(self, digit: int) -> None:
        """Number key: toggle the label with this shortcut on the selection, else on the CoT."""
        label = self.label_set.by_shortcut(digit) if self.label_set else None
        if label is None:
            self.message.emit(f"No label on key {digit} in this label set")
            return
        self.toggle_label_key(label.key, use_selection=True)

    def toggle_label_key(self, key: str, use_selection: bool = False) -> None:
        cot_pk = self._writable_cot()
        if cot_pk is None:
            return
        panel = self.compare.panels[self.compare.current_index()]
        selected = panel.selected_range() if use_selection else None
        try:
            span = self.store.span(cot_pk, *selected) if selected else None
            op = self.store.plan_toggle_label(cot_pk, key, span)
        except (ValueError, KeyError) as error:
            self.message.emit(str(error))
            return
        self.push(op)
        if selected:
            panel.select_range(selected[1], selected[1])  # drop the selection so the mark shows

    def _remove_span(self, key: str, span) -> None:
        cot_pk = self._writable_cot()
        if cot_pk is not None:
            self.push(self.store.plan_toggle_label(cot_pk, key, span))

    def toggle_preferred(self) -> None:
        cot_pk = self._writable_cot()
        if cot_pk is not None:
            self.set_preferred(not self.reviews.get(cot_pk, CotReview(cot_pk, self.author)).preferred)

    def set_preferred(self, preferred: bool) -> None:
        cot_pk = self._writable_cot()
        if cot_pk is not None:
            self.push(self.store.plan_set_preferred(cot_pk, preferred))

    def set_quality(self, score: int | None) -> None:
        cot_pk = self._writable_cot()
        if cot_pk is not None:
            self.push(self.store.plan_set_quality(cot_pk, score))

    def edit_comment(self) -> None:
        """Open the comment editor for the current CoT (c); saving pushes an undoable change."""
        cot_pk = self._writable_cot()
        if cot_pk is None:
            return
        review = self.reviews.get(cot_pk) or self.store.review(cot_pk)
        title = self.compare.panels[self.compare.current_index()].title.text()
        dialog = CommentDialog(f"Comment on {title}", review.comment, self)
        dialog.accepted.connect(lambda: self._comment_saved(cot_pk, dialog.text()))
        self.comment_dialog = dialog
        dialog.open()
        dialog.editor.setFocus()

    def _comment_saved(self, cot_pk: int, text: str) -> None:
        op = self.store.plan_set_comment(cot_pk, text)
        if op.before != op.after:
            self.push(op)
