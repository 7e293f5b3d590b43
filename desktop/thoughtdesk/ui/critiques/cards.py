"""Critique cards: one model critique of a CoT, and the list of a CoT's critiques.

A :class:`CritiqueCard` shows the explanation score as a coloured badge ("3/5"), the flaw
dimension as a chip (its meaning in the tooltip), the critique model (not in blind mode), the
main flaw, general and specific feedback and the human ratings of the critique. An element the
parser could not read is shown as such with what the text had ("score: unparseable ('8/10')"),
never as a guess. Everything from the critique is plain text (labels in PlainText format, the
body inserted as text with formats), long fields are capped with "Show all" on demand.

:class:`CritiqueList` holds the cards of one CoT. Cards are pooled and reused from CoT to CoT
(the Review tab refills the list on every j / k), and one card can be *focused* (the one the
critique-rating keys act on).
"""

from __future__ import annotations

from collections.abc import Sequence

from thoughtdesk.core.critiques import DIMENSION_HELP, Critique, ParsedCritique
from thoughtdesk.ui.critiques.text import CAP_CHARS, FittedText, Part
from thoughtdesk.ui.qt import (
    QColor,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPalette,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.long_text import FullTextDialog, open_full_text

#: Badge backgrounds by explanation score band (black text on each: WCAG contrast > 12).
BADGE_COLOURS = {"low": "#f4b6b6", "mid": "#fbdca0", "high": "#b9e4bc", "none": "#dddddd"}
RAW_SHOWN = 40  # characters of an unparseable element's raw value shown in a badge or chip


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def unparseable(raw: str | None) -> str:
    """``unparseable ('8/10')``: the raw value shortened and quoted."""
    return f"unparseable ({one_line(raw or '', RAW_SHOWN)!r})"


def score_text(parsed: ParsedCritique) -> str:
    """The badge: ``"3/5"``, ``"score: unparseable ('8/10')"`` or ``"score: missing"``."""
    outcome = parsed.outcome("explanation_score")
    if outcome.status == "parsed" and parsed.explanation_score is not None:
        return f"{parsed.explanation_score:g}/5"
    if outcome.status == "unparseable":
        return f"score: {unparseable(outcome.raw)}"
    return "score: missing"


def score_band(parsed: ParsedCritique) -> str:
    score = parsed.explanation_score if parsed.outcome("explanation_score").status == "parsed" else None
    if score is None:
        return "none"
    return "low" if score < 2 else "mid" if score < 4 else "high"


def dimension_text(parsed: ParsedCritique) -> str:
    """The chip: the dimension's name, ``"no dimension"`` or ``"dimension: unparseable ('x')"``."""
    outcome = parsed.outcome("dimension")
    if outcome.status == "parsed" and parsed.dimension:
        return parsed.dimension
    if outcome.status == "unparseable":
        return f"dimension: {unparseable(outcome.raw)}"
    return "no dimension"


def element_text(parsed: ParsedCritique, element: str, value: str | None) -> str:
    """A text element as shown: its value, ``(none)``, ``(missing)`` or ``unparseable ('…')``."""
    outcome = parsed.outcome(element)
    if outcome.status == "unparseable":
        why = f": {outcome.why}" if outcome.why else ""
        return f"{unparseable(outcome.raw)}{why}"
    if outcome.status == "missing":
        return "(missing)"
    return value if value else "(none)"


def critique_title(critique: Critique, number: int, blind: bool) -> str:
    """``"Critique 2 · DS-13B"``; blind mode names no model."""
    return f"Critique {number}" if blind else f"Critique {number} · {critique.critique_model or 'unknown model'}"


def _critique_score(score: int | None) -> str:
    return "no score" if score is None else f"{score}/3"


def ratings_text(critique: Critique, me: str) -> str:
    """Human ratings of the critique: this reviewer's first, then the others' (``me`` empty:
    everyone's, as in the Samples detail)."""
    if not me:
        every = [f"{r.author or '(no author)'} {_critique_score(r.score)}" for r in critique.ratings]
        return "ratings: " + ", ".join(every) if every else "not rated by a person yet"
    mine = next((r for r in critique.ratings if r.author == me), None)
    parts = [f"your rating: {mine.score}/3" if mine is not None and mine.score is not None else "your rating: —"]
    others = [f"{r.author or '(no author)'} {_critique_score(r.score)}" for r in critique.ratings if r.author != me]
    if others:
        parts.append("others: " + ", ".join(others[:6]) + (f" (+{len(others) - 6})" if len(others) > 6 else ""))
    return " · ".join(parts)


def _fill(label: QLabel, background: str) -> None:
    palette = label.palette()
    palette.setColor(QPalette.ColorRole.Window, QColor(background))
    palette.setColor(QPalette.ColorRole.WindowText, QColor("#000000"))
    label.setPalette(palette)
    label.setAutoFillBackground(True)


class CritiqueCard(QFrame):
    """One critique: badge, dimension chip, model, main flaw, feedback, ratings."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("critiqueCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setProperty("focused", False)
        self.critique: Critique | None = None
        # Badge and chip wrap: an unparseable value ("score: unparseable ('…')") may be long.
        self.badge = plain_label("", name="critiqueScore", bold=True, keep_height=True)
        self.badge.setContentsMargins(6, 1, 6, 1)
        self.chip = plain_label("", name="critiqueDimension", keep_height=True)
        self.chip.setContentsMargins(6, 1, 6, 1)
        _fill(self.chip, "#e4e4f4")
        self.title = plain_label("", name="critiqueTitle", bold=True, selectable=True, keep_height=True)
        self.body = FittedText(self, name="critiqueBody")
        self.ratings = plain_label("", name="critiqueRatings", selectable=True, keep_height=True)
        self.show_all = QToolButton(objectName="critiqueShowAll")
        self.show_all.setText("Show all")
        self.show_all.setToolTip("Show the whole critique (long fields are cut)")
        self.show_all.clicked.connect(self._show_all)
        self.full_text_dialog: FullTextDialog | None = None
        header = QHBoxLayout()
        header.addWidget(self.badge)
        header.addWidget(self.chip)
        header.addWidget(self.title, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.body)
        footer = QHBoxLayout()
        footer.addWidget(self.ratings, 1)
        footer.addWidget(self.show_all)
        layout.addLayout(footer)

    def show_critique(self, critique: Critique, number: int = 1, *, blind: bool = False, me: str = "") -> None:
        """Show ``critique`` (the ``number``-th of its CoT); ``blind`` hides the model, ``me``
        is the reviewer whose rating is shown first."""
        self.critique = critique
        parsed = critique.parsed
        self.badge.setText(score_text(parsed))
        _fill(self.badge, BADGE_COLOURS[score_band(parsed)])
        self.chip.setText(dimension_text(parsed))
        self.chip.setToolTip(
            DIMENSION_HELP.get(parsed.dimension or "", "")
            if parsed.outcome("dimension").status == "parsed"
            else "The critique names no flaw dimension this program knows"
        )
        self.title.setText(critique_title(critique, number, blind))
        self.show_ratings(critique, me)
        self._fill_body(limit_cut=True)

    def show_ratings(self, critique: Critique, me: str) -> None:
        """Show the critique's human ratings again (after a rating changed)."""
        self.critique = critique
        self.ratings.setText(ratings_text(critique, me))

    def _parts(self) -> list[Part]:
        assert self.critique is not None
        p = self.critique.parsed
        flaw_outcome = p.outcome("main_flaw")
        flaw = (
            "(no flaw)"
            if flaw_outcome.status == "parsed" and p.main_flaw is None
            else element_text(p, "main_flaw", p.main_flaw)
        )
        parts = [
            Part("Main flaw:", flaw),
            Part("General:", element_text(p, "general_feedback", p.general_feedback)),
            Part("Specific:", element_text(p, "specific_feedback", p.specific_feedback)),
        ]
        # As the report does: when nothing could be read, or something could not, the critique
        # as the model wrote it (else a critique in another layout showed only "(missing)").
        readable = any((p.main_flaw, p.general_feedback, p.specific_feedback))
        if not readable or any(outcome.status == "unparseable" for outcome in p.outcomes.values()):
            parts.append(Part("As written:", self.critique.raw_text or "(empty)"))
        return parts

    def _fill_body(self, limit_cut: bool) -> None:
        cut = self.body.set_parts(self._parts(), limit=CAP_CHARS if limit_cut else None)
        if self.show_all.isHidden() == cut:
            self.show_all.setVisible(cut)

    def _show_all(self) -> None:
        """Every field whole in place; a critique too long for that opens in a viewer."""
        if self.critique is None:
            return
        self._fill_body(limit_cut=False)
        if self.show_all.isVisible():  # still cut: the whole of it in a viewer
            whole = "\n\n".join(f"{part.heading} {part.text}" for part in self._parts())
            self.full_text_dialog = open_full_text(self, self.title.text(), whole)

    def set_focused(self, focused: bool) -> None:
        """Frame the card the critique-rating keys act on (palette roles, not a style sheet)."""
        if bool(self.property("focused")) == focused:
            return
        self.setProperty("focused", focused)
        if focused:
            self.setFrameStyle(QFrame.Shape.Box | QFrame.Shadow.Plain)
            self.setLineWidth(2)
            self.setForegroundRole(QPalette.ColorRole.Highlight)
        else:
            self.setFrameStyle(QFrame.Shape.StyledPanel | QFrame.Shadow.Plain)
            self.setLineWidth(1)
            self.setForegroundRole(QPalette.ColorRole.WindowText)

    def texts(self) -> list[str]:
        """Every text shown (tests)."""
        return [self.badge.text(), self.chip.text(), self.title.text(), self.body.toPlainText(), self.ratings.text()]


class CritiqueList(QWidget):
    """The critiques of one CoT, one card each; one card may be focused (``focus_index``)."""

    def __init__(self, parent: QWidget | None = None, *, focusable: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("critiqueList")
        self.focusable = focusable
        self.critiques: list[Critique] = []
        self.focus_index = -1
        self.blind = False
        self.me = ""
        self._pool: list[CritiqueCard] = []
        self.heading = plain_label("", name="critiquesHeading", bold=True, keep_height=True)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._layout.addWidget(self.heading)

    @property
    def cards(self) -> list[CritiqueCard]:
        """The cards in use, in the critiques' order."""
        return self._pool[: len(self.critiques)]

    def show_critiques(self, critiques: Sequence[Critique], *, blind: bool = False, me: str = "") -> None:
        """Show these critiques (of one CoT); the focus goes to the first when focusable."""
        self.critiques, self.blind, self.me = list(critiques), blind, me
        count = len(self.critiques)
        self.heading.setText(f"Critiques ({count})" if count else "No critiques of this CoT")
        while len(self._pool) < count:
            card = CritiqueCard(self)
            self._layout.addWidget(card)
            self._pool.append(card)
        for number, (card, critique) in enumerate(zip(self._pool, self.critiques, strict=False), start=1):
            card.show_critique(critique, number, blind=blind, me=me)
            card.set_focused(False)
            card.setVisible(True)
        for card in self._pool[count:]:
            card.setVisible(False)
        self.focus_index = -1
        if self.focusable and count:
            self.set_focus_index(0)

    def update_critique(self, critique: Critique) -> None:
        """A critique's ratings changed: show them (matched by primary key)."""
        for index, old in enumerate(self.critiques):
            if old.pk == critique.pk:
                self.critiques[index] = critique
                self._pool[index].show_ratings(critique, self.me)

    def set_focus_index(self, index: int) -> None:
        """Focus card ``index`` (the critique-rating keys act on it)."""
        if not 0 <= index < len(self.critiques):
            return
        if 0 <= self.focus_index < len(self.critiques):
            self._pool[self.focus_index].set_focused(False)
        self.focus_index = index
        self._pool[index].set_focused(True)

    def move_focus(self, step: int) -> None:
        """Focus the next (+1) or previous (-1) critique, wrapping around."""
        if self.critiques:
            self.set_focus_index((max(self.focus_index, 0) + step) % len(self.critiques))

    def focused(self) -> Critique | None:
        """The focused critique, if any."""
        return self.critiques[self.focus_index] if 0 <= self.focus_index < len(self.critiques) else None

    def texts(self) -> list[str]:
        """Every text shown (tests)."""
        return [self.heading.text(), *(t for card in self.cards for t in card.texts())]
