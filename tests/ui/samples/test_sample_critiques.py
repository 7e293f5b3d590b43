"""The Samples detail shows each CoT's critiques and ratings, with the flaw's quote marked."""

from __future__ import annotations

from tests.helpers.widgets import content
from tests.helpers.window import close_window, open_window
from tests.ui.review.conftest import make_library
from tests.ui.review.test_critique_rating import MODELS, seed_critiques
from thoughtdesk.core.critiques import set_explanation_rating
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.critiques.cards import CritiqueList
from thoughtdesk.ui.critiques.text import FittedText


def test_the_samples_detail_shows_critique_cards_and_marks_the_quote(qtbot, tmp_path) -> None:
    path = make_library(tmp_path / "lib.thoughtdesk")
    seed_critiques(path)
    with Library.open(path) as library:
        cot_pk, text = library.conn.execute("SELECT id, cot FROM generated_cot ORDER BY id LIMIT 1").fetchone()
        with library.transaction() as conn:
            set_explanation_rating(conn, cot_pk, "bob", 2, ("irrelevant",))
    window = open_window(qtbot, Library.open(path), size=(1366, 768))
    try:
        detail = window.samples.detail
        qtbot.waitUntil(lambda: detail.current is not None, timeout=5000)
        stored = detail.current
        assert stored is not None
        lists = content(detail).findChildren(CritiqueList)
        assert len(lists) == len(stored.sample.generated_cot)  # every CoT has its three critiques
        assert [c.critique_model for c in lists[0].critiques] == list(MODELS)
        texts = "\n".join(detail.texts())
        assert "1/5" in texts and "misunderstanding" in texts and "General feedback 0" in texts
        assert "critic-b" in texts  # the Samples tab is not blind: models are named
        if cot_pk in stored.cot_pks:
            assert "Ratings: bob 2/5 (irrelevant)" in texts
        # The CoT text is shown in full, with the quoted words in the flaw format.
        marked = [v for v in content(detail).findChildren(FittedText) if v.objectName() == "cotText"]
        assert marked and marked[0].toPlainText() == stored.sample.generated_cot[0].cot
        block = marked[0].document().begin()
        fragment = block.begin().fragment()
        assert fragment.charFormat().underlineStyle().name == "WaveUnderline"
        assert " ".join(fragment.text().split()) == " ".join(marked[0].toPlainText().split()[:4])
    finally:
        close_window(window)


def test_a_rating_added_elsewhere_shows_after_a_refresh(qtbot, tmp_path) -> None:
    path = make_library(tmp_path / "lib.thoughtdesk")
    window = open_window(qtbot, Library.open(path), size=(1366, 768))
    try:
        detail = window.samples.detail
        qtbot.waitUntil(lambda: detail.current is not None, timeout=5000)
        assert not content(detail).findChildren(CritiqueList)
        seed_critiques(path)
        window.samples.refresh()
        qtbot.waitUntil(lambda: bool(content(detail).findChildren(CritiqueList)), timeout=5000)
    finally:
        close_window(window)


def test_many_critiques_wait_behind_a_button_per_cot(qtbot, tmp_path) -> None:
    from thoughtdesk.core.critiques import (
        ELEMENTS,
        Critique,
        ElementOutcome,
        ParsedCritique,
        add_critique,
        critiques_for_cots,
    )
    from thoughtdesk.core.library.reader import load_sample
    from thoughtdesk.ui.qt import QToolButton
    from thoughtdesk.ui.samples.sample_detail import OPEN_CRITIQUES, SampleDetail

    path = make_library(tmp_path / "lib.thoughtdesk")
    with Library.open(path) as library:
        stored = load_sample(library, library.conn.execute("SELECT min(id) FROM sample").fetchone()[0])
        assert stored is not None
        parsed = ParsedCritique(
            "None", "irrelevant", "g & <b>", "s", 4.0, {e: ElementOutcome("parsed") for e in ELEMENTS}
        )
        with library.transaction() as conn:
            for cot_pk in stored.cot_pks:
                for number in range(5):
                    add_critique(conn, Critique(cot_pk, f"m{number}", f"raw {number}", parsed))
        critiques = critiques_for_cots(library, stored.cot_pks)
    assert sum(len(c) for c in critiques.values()) > OPEN_CRITIQUES
    detail = SampleDetail()
    qtbot.addWidget(detail)
    detail.show_sample(stored, critiques, {})
    assert not content(detail).findChildren(CritiqueList)
    toggles = content(detail).findChildren(QToolButton, "critiquesToggle")
    assert len(toggles) == len(stored.cot_pks)
    assert toggles[0].text() == "Show 5 critique(s): 4/5 4/5 4/5 4/5 4/5"
    toggles[0].click()
    (shown,) = content(detail).findChildren(CritiqueList)
    assert len(shown.cards) == 5 and toggles[0].isHidden()
    assert "g & <b>" in "\n".join(shown.texts())
