"""The rating panel: a reviewer's rating of one CoT and of its critiques, with the critique cards.

Shows the reviewer's explanation score (0-5) and flaw dimensions of the current CoT, the other
reviewers' ratings of it, and the CoT's critiques (:class:`CritiqueList`, one focused). It only
shows and reports clicks through signals; the Review tab turns them (and its keys) into undoable
writes. Keys (docs/critiques-review.md): ``e`` then 0-5 explanation score (Delete clears),
``d`` then 1-8 toggles a dimension (0 clears them), ``f`` / Shift+F next / previous critique,
``r`` then 0-3 rates the focused critique (Delete clears).
"""

from __future__ import annotations

from collections.abc import Sequence

from thoughtdesk.core.critiques import DIMENSION_HELP, DIMENSIONS, Critique, ExplanationRating
from thoughtdesk.ui.critiques.cards import CritiqueList
from thoughtdesk.ui.qt import (
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QToolButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label

RATING_KEY_HELP = (
    "Keys: e then 0–5 explanation score (e Delete clears) · d then 1–8 flaw dimension (d 0 clears) · "
    "f / Shift+F next / previous critique · r then 0–3 rate the focused critique (r Delete clears) · "
    "Esc cancels · Ctrl+Z undo"
)
PREFIX_HINTS = {
    "e": "Explanation score: type 0–5 (Delete clears, Esc cancels)",
    "d": "Flaw dimension: type 1–8 to toggle (0 clears all, Esc cancels)",
    "r": "Critique rating: type 0–3 (Delete clears, Esc cancels)",
}


def others_ratings_text(ratings: Sequence[ExplanationRating], me: str) -> str:
    """Other reviewers' explanation ratings of one CoT, one line each, plain text."""
    lines = []
    for rating in ratings:
        if rating.author == me:
            continue
        score = f"{rating.score}/5" if rating.score is not None else "no score"
        dims = f" ({', '.join(rating.dimensions)})" if rating.dimensions else ""
        lines.append(f"{rating.author or '(no author)'}: {score}{dims}")
    return "\n".join(lines)


class RatingPanel(QWidget):
    """One reviewer's rating of the current CoT and its critiques; emits what was clicked."""

    scoreChosen = Signal(object)  # 0..5 or None
    dimensionToggled = Signal(str)
    critiqueRated = Signal(object)  # 0..3 or None, for the focused critique

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ratingPanel")
        self.rating: ExplanationRating | None = None
        self.title = plain_label("No CoT selected", bold=True, name="ratingTitle", selectable=True, keep_height=True)
        self.summary = plain_label("", name="ratingSummary", selectable=True, keep_height=True)
        self.hint = plain_label("", name="ratingHint", bold=True, keep_height=True)
        self.hint.setVisible(False)
        score_row = QHBoxLayout()
        score_row.addWidget(plain_label("Explanation score", keep_height=True))
        self.score_buttons: list[QToolButton] = []
        for score in range(6):
            button = QToolButton(objectName=f"explanationScore{score}")
            button.setText(str(score))
            button.setCheckable(True)
            button.setToolTip(f"Explanation score {score} of 5 (e then {score})")
            button.clicked.connect(lambda _checked, s=score: self._score_clicked(s))
            score_row.addWidget(button)
            self.score_buttons.append(button)
        score_row.addStretch(1)
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(0)
        self.dimension_checks: dict[str, QCheckBox] = {}
        for index, name in enumerate(DIMENSIONS):
            check = QCheckBox(f"{index + 1} {name}", objectName="dimensionCheck")
            check.setToolTip(f"{DIMENSION_HELP[name]} (d then {index + 1})")
            check.clicked.connect(lambda _checked, n=name: self.dimensionToggled.emit(n))
            grid.addWidget(check, index // 2, index % 2)
            self.dimension_checks[name] = check
        rate_row = QHBoxLayout()
        rate_row.addWidget(plain_label("Rate the focused critique", keep_height=True))
        self.critique_buttons: list[QToolButton] = []
        for score in range(4):
            button = QToolButton(objectName=f"critiqueScore{score}")
            button.setText(str(score))
            button.setCheckable(True)
            button.setToolTip(f"Critique rating {score} of 3 (r then {score})")
            button.clicked.connect(lambda _checked, s=score: self._critique_clicked(s))
            rate_row.addWidget(button)
            self.critique_buttons.append(button)
        rate_row.addStretch(1)
        self.others = plain_label("", name="otherRatings", selectable=True, keep_height=True)
        self.critique_list = CritiqueList(self, focusable=True)
        self.help = plain_label(RATING_KEY_HELP, name="ratingKeyHelp", selectable=True, keep_height=True)

        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.hint)
        layout.addLayout(score_row)
        layout.addLayout(grid)
        layout.addWidget(self.summary)
        layout.addWidget(self.others)
        layout.addLayout(rate_row)
        layout.addWidget(self.critique_list)
        layout.addWidget(self.help)
        layout.addStretch(1)
        self.setEnabled(False)

    def show_cot(
        self,
        title: str,
        rating: ExplanationRating | None,
        others: Sequence[ExplanationRating],
        critiques: Sequence[Critique],
        *,
        blind: bool,
        me: str,
        enabled: bool = True,
    ) -> None:
        """Show one CoT's rating by ``me``, the others' ratings and its critiques (focus on the first)."""
        self.title.setText(title)
        self.setEnabled(enabled)
        self.critique_list.show_critiques(critiques if enabled else [], blind=blind, me=me)
        self.show_rating(rating, others, me)
        self._show_critique_rating()

    def show_rating(self, rating: ExplanationRating | None, others: Sequence[ExplanationRating], me: str) -> None:
        """Show the reviewer's rating of the CoT (after it changed)."""
        self.rating = rating
        score = rating.score if rating is not None else None
        dims = set(rating.dimensions) if rating is not None else set()
        for value, button in enumerate(self.score_buttons):
            button.setChecked(score == value)
        for name, check in self.dimension_checks.items():
            check.setChecked(name in dims)
        if rating is None:
            self.summary.setText("Your rating: none yet")
        else:
            flaws = ", ".join(rating.dimensions) or "no flaw dimension"
            self.summary.setText(f"Your rating: {'—' if score is None else f'{score}/5'} · {flaws}")
        text = others_ratings_text(others, me)
        self.others.setText(f"Other reviewers:\n{text}" if text else "")
        self.others.setVisible(bool(text))

    def update_critique(self, critique: Critique) -> None:
        """A critique's ratings changed: show them."""
        self.critique_list.update_critique(critique)
        self._show_critique_rating()

    def move_focus(self, step: int) -> None:
        """Focus the next or previous critique."""
        self.critique_list.move_focus(step)
        self._show_critique_rating()

    def focus_critique(self, critique_pk: int) -> None:
        """Focus the critique with this primary key, if shown."""
        for index, critique in enumerate(self.critique_list.critiques):
            if critique.pk == critique_pk:
                self.critique_list.set_focus_index(index)
        self._show_critique_rating()

    def set_hint(self, prefix: str | None) -> None:
        """Show what the pending key (e, d or r) waits for; None hides the hint."""
        text = PREFIX_HINTS.get(prefix or "", "")
        self.hint.setText(text)
        self.hint.setVisible(bool(text))

    def _show_critique_rating(self) -> None:
        focused = self.critique_list.focused()
        mine = None
        if focused is not None:
            mine = next((r.score for r in focused.ratings if r.author == self.critique_list.me), None)
        for value, button in enumerate(self.critique_buttons):
            button.setEnabled(focused is not None)
            button.setChecked(mine == value)

    def _score_clicked(self, score: int) -> None:
        current = self.rating.score if self.rating is not None else None
        self.scoreChosen.emit(None if current == score else score)  # clicking the set score clears it

    def _critique_clicked(self, score: int) -> None:
        focused = self.critique_list.focused()
        mine = None
        if focused is not None:
            mine = next((r.score for r in focused.ratings if r.author == self.critique_list.me), None)
        self.critiqueRated.emit(None if mine == score else score)
