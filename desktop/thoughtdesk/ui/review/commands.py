"""The Review tab's one undo command: a ``QUndoCommand`` around a core review edit.

Every undoable edit of the tab (labels, spans, comment, preferred, quality, explanation and
critique ratings, pairwise preferences, step labels) is planned by the core as a
:class:`~thoughtdesk.core.review.undo.PlannedEdit` and pushed on the view's one ``QUndoStack`` as
a :class:`ReviewCommand`. Pushing writes it (``redo``) and keeps the
:class:`~thoughtdesk.core.review.undo.ReviewEdit` (the slot's rows before and after); ``undo``
and ``redo`` write those rows back, each one committed transaction, refused with one line when
another process wrote the slot since (:class:`~thoughtdesk.core.review.undo.EditConflict`).
Undoing or redoing an edit of a CoT that is not the current one first shows that CoT (and its
sample, its critique or its step list), so nothing changes out of sight. A write that has to
wait for another process goes to the host's queue of later writes; one that fails is dropped
from the stack (never offered for undo).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from thoughtdesk.core.library.store import Library, LibraryBusyError
from thoughtdesk.core.review.undo import EditConflict, EditSlot, PlannedEdit, ReviewEdit, perform, redo, undo
from thoughtdesk.ui.qt import QUndoCommand

Write = Callable[[Library], None]


class CommandHost(Protocol):
    """What a :class:`ReviewCommand` needs from the Review tab."""

    @property
    def library(self) -> Library | None:
        """The library written to (None before one is open)."""
        ...

    def reveal_edit(self, slot: EditSlot, description: str) -> None:
        """Show what ``slot`` is about before an edit of it is undone or redone."""
        ...

    def edit_written(self, slot: EditSlot) -> None:
        """An edit of ``slot`` was written, undone or redone: show it."""
        ...

    def show_message(self, text: str) -> None:
        """A plain-text status message."""
        ...

    def writes_pending(self) -> bool:
        """Changes wait for another process (a new one queues behind them)."""
        ...

    def write_later(self, command: ReviewCommand, write: Write) -> None:
        """``command`` could not write while another process writes: ``write`` it on a worker's
        connection (the wait shown), then :meth:`ReviewCommand.written` or ``failed``."""
        ...


class ReviewCommand(QUndoCommand):
    """One review edit on the undo stack (see the module docstring)."""

    def __init__(self, host: CommandHost, planned: PlannedEdit) -> None:
        super().__init__(planned.description)
        self.host = host
        self.planned = planned
        self.slot = planned.slot
        #: The edit as written (None until the first write is done).
        self.edit: ReviewEdit | None = None
        self._pushed = False  # the first redo is the push itself: the CoT is already shown

    def redo(self) -> None:
        if not self._pushed:
            self._pushed = True
            self._run(self._perform)
            return
        self.host.reveal_edit(self.slot, self.text())
        self._run(self._redo)

    def undo(self) -> None:
        self.host.reveal_edit(self.slot, self.text())
        self._run(self._undo)

    def _perform(self, library: Library) -> None:
        self.edit = perform(library, self.planned)

    def _undo(self, library: Library) -> None:
        if self.edit is not None:  # None: the first write failed (and was reported)
            undo(library, self.edit)

    def _redo(self, library: Library) -> None:
        if self.edit is not None:
            redo(library, self.edit)

    def _run(self, write: Write) -> None:
        library = self.host.library
        try:
            if library is None:
                raise RuntimeError("no library is open")
            if self.host.writes_pending():  # queued behind the changes waiting for another process
                self.host.write_later(self, write)
                return
            write(library)
        except LibraryBusyError:  # another process writes: a worker waits for it, not the GUI
            self.host.write_later(self, write)
            return
        except Exception as error:  # a conflict, a locked or read-only file, a CoT deleted meanwhile...
            self.failed(error)
            return
        self.written()

    def written(self) -> None:
        """The write is done: the tab shows it."""
        self.host.edit_written(self.slot)

    def failed(self, error: BaseException) -> None:
        """The write could not be done: said in one line, and the command leaves the stack."""
        self.setObsolete(True)  # never offer to undo what was not written
        if isinstance(error, EditConflict):
            self.host.show_message(str(error))
        else:
            self.host.show_message(f"Could not save “{self.text()}”: {error}")
        self.host.edit_written(self.slot)  # what is stored now is shown
