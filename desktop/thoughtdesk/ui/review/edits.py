"""The Review tab's annotation edits: every change an ``AnnotationOp`` planned by the core, pushed
on the review's one undo stack as a :class:`~thoughtdesk.core.review.undo.PlannedEdit`.

:class:`ReviewEdits` is a part the :class:`~thoughtdesk.ui.review.view.ReviewView` has (not a
mixin): what it needs from the view is the :class:`EditsHost` protocol, which the view
implements. The plain-text helpers for review summaries live here too.
"""

from __future__ import annotations

from typing import Protocol

from thoughtdesk.core.review import AnnotationOp, AnnotationStore, CotReview, LabelSet, Span, StoredAnnotation
from thoughtdesk.core.review.undo import PlannedEdit, annotation_edit
from thoughtdesk.ui.qt import QWidget
from thoughtdesk.ui.review.annotation_panel import short
from thoughtdesk.ui.review.compare.cot_panel import CotPanel
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


#: Characters of other reviewers' text values read for :func:`others_text`, which looks at
#: far fewer (``short``: 4 x 80), so a value cut here shows exactly as the whole one would.
OTHERS_CHARS = 10_000


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


class EditsHost(Protocol):
    """What :class:`ReviewEdits` needs from the Review tab: its state and its current CoT."""

    @property
    def store(self) -> AnnotationStore | None:
        """Where annotations are written (None before a library is open)."""
        ...

    @property
    def label_set(self) -> LabelSet | None:
        """The label set in use (number keys toggle its labels)."""
        ...

    @property
    def reviews(self) -> dict[int, CotReview]:
        """This reviewer's review of each CoT shown, by CoT key."""
        ...

    @property
    def author(self) -> str:
        """The reviewer (an empty review of a CoT is theirs)."""
        ...

    def current_cot_pk(self) -> int | None:
        """The current generated CoT (None: the reference or nothing)."""
        ...

    def current_panel(self) -> CotPanel | None:
        """The compare-view panel of the current CoT (its selection and title)."""
        ...

    def show_message(self, text: str) -> None:
        """A plain-text status message for the user."""
        ...

    def read_only_reason(self) -> str | None:
        """Why nothing can be written (the library opened read-only), or None."""
        ...

    def push_edit(self, planned: PlannedEdit) -> None:
        """Write ``planned`` through the review's one undo stack."""
        ...


class ReviewEdits:
    """Label toggles, spans, preferred, quality and comments of the current CoT, each undoable.

    Every change is planned by the host's :class:`AnnotationStore` and pushed through the host
    (:meth:`EditsHost.push_edit`), which writes it at once.
    """

    def __init__(self, host: EditsHost, dialog_parent: QWidget) -> None:
        self.host = host
        self._dialog_parent = dialog_parent
        #: The open comment editor, if any.
        self.comment_dialog: CommentDialog | None = None

    def push(self, op: AnnotationOp) -> None:
        """Apply ``op`` through the undo stack (written at once; refused on a read-only library)."""
        self.host.push_edit(annotation_edit(op))

    def _writable_cot(self) -> tuple[int, AnnotationStore] | None:
        """The current CoT and the store to write it with, or None (said to the user)."""
        reason = self.host.read_only_reason()
        if reason is not None:
            self.host.show_message(reason)
            return None
        cot_pk, store = self.host.current_cot_pk(), self.host.store
        if cot_pk is None or store is None:
            self.host.show_message("Choose a generated CoT first (j / k)")
            return None
        return cot_pk, store

    def toggle_label_digit(self, digit: int) -> None:
        """Number key: toggle the label with this shortcut on the selection, else on the CoT."""
        label_set = self.host.label_set
        label = label_set.by_shortcut(digit) if label_set else None
        if label is None:
            self.host.show_message(f"No label on key {digit} in this label set")
            return
        self.toggle_label_key(label.key, use_selection=True)

    def toggle_label_key(self, key: str, use_selection: bool = False) -> None:
        """Toggle label ``key`` on the current CoT, or with ``use_selection`` on its selected text."""
        writable = self._writable_cot()
        panel = self.host.current_panel()
        if writable is None or panel is None:
            return
        cot_pk, store = writable
        if use_selection and panel.cot.shows_thinking and panel.text_view.textCursor().hasSelection():
            self.host.show_message("Span labels mark the visible text: switch off Thinking to label this span")
            return
        selected = panel.selected_range() if use_selection else None
        try:
            span = store.span(cot_pk, *selected) if selected else None
            op = store.plan_toggle_label(cot_pk, key, span)
        except (ValueError, KeyError) as error:
            self.host.show_message(str(error))
            return
        self.push(op)
        if selected:
            panel.select_range(selected[1], selected[1])  # drop the selection so the mark shows

    def remove_span(self, key: str, span: Span) -> None:
        """Remove span label ``key`` on ``span`` of the current CoT."""
        writable = self._writable_cot()
        if writable is not None:
            cot_pk, store = writable
            self.push(store.plan_toggle_label(cot_pk, key, span))

    def toggle_preferred(self) -> None:
        """Mark the current CoT as the preferred one of its sample, or unmark it (s)."""
        writable = self._writable_cot()
        if writable is not None:
            cot_pk, _store = writable
            self.set_preferred(not self.host.reviews.get(cot_pk, CotReview(cot_pk, self.host.author)).preferred)

    def set_preferred(self, preferred: bool) -> None:
        """Set or clear the current CoT's preferred mark."""
        writable = self._writable_cot()
        if writable is not None:
            cot_pk, store = writable
            self.push(store.plan_set_preferred(cot_pk, preferred))

    def set_quality(self, score: int | None) -> None:
        """Score the current CoT 1-5 (None clears the score)."""
        writable = self._writable_cot()
        if writable is not None:
            cot_pk, store = writable
            self.push(store.plan_set_quality(cot_pk, score))

    def edit_comment(self) -> None:
        """Open the comment editor for the current CoT (c); saving pushes an undoable change."""
        writable = self._writable_cot()
        panel = self.host.current_panel()
        if writable is None or panel is None:
            return
        cot_pk, store = writable
        review = self.host.reviews.get(cot_pk) or store.review(cot_pk)
        dialog = CommentDialog(f"Comment on {panel.title.text()}", review.comment, self._dialog_parent)
        dialog.accepted.connect(lambda: self._comment_saved(cot_pk, dialog.text()))
        self.comment_dialog = dialog
        dialog.open()
        dialog.editor.setFocus()

    def _comment_saved(self, cot_pk: int, text: str) -> None:
        store = self.host.store  # the reviewer's name may have changed while the editor was open
        if store is None:
            return
        op = store.plan_set_comment(cot_pk, text)
        if op.before != op.after:
            self.push(op)
