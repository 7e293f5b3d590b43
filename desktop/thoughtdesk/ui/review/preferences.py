"""Pairwise preferences in the Review tab (issue 26, point 3): ``[`` prefers the left CoT of the
pair, ``]`` the right one, ``=`` says they are equally good; the same key again takes the verdict
back. Each is an undoable command on the review's undo stack (``Ctrl+Z``), written at once with
the reviewer's name (``core.review.preferences``).

The pair is the current CoT and the next CoT shown to its right (the one to its left when it is
the last), left and right as the columns show them. Preferences are given blind by default: with
models shown, the first key hides them (blind mode) and asks for the key again, so a verdict is
never given by a name; the Settings value ``review/pairwise_blind`` (true by default) turns
this off, and each verdict stores whether it was blind.
"""

from __future__ import annotations

from typing import Protocol

from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.preferences import PairPreference, preference_of, restore_preference, set_preference
from thoughtdesk.core.settings.registry import PAIRWISE_BLIND
from thoughtdesk.ui.qt import QUndoStack
from thoughtdesk.ui.review.ratings import RatingCommand, RatingsHost, Write
from thoughtdesk.ui.settings.options import read

SIDES = ("left", "right", "tie")


class PreferencesHost(RatingsHost, Protocol):
    """What :class:`ReviewPreferences` needs from the Review tab, beyond a rating's needs."""

    @property
    def blind(self) -> bool:
        """Models and prompts hidden."""
        ...

    def set_blind(self, blind: bool) -> None:
        """Hide (or show) models and prompts."""
        ...

    def preference_pair(self) -> tuple[int, int, str, str] | None:
        """The pair's CoT keys (left, right) and their panel titles, or None (fewer than two)."""
        ...


def pairwise_blind() -> bool:
    """Whether pairwise preferences are given blind (the default)."""
    return read(PAIRWISE_BLIND)


def _writer(author: str, left: int, right: int, preferred: int | None, clear: bool, blind: bool):
    def apply(library: Library) -> Write:
        with library.transaction() as conn:
            if clear:
                before = preference_of(conn, author, left, right)
                restore_preference(conn, author, left, right, None)
            else:
                before = set_preference(conn, author, left, right, preferred, blind=blind)

        def restore(lib: Library) -> None:
            with lib.transaction() as conn:
                restore_preference(conn, author, left, right, before)

        return restore

    return apply


class ReviewPreferences:
    """The pairwise preference keys of the Review tab, each pushed on ``undo_stack``."""

    def __init__(self, host: PreferencesHost, undo_stack: QUndoStack) -> None:
        self.host = host
        self.undo_stack = undo_stack

    def mine(self, left: int, right: int) -> PairPreference | None:
        library = self.host.library
        return None if library is None else preference_of(library.conn, self.host.author, left, right)

    def prefer(self, side: str) -> None:
        """``left``, ``right`` or ``tie`` for the current pair; the verdict it has: taken back."""
        library = self.host.library
        if library is not None and library.read_only_reason is not None:
            self.host.show_message(library.read_only_reason)
            return
        pair = self.host.preference_pair()
        if library is None or pair is None:
            self.host.show_message("A pairwise preference needs two CoTs side by side (j / k chooses the left one)")
            return
        if not self.host.blind and pairwise_blind():
            self.host.set_blind(True)
            self.host.show_message("Pairwise preferences are given blind: models are hidden now; press the key again")
            return
        left, right, left_title, right_title = pair
        preferred = {"left": left, "right": right, "tie": None}[side]
        current = self.mine(left, right)
        clear = current is not None and current.preferred_cot_pk == preferred
        if clear:
            text = f"Take back the preference between {left_title} and {right_title}"
        elif preferred is None:
            text = f"{left_title} and {right_title} equally good"
        else:
            text = f"Prefer {left_title if side == 'left' else right_title} to {right_title if side == 'left' else left_title}"
        writer = _writer(self.host.author, left, right, preferred, clear, self.host.blind)
        self.undo_stack.push(RatingCommand(self.host, text, left, writer))
        self.host.show_message(text)
