"""Human ratings in the Review tab: explanation score and flaw dimensions of the current CoT, and
the score of its focused critique, each an undoable command on the review's undo stack.

A command writes at once (one committed transaction with the reviewer's name and the time) and
remembers what was there before (``set_explanation_rating`` / ``set_critique_rating`` return it),
so undo writes exactly the previous rating back (or removes the rating if there was none). As
with annotations, undoing a change of a CoT that is not shown first shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from thoughtdesk.core.critiques import (
    DIMENSIONS,
    Critique,
    ExplanationRating,
    set_critique_rating,
    set_explanation_rating,
)
from thoughtdesk.core.library.store import Library, LibraryBusyError
from thoughtdesk.ui.qt import QUndoCommand, QUndoStack

Write = Callable[[Library], None]


class RatingsHost(Protocol):
    """What :class:`ReviewRatings` needs from the Review tab."""

    @property
    def library(self) -> Library | None:
        """The library written to (None before one is open)."""
        ...

    @property
    def author(self) -> str:
        """The reviewer (the Settings user name)."""
        ...

    def current_cot_pk(self) -> int | None:
        """The current generated CoT (None: the reference or nothing)."""
        ...

    def my_explanation_rating(self, cot_pk: int) -> ExplanationRating | None:
        """The reviewer's rating of ``cot_pk`` as shown."""
        ...

    def focused_critique(self) -> Critique | None:
        """The critique the rating keys act on."""
        ...

    def reveal_cot_pk(self, cot_pk: int, description: str, critique_pk: int | None = None) -> None:
        """Show ``cot_pk`` (and focus ``critique_pk``) before a change of it is undone or redone."""
        ...

    def ratings_written(self, cot_pk: int) -> None:
        """A rating of ``cot_pk`` (or of one of its critiques) was written or undone: show it."""
        ...

    def show_message(self, text: str) -> None:
        """A plain-text status message."""
        ...

    def writes_pending(self) -> bool:
        """Changes wait for another process (a new one queues behind them)."""
        ...

    def write_later(self, command: QUndoCommand, write: Write, cot_pk: int) -> None:
        """``command`` could not write while another process writes: ``write`` it on a worker's
        connection (the wait shown), then show ``cot_pk`` again; obsolete if it cannot."""
        ...


class RatingCommand(QUndoCommand):
    """One rating change: ``apply`` writes the new rating and returns an ``undo`` writer for the
    rating it replaced. A write that fails marks the command obsolete (the stack drops it)."""

    def __init__(
        self,
        host: RatingsHost,
        description: str,
        cot_pk: int,
        apply: Callable[[Library], Write],
        critique_pk: int | None = None,
    ) -> None:
        super().__init__(description)
        self.host = host
        self.cot_pk = cot_pk
        self.critique_pk = critique_pk
        self.apply = apply
        self.restore: Write | None = None
        self._pushed = False  # the first redo is the push itself: the CoT is already shown

    def redo(self) -> None:
        if self._pushed:
            self.host.reveal_cot_pk(self.cot_pk, self.text(), self.critique_pk)
        self._pushed = True
        self._run(lambda library: self._apply(library))

    def _apply(self, library: Library) -> None:
        self.restore = self.apply(library)

    def undo(self) -> None:
        self.host.reveal_cot_pk(self.cot_pk, self.text(), self.critique_pk)
        restore = self.restore
        if restore is not None:
            self._run(restore)

    def _run(self, write: Write) -> None:
        library = self.host.library
        try:
            if library is None:
                raise RuntimeError("no library is open")
            if self.host.writes_pending():  # queued behind the changes waiting for another process
                self.host.write_later(self, write, self.cot_pk)
                return
            write(library)
        except LibraryBusyError:  # another process writes: a worker waits for it, not the GUI
            self.host.write_later(self, write, self.cot_pk)
            return
        except Exception as error:  # a locked or read-only file, a CoT deleted meanwhile...
            self.setObsolete(True)
            self.host.show_message(f"Could not save “{self.text()}”: {error}")
            return
        self.host.ratings_written(self.cot_pk)


def _explanation_writer(
    cot_pk: int, author: str, score: int | None, dims: tuple[str, ...]
) -> Callable[[Library], Write]:
    def apply(library: Library) -> Write:
        with library.transaction() as conn:
            before = set_explanation_rating(conn, cot_pk, author, score, dims)
        old_score, old_dims = (before.score, before.dimensions) if before is not None else (None, ())

        def restore(lib: Library) -> None:
            with lib.transaction() as conn:
                set_explanation_rating(conn, cot_pk, author, old_score, old_dims)

        return restore

    return apply


def _critique_writer(critique_pk: int, author: str, score: int | None) -> Callable[[Library], Write]:
    def apply(library: Library) -> Write:
        with library.transaction() as conn:
            before = set_critique_rating(conn, critique_pk, author, score)

        def restore(lib: Library) -> None:
            with lib.transaction() as conn:
                set_critique_rating(conn, critique_pk, author, before)

        return restore

    return apply


class ReviewRatings:
    """Explanation and critique ratings of the current CoT, each pushed on ``undo_stack``."""

    def __init__(self, host: RatingsHost, undo_stack: QUndoStack) -> None:
        self.host = host
        self.undo_stack = undo_stack

    def _current(self) -> int | None:
        library = self.host.library
        if library is not None and library.read_only_reason is not None:
            self.host.show_message(library.read_only_reason)  # nothing is tried, nothing fails
            return None
        cot_pk = self.host.current_cot_pk()
        if cot_pk is None or self.host.library is None:
            self.host.show_message("Choose a generated CoT first (j / k)")
            return None
        return cot_pk

    def set_score(self, score: int | None) -> None:
        """Explanation score 0-5 of the current CoT (None clears it; the dimensions stay)."""
        cot_pk = self._current()
        if cot_pk is None:
            return
        if score is not None and not 0 <= score <= 5:
            self.host.show_message(f"An explanation score is 0–5, not {score}")
            return
        mine = self.host.my_explanation_rating(cot_pk)
        dims = mine.dimensions if mine is not None else ()
        if mine is not None and mine.score == score or mine is None and score is None:
            return
        text = f"Explanation score {score}/5" if score is not None else "Clear explanation score"
        self._push_explanation(cot_pk, text, score, dims)

    def toggle_dimension_digit(self, digit: int | None) -> None:
        """``d`` then 1-8: toggle that flaw dimension; 0 (or Delete) clears them all."""
        if digit is None or digit == 0:
            self.clear_dimensions()
        elif 1 <= digit <= len(DIMENSIONS):
            self.toggle_dimension(DIMENSIONS[digit - 1])
        else:
            self.host.show_message(f"No flaw dimension on key {digit} (1–{len(DIMENSIONS)})")

    def toggle_dimension(self, name: str) -> None:
        """Toggle flaw dimension ``name`` on the current CoT."""
        cot_pk = self._current()
        if cot_pk is None:
            return
        mine = self.host.my_explanation_rating(cot_pk)
        dims = set(mine.dimensions) if mine is not None else set()
        on = name not in dims
        dims = dims | {name} if on else dims - {name}
        ordered = tuple(d for d in DIMENSIONS if d in dims)
        text = f"{'Add' if on else 'Remove'} flaw dimension {name}"
        self._push_explanation(cot_pk, text, mine.score if mine is not None else None, ordered)

    def clear_dimensions(self) -> None:
        """Remove every flaw dimension from the current CoT's rating."""
        cot_pk = self._current()
        if cot_pk is None:
            return
        mine = self.host.my_explanation_rating(cot_pk)
        if mine is not None and mine.dimensions:
            self._push_explanation(cot_pk, "Clear flaw dimensions", mine.score, ())

    def _push_explanation(self, cot_pk: int, text: str, score: int | None, dims: tuple[str, ...]) -> None:
        writer = _explanation_writer(cot_pk, self.host.author, score, dims)
        self.undo_stack.push(RatingCommand(self.host, text, cot_pk, writer))

    def rate_critique(self, score: int | None) -> None:
        """Score 0-3 of the focused critique (None clears it)."""
        cot_pk = self._current()
        if cot_pk is None:
            return
        critique = self.host.focused_critique()
        if critique is None or critique.pk is None:
            self.host.show_message("This CoT has no critique to rate")
            return
        if score is not None and not 0 <= score <= 3:
            self.host.show_message(f"A critique rating is 0–3, not {score}")
            return
        mine = next((r.score for r in critique.ratings if r.author == self.host.author), None)
        if mine == score:
            return
        text = f"Critique rating {score}/3" if score is not None else "Clear critique rating"
        writer = _critique_writer(critique.pk, self.host.author, score)
        self.undo_stack.push(RatingCommand(self.host, text, cot_pk, writer, critique.pk))
