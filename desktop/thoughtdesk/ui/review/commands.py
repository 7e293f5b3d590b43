"""Undo and redo of annotation changes: a ``QUndoCommand`` around a core ``AnnotationOp``.

The core plans an op (slot, value before, value after) without writing; pushing the command on
the review view's ``QUndoStack`` applies it (``redo``), ``undo`` reverts it. Each of those is
one committed transaction, so every step is saved at once with the author and the time.
Undoing or redoing a change of a CoT that is not the current one first shows that CoT (and its
sample), so the reviewer sees what changes.
"""

from __future__ import annotations

from collections.abc import Callable

from thoughtdesk.core.library.store import Library, LibraryBusyError
from thoughtdesk.core.review import AnnotationOp, AnnotationStore
from thoughtdesk.ui.qt import QUndoCommand

ChangeCallback = Callable[[AnnotationOp], None]
ErrorCallback = Callable[[AnnotationOp, Exception], None]
RevealCallback = Callable[[AnnotationOp], None]
#: ``(command, write)``: the GUI thread gave up waiting for another process; ``write(library)``
#: does the change on a worker's connection.
BusyCallback = Callable[[QUndoCommand, Callable[[Library], None]], None]


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
        on_busy: BusyCallback | None = None,
        pending: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(op.description or f"Change {op.key}")
        self.store = store
        self.op = op
        self.on_change = on_change
        self.on_error = on_error
        self.reveal = reveal
        self.on_busy = on_busy
        self.pending = pending  # changes already wait for another process: this one queues behind them
        self._pushed = False  # the first redo is the push itself: the CoT is already shown

    def redo(self) -> None:
        if self._pushed and self.reveal is not None:
            self.reveal(self.op)
        self._pushed = True
        self._run(forward=True)

    def undo(self) -> None:
        if self.reveal is not None:
            self.reveal(self.op)
        self._run(forward=False)

    def _run(self, *, forward: bool) -> None:
        author, op = self.store.author, self.op

        def write(library: Library) -> None:  # the same change on a worker's connection
            store = AnnotationStore(library, author)
            (store.apply if forward else store.revert)(op)

        if self.on_busy is not None and self.pending is not None and self.pending():
            self.on_busy(self, write)
            return
        try:
            (self.store.apply if forward else self.store.revert)(self.op)
        except LibraryBusyError as error:  # another process writes: a worker waits for it, not the GUI
            if self.on_busy is None:
                self.setObsolete(True)
                self.on_error(self.op, error)
                return
            self.on_busy(self, write)
            return
        except Exception as error:  # a locked or read-only file, a CoT deleted meanwhile...
            self.setObsolete(True)
            self.on_error(self.op, error)
            return
        self.on_change(self.op)
