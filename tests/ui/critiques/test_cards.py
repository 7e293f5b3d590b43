"""Critique cards: hostile text stays plain, unparseable elements shown as such, blind mode, caps."""

from __future__ import annotations

import dataclasses

from thoughtdesk.core.critiques import Critique, CritiqueRating, ElementOutcome, ParsedCritique
from thoughtdesk.ui.critiques.cards import CritiqueCard, CritiqueList
from thoughtdesk.ui.critiques.text import CAP_CHARS
from thoughtdesk.ui.qt import QLabel, Qt
from thoughtdesk.ui.widgets.long_text import INLINE_ALL_CHARS

HOSTILE = '<b>bold</b> <img src=x> <a href="file:///etc/passwd">link</a> &amp;'


def critique(
    flaw: str | None = "The CoT says 'x'",
    *,
    model: str = "DS-13B",
    score: float | None = 2.0,
    outcomes: dict[str, ElementOutcome] | None = None,
    pk: int = 1,
    general: str | None = "Check each step.",
) -> Critique:
    parsed_outcomes = {e: ElementOutcome("parsed") for e in ("main_flaw", "dimension", "general_feedback")}
    parsed_outcomes["specific_feedback"] = ElementOutcome("missing")
    parsed_outcomes["explanation_score"] = ElementOutcome("parsed")
    parsed_outcomes.update(outcomes or {})
    parsed = ParsedCritique(flaw, "incorrect_reasoning", general, None, score, parsed_outcomes)
    return Critique(cot_pk=1, critique_model=model, raw_text="raw", parsed=parsed, pk=pk)


def test_hostile_text_is_shown_literally(qtbot):
    card = CritiqueCard()
    qtbot.addWidget(card)
    card.show_critique(critique(HOSTILE, model=HOSTILE, general=HOSTILE))
    for label in card.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText
    assert HOSTILE in card.title.text()
    body = card.body.toPlainText()
    assert body.count(HOSTILE) == 2  # main flaw and general feedback, every character kept
    # Nothing was parsed as markup: no image or anchor in the document, the tags are escaped.
    formats = []
    block = card.body.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            formats.append(it.fragment().charFormat())
            it += 1
        block = block.next()
    assert formats and not any(f.isAnchor() or f.isImageFormat() for f in formats)
    assert "&lt;img src=x&gt;" in card.body.document().toHtml()


def test_score_badge_dimension_chip_and_ratings(qtbot):
    card = CritiqueCard()
    qtbot.addWidget(card)
    item = critique(score=3.0)
    item.ratings = [CritiqueRating("alice", 2), CritiqueRating("bob", 3)]
    card.show_critique(item, 2, me="alice")
    assert card.badge.text() == "3/5"
    assert card.chip.text() == "incorrect_reasoning"
    assert "wrong leap" in card.chip.toolTip()
    assert card.title.text() == "Critique 2 · DS-13B"
    assert card.ratings.text() == "your rating: 2/3 · others: bob 3/3"
    assert "Specific: (missing)" in card.body.toPlainText()


def test_unparseable_elements_are_shown_with_their_raw_value(qtbot):
    card = CritiqueCard()
    qtbot.addWidget(card)
    outcomes = {
        "explanation_score": ElementOutcome("unparseable", raw="8/10", why="a score must be 0-5"),
        "dimension": ElementOutcome("unparseable", raw="vibes", why="not one of the 8 dimensions"),
        "general_feedback": ElementOutcome("unparseable", raw="<junk>", why="empty after the label"),
    }
    item = critique(score=None, outcomes=outcomes)
    item.parsed = dataclasses.replace(item.parsed, dimension=None)
    card.show_critique(item)
    assert card.badge.text() == "score: unparseable ('8/10')"
    assert card.chip.text() == "dimension: unparseable ('vibes')"
    assert "General: unparseable ('<junk>'): empty after the label" in card.body.toPlainText()


def test_blind_mode_hides_the_critique_model(qtbot):
    listing = CritiqueList()
    qtbot.addWidget(listing)
    listing.show_critiques([critique(model="secret-model", pk=1), critique(model="other", pk=2)], blind=True)
    shown = "\n".join(listing.texts())
    assert "secret-model" not in shown and "other" not in shown
    assert [card.title.text() for card in listing.cards] == ["Critique 1", "Critique 2"]
    listing.show_critiques([critique(model="secret-model")], blind=False)
    assert "secret-model" in "\n".join(listing.texts())
    assert len(listing.cards) == 1 and listing.heading.text() == "Critiques (1)"


def test_long_fields_are_capped_with_show_all_and_unbroken_text_wraps(qtbot):
    card = CritiqueCard()
    qtbot.addWidget(card)
    card.resize(360, 200)
    card.show()
    long_flaw = "x" * (CAP_CHARS * 5)  # one unbroken token
    card.show_critique(critique(long_flaw))
    assert not card.show_all.isHidden()
    assert len(card.body.toPlainText()) < CAP_CHARS * 2
    assert "more characters" in card.body.toPlainText()
    assert card.sizeHint().width() < 600  # wraps anywhere instead of widening the card
    card.show_all.click()
    assert long_flaw in card.body.toPlainText() and card.show_all.isHidden()


def _focused_pk(listing: CritiqueList) -> int | None:
    focused = listing.focused()
    assert focused is not None, "no critique has the focus"
    return focused.pk


def test_focus_moves_between_critiques_and_wraps(qtbot):
    listing = CritiqueList(focusable=True)
    qtbot.addWidget(listing)
    listing.show_critiques([critique(pk=1), critique(pk=2), critique(pk=3)])
    assert _focused_pk(listing) == 1 and listing.cards[0].property("focused")
    listing.move_focus(+1)
    assert _focused_pk(listing) == 2 and not listing.cards[0].property("focused")
    listing.move_focus(-1)
    listing.move_focus(-1)
    assert _focused_pk(listing) == 3


def test_without_a_reviewer_every_rating_is_listed(qtbot):
    card = CritiqueCard()
    qtbot.addWidget(card)
    item = critique()
    card.show_critique(item)
    assert card.ratings.text() == "not rated by a person yet"
    item.ratings = [CritiqueRating("alice", 2), CritiqueRating("bob", 3)]
    card.show_critique(item)
    assert card.ratings.text() == "ratings: alice 2/3, bob 3/3"


def test_flaw_tooltips_show_hostile_model_names_literally(qtbot):
    from thoughtdesk.ui.critiques.text import flaw_format, plain_tooltip

    assert plain_tooltip("critique 1 (<img src=x>)") == "<p>critique 1 (&lt;img src=x&gt;)</p>"
    assert "&lt;b&gt;" in flaw_format("light", "by <b>m</b>").toolTip()


def test_bidi_controls_show_and_show_all_of_a_huge_critique_opens_a_viewer(qtbot):
    # Show all put a whole 10 MB main flaw in place (minutes of layout); U+202E showed raw.
    card = CritiqueCard()
    qtbot.addWidget(card)
    card.resize(500, 300)
    card.show()
    huge = "\u202eab" * 3_400_000
    card.show_critique(critique(huge, model="m\u202eodel"))
    assert "\u202e" not in card.body.toPlainText() + card.title.text()
    assert card.title.text() == "Critique 1 · m<U+202E>odel"
    assert len(card.body.toPlainText()) < CAP_CHARS * 2
    card.show_all.click()
    assert len(card.body.toPlainText()) <= INLINE_ALL_CHARS + 1_000  # in place: only what fits
    dialog = card.full_text_dialog
    assert dialog is not None and huge in dialog.text
    dialog.close()


def test_an_unparsed_critique_shows_its_text_as_written(qtbot):
    # Issue 28: a critique in a layout the parser does not know showed "(missing)" in every
    # field and its text nowhere in the app (the report showed it "as written").
    card = CritiqueCard()
    qtbot.addWidget(card)
    missing = {
        e: ElementOutcome("missing") for e in ("main_flaw", "dimension", "general_feedback", "explanation_score")
    }
    item = critique(None, score=None, general=None, outcomes=missing)
    item.parsed = dataclasses.replace(item.parsed, dimension=None)
    item.raw_text = "Overall the reasoning holds, but step 3 <b>misreads</b> the dose. Grade: B"
    card.show_critique(item)
    body = card.body.toPlainText()
    assert "Main flaw: (missing)" in body
    assert "As written: Overall the reasoning holds, but step 3 <b>misreads</b> the dose. Grade: B" in body
    # A critique read whole shows no second copy.
    parsed = critique()
    card.show_critique(parsed)
    assert "As written" not in card.body.toPlainText()
