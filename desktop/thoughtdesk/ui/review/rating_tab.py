"""The "Critiques & rating" side tab of the Review tab (``ReviewView.rating_tab``): the current
CoT's critiques and this reviewer's rating, filled only while the tab is in front (filling cards
lays out their text, so j / k and n stay as fast as without critiques), the prefix hints of
``e`` / ``d`` / ``r`` and ``f`` / ``Shift+F`` through the critiques.

:class:`RatingTab` is a part the :class:`~thoughtdesk.ui.review.view.ReviewView` has (not a
mixin); what it needs from the view is the :class:`RatingTabHost` protocol. The keys' edits are
:mod:`thoughtdesk.ui.review.ratings`.
"""

from __future__ import annotations

from typing import Protocol

from thoughtdesk.core.critiques import Critique, ExplanationRating
from thoughtdesk.ui.critiques.rating import RatingPanel
from thoughtdesk.ui.qt import QScrollArea, Qt, QTabWidget
from thoughtdesk.ui.review.compare.view import CompareView

#: The tab's index among the side tabs (Annotations, Critiques & rating, Steps).
TAB_INDEX = 1
_PREFIXES = {int(Qt.Key.Key_E): "e", int(Qt.Key.Key_D): "d", int(Qt.Key.Key_R): "r"}


class RatingTabHost(Protocol):
    """What :class:`RatingTab` needs from the Review tab."""

    @property
    def side_tabs(self) -> QTabWidget: ...

    @property
    def compare(self) -> CompareView: ...

    @property
    def author(self) -> str: ...

    @property
    def blind(self) -> bool: ...

    @property
    def critiques(self) -> dict[int, list[Critique]]: ...

    @property
    def explanation_ratings(self) -> dict[int, list[ExplanationRating]]: ...

    def current_cot_pk(self) -> int | None: ...

    def show_message(self, text: str) -> None: ...


class RatingTab:
    """The rating panel in its scroll area, and which CoT it shows."""

    def __init__(self, host: RatingTabHost) -> None:
        self.host = host
        self.panel = RatingPanel()
        self.scroll = QScrollArea(objectName="ratingScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.panel)
        #: The CoT the panel shows (-1: none yet, or stale).
        self.shown_cot: int | None = -1

    def my_rating(self, cot_pk: int) -> ExplanationRating | None:
        """This reviewer's rating of ``cot_pk``, as read with the sample or after the last change."""
        return next((r for r in self.host.explanation_ratings.get(cot_pk, []) if r.author == self.host.author), None)

    def forget(self) -> None:
        """The CoT shown, or its critiques, changed: filled again when the tab is shown."""
        self.shown_cot = -1
        self.fill()

    def fill(self, force: bool = False) -> None:
        """Show the current CoT's critiques and rating, if the tab is in front and shows another
        CoT (or ``force``)."""
        host = self.host
        if host.side_tabs.currentIndex() != TAB_INDEX:
            return
        cot_pk = host.current_cot_pk()
        if cot_pk == self.shown_cot and not force:
            return
        self.shown_cot = cot_pk
        index = host.compare.current_index()
        if cot_pk is None:
            text = "The reference CoT is not rated here" if index >= 0 else "No CoT"
            self.panel.show_cot(text, None, [], [], blind=host.blind, me=host.author, enabled=False)
            return
        self.panel.show_cot(
            f"Rating {host.compare.panels[index].title.text()}",
            self.my_rating(cot_pk),
            host.explanation_ratings.get(cot_pk, []),
            host.critiques.get(cot_pk, []),
            blind=host.blind,
            me=host.author,
        )

    def ratings_read(self, cot_pk: int) -> None:
        """``cot_pk``'s ratings and critiques were read again: show them if the panel shows it."""
        if cot_pk == self.host.current_cot_pk() and cot_pk == self.shown_cot:
            self.panel.show_rating(
                self.my_rating(cot_pk), self.host.explanation_ratings.get(cot_pk, []), self.host.author
            )
            for critique in self.host.critiques.get(cot_pk, []):
                self.panel.update_critique(critique)

    def show(self) -> None:
        """Bring the tab to the front (filled for the current CoT)."""
        self.host.side_tabs.setCurrentIndex(TAB_INDEX)
        self.fill()

    def focused_critique(self) -> Critique | None:
        """The critique of the current CoT the rating keys act on."""
        self.show()
        return self.panel.critique_list.focused() if self.host.current_cot_pk() is not None else None

    def focus_critique(self, critique_pk: int) -> None:
        self.host.side_tabs.setCurrentIndex(TAB_INDEX)
        self.panel.focus_critique(critique_pk)

    def move_critique(self, step: int) -> None:
        """Focus the current CoT's next (+1) or previous (-1) critique (f / Shift+F)."""
        self.show()
        if not self.panel.critique_list.critiques:
            self.host.show_message("This CoT has no critiques")
            return
        self.panel.move_focus(step)

    def prefix_pending(self, key: int | None) -> None:
        """A prefix key (``e``, ``d``, ``r``) waits for its digit: the panel says what it does."""
        prefix = _PREFIXES.get(key or -1)
        if prefix is not None:
            self.show()  # the rating shows what the key does
        self.panel.set_hint(prefix)
