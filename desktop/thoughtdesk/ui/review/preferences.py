"""Pairwise preferences in the Review tab (issue 26, point 3): ``[`` prefers the left CoT of the
pair, ``]`` the right one, ``=`` says they are equally good; the same key again takes the verdict
back. Each is an edit on the review's one undo stack (``Ctrl+Z``), written at once with the
reviewer's name (``core.review.preferences``, ``core.review.undo.preference_edit``).

The pair is the current CoT and the next CoT shown to its right (the one to its left when it is
the last), left and right as the columns show them. Preferences are given blind by default: with
models shown, the first key hides them (blind mode) and asks for the key again, so a verdict is
never given by a name; the Settings value ``review/pairwise_blind`` (true by default) turns
this off, and each verdict stores whether it was blind.
"""

from __future__ import annotations

from typing import Protocol

from thoughtdesk.core.library.reader import StoredSample
from thoughtdesk.core.review.preferences import PairPreference, preference_of, sample_preferences
from thoughtdesk.core.review.undo import preference_edit
from thoughtdesk.core.settings.registry import PAIRWISE_BLIND
from thoughtdesk.ui.review.compare.view import CompareView
from thoughtdesk.ui.review.ratings import RatingsHost
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

    @property
    def compare(self) -> CompareView:
        """The CoTs side by side (which are shown, which is current, their titles)."""
        ...

    @property
    def cot_pks(self) -> list[int | None]:
        """The CoT key of each compare-view panel (None: the reference)."""
        ...

    @property
    def stored(self) -> StoredSample | None:
        """The sample shown."""
        ...


def pairwise_blind() -> bool:
    """Whether pairwise preferences are given blind (the default)."""
    return read(PAIRWISE_BLIND)


class ReviewPreferences:
    """The pairwise preference keys of the Review tab, each an edit on the undo stack."""

    def __init__(self, host: PreferencesHost) -> None:
        self.host = host
        #: This reviewer's verdicts on the shown sample's CoTs, by pair (stored order).
        self.shown: dict[tuple[int, int], PairPreference] = {}

    def read_shown(self) -> bool:
        """Read this reviewer's verdicts on the shown sample again (one query); whether they changed."""
        library, stored, before = self.host.library, self.host.stored, self.shown
        self.shown = {}
        if library is not None and stored is not None:
            self.shown = {
                p.pair: p for p in sample_preferences(library.conn, stored.pk) if p.author == self.host.author
            }
        return before != self.shown

    def pair(self) -> tuple[int, int, str, str] | None:
        """The pair ``[`` / ``]`` / ``=`` judge: the current CoT and the next one shown to its right
        (to its left when it is the last), as (left, right, left title, right title)."""
        compare, cot_pks = self.host.compare, self.host.cot_pks
        shown = [i for i in compare.visible_indices() if cot_pks[i] is not None]
        current = compare.current_index()
        if len(shown) < 2 or current not in shown:
            return None
        at = shown.index(current)
        left, right = (shown[at], shown[at + 1]) if at + 1 < len(shown) else (shown[at - 1], shown[at])
        left_pk, right_pk = cot_pks[left], cot_pks[right]
        assert left_pk is not None and right_pk is not None
        return left_pk, right_pk, compare.panels[left].title.text(), compare.panels[right].title.text()

    def mine(self, left: int, right: int) -> PairPreference | None:
        library = self.host.library
        return None if library is None else preference_of(library.conn, self.host.author, left, right)

    def prefer(self, side: str) -> None:
        """``left``, ``right`` or ``tie`` for the current pair; the verdict it has: taken back."""
        library = self.host.library
        if library is not None and library.read_only_reason is not None:
            self.host.show_message(library.read_only_reason)
            return
        pair = self.pair()
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
        self.host.push_edit(
            preference_edit(
                self.host.author, left, right, preferred, clear=clear, blind=self.host.blind, description=text
            )
        )
        self.host.show_message(text)
