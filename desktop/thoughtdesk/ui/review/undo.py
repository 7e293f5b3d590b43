"""The Review tab's one undo stack and its wiring (``ReviewView.undo``).

Every part of the tab that edits (annotations ``edits.py``, ratings ``ratings.py``, pairwise
preferences ``preferences.py``, step labels ``steps.py``) plans a core
:class:`~thoughtdesk.core.review.undo.PlannedEdit` and hands it to :meth:`ReviewUndo.push`, which
refuses it on a read-only library and otherwise pushes a
:class:`~thoughtdesk.ui.review.commands.ReviewCommand` on :attr:`ReviewUndo.stack`. The commands
come back here to show an edit before it is undone (:meth:`reveal_edit`), to show it once
written (:meth:`edit_written`) and to wait for another process (:class:`LaterWrites`); each kind
of slot is shown by the part that owns it. Ctrl+Z / Ctrl+Shift+Z (the view's keys) and the
Review menu's Undo / Redo drive :attr:`stack`.
"""

from __future__ import annotations

from typing import Protocol

from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.undo import EditSlot, PlannedEdit
from thoughtdesk.ui.qt import QObject, QUndoStack
from thoughtdesk.ui.review.commands import ReviewCommand, Write
from thoughtdesk.ui.review.later_writes import LaterWrites


class StepsPart(Protocol):
    def reveal(self, slot: EditSlot, description: str) -> None: ...

    def written(self, slot: EditSlot) -> None: ...


class UndoHost(Protocol):
    """What :class:`ReviewUndo` needs from the Review tab."""

    @property
    def library(self) -> Library | None: ...

    @property
    def steps(self) -> StepsPart: ...

    def reveal_cot_pk(self, cot_pk: int, description: str, critique_pk: int | None = None) -> None:
        """Show ``cot_pk`` (its sample first; ``critique_pk`` focused in the rating panel)."""
        ...

    def cot_written(self, cot_pk: int) -> None:
        """An annotation of ``cot_pk`` changed: show it."""
        ...

    def ratings_written(self, cot_pk: int) -> None:
        """A rating of ``cot_pk`` or of its critiques, or a preference of it, changed: show it."""
        ...

    def show_message(self, text: str) -> None: ...


class ReviewUndo:
    """The one undo stack of the Review tab (see the module docstring); the commands' host."""

    def __init__(self, host: UndoHost, parent: QObject) -> None:
        self.host = host
        self.stack = QUndoStack(parent)
        #: Changes the GUI thread could not write while another process writes (see later_writes).
        self.later = LaterWrites(host.show_message, parent)

    def set_library(self, library: Library) -> None:
        """Another library: the history of the last one is dropped."""
        self.later.path = library.path
        self.stack.clear()

    def push(self, planned: PlannedEdit) -> None:
        """Write ``planned`` as an undoable command (nothing is tried on a read-only library)."""
        library = self.host.library
        if library is None:
            return
        if library.read_only_reason is not None:
            self.show_message(library.read_only_reason)
            return
        self.stack.push(ReviewCommand(self, planned))

    # ---- the commands' host ------------------------------------------------------------------

    @property
    def library(self) -> Library | None:
        return self.host.library

    def reveal_edit(self, slot: EditSlot, description: str) -> None:
        if slot.kind == "steps":
            self.host.steps.reveal(slot, description)
        elif slot.cot_pk is not None:
            self.host.reveal_cot_pk(slot.cot_pk, description, slot.critique_pk)

    def edit_written(self, slot: EditSlot) -> None:
        if slot.kind == "steps":
            self.host.steps.written(slot)
        elif slot.cot_pk is None:
            return
        elif slot.kind == "annotation":
            self.host.cot_written(slot.cot_pk)
        else:
            self.host.ratings_written(slot.cot_pk)

    def show_message(self, text: str) -> None:
        self.host.show_message(text)

    def writes_pending(self) -> bool:
        return self.later.pending

    def write_later(self, command: ReviewCommand, write: Write) -> None:
        self.later.add(command, write)
