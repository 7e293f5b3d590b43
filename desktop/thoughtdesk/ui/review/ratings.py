"""Human ratings in the Review tab: explanation score and flaw dimensions of the current CoT, and
the score of its focused critique, each an edit on the review's one undo stack.

Each is planned as a core :class:`~thoughtdesk.core.review.undo.PlannedEdit` and pushed as a
:class:`~thoughtdesk.ui.review.commands.ReviewCommand`, as every review edit is: written at once
(one committed transaction with the reviewer's name and the time); undo puts back exactly the
rows that were there (or none), unless another process rated since.
"""

from __future__ import annotations

from typing import Protocol

from thoughtdesk.core.critiques import DIMENSIONS, Critique, ExplanationRating
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.undo import PlannedEdit, critique_rating_edit, explanation_rating_edit


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

    def show_message(self, text: str) -> None:
        """A plain-text status message."""
        ...

    def push_edit(self, planned: PlannedEdit) -> None:
        """Write ``planned`` through the review's one undo stack."""
        ...


class ReviewRatings:
    """Explanation and critique ratings of the current CoT, each an edit on the undo stack."""

    def __init__(self, host: RatingsHost) -> None:
        self.host = host

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
        self.host.push_edit(explanation_rating_edit(cot_pk, self.host.author, score, dims, text))

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
        self.host.push_edit(critique_rating_edit(critique.pk, cot_pk, self.host.author, score, text))
