"""Undo and redo of annotation changes: a ``QUndoCommand`` around a core ``AnnotationOp``.

The core plans an op (slot, value before, value after) without writing; pushing the command on
the review view's ``QUndoStack`` applies it (``redo``), ``undo`` reverts it. Each of those is
one committed transaction, so every step is saved at once with the author and the time.
Undoing or redoing a change of a CoT that is not the current one first shows that CoT (and its
sample), so the reviewer sees what changes.
"""

from __future__ import annotations

from collections.abc import Callable

from thoughtdesk.core.review import AnnotationOp, AnnotationStore
from thoughtdesk.ui.qt import QUndoCommand

ChangeCallback = Callable[[AnnotationOp], None]
ErrorCallback = Callable[[AnnotationOp, Exception], None]
RevealCallback = Callable[[AnnotationOp], None]


class AnnotationCommand(QUndoCommand):
    """One annotation change. A change that fails to write is marked obsolete, so the stack
    drops it instead of offering to undo something that never happened."""

    def __init__(
        self,
        store: AnnotationStore,
        op: AnnotationOp,
        on_change: ChangeCallback,
        on_error: ErrorCallback,
        reveal: RevealCallback | None = None,
    ) -> None:
        super().__init__(op.description or f"Change {op.key}")
        self.store = store
        self.op = op
        self.on_change = on_change
        self.on_error = on_error
        self.reveal = reveal
        self._pushed = False  # the first redo is the push itself: the CoT is already shown

    def redo(self) -> None:
        if self._pushed and self.reveal is not None:
            self.reveal(self.op)
        self._pushed = True
        self._run(self.store.apply)

    def undo(self) -> None:
        if self.reveal is not None:
            self.reveal(self.op)
        self._run(self.store.revert)

    def _run(self, write: Callable[[AnnotationOp], None]) -> None:
        try:
            write(self.op)
        except Exception as error:  # a locked or read-only file, a CoT deleted meanwhile...
            self.setObsolete(True)
            self.on_error(self.op, error)
            return
        self.on_change(self.op)
