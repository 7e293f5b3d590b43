"""A 10 MB one-word question and a 1 MB CoT open in the Samples tab without stalling it (issue 15,
point 7: the collection took 40 s to open, then the window froze for 26 s); every field a sample
shows, made huge and dense with bidi overrides, lays out a bounded text with the overrides shown
(a 1 MB question of U+202E + "ab" took 14 s to open, 2,000 reference steps 1.1 s)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from tests.helpers.libraries import FIELDS, field_library, field_sample_id, long_text_library
from tests.helpers.shown_text import shown_texts
from tests.helpers.widgets import child, content
from tests.helpers.window import close_window, open_window
from thoughtdesk.core.critiques.store import critiques_for_cots, explanation_ratings_for_cots
from thoughtdesk.core.library.queries import CELL_CHARS, SampleFilter, sample_keys, sample_rows
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.visible_text import reveal
from thoughtdesk.ui.samples.sample_detail import SampleDetail, numbered_steps
from thoughtdesk.ui.widgets.long_text import DISPLAY_CHARS, LongText, PlainTextBox, more_text

QUESTION = 10_000_000
COT = 1_000_000


def test_the_table_reads_bounded_prefixes_of_long_texts(tmp_path) -> None:
    path = long_text_library(tmp_path / "lib.thoughtdesk", QUESTION, COT)
    with Library.open(path) as library:
        keys = list(sample_keys(library, SampleFilter()))
        row = sample_rows(library, keys)[keys[0]]
    assert row.question == "Q" * CELL_CHARS
    assert len(row.gold) <= CELL_CHARS


def test_a_huge_sample_opens_capped_with_show_all_and_the_window_keeps_its_size(qtbot, tmp_path) -> None:
    path = long_text_library(tmp_path / "lib.thoughtdesk", QUESTION, COT)
    started = time.perf_counter()
    window = open_window(qtbot, Library.open(path), size=(1366, 768))
    try:
        detail = window.samples.detail
        qtbot.waitUntil(lambda: detail.current is not None, timeout=20000)
        window.grab()
        opened = time.perf_counter() - started
        # Seconds, not the 40 s + 26 s before; the 200 ms target is bench_long_text.py's.
        assert opened < 10.0
        started = time.perf_counter()
        detail.show_sample(detail.current)
        detail.grab()
        assert time.perf_counter() - started < 2.0

        question = child(content(detail), LongText, "question")
        assert question is not None
        assert question.shown_text() == "Q" * DISPLAY_CHARS
        assert question.more.text() == more_text(QUESTION - DISPLAY_CHARS)
        cot = child(content(detail), LongText, "cotText")
        assert cot is not None and cot.hidden_chars == COT - DISPLAY_CHARS
        # Wrapped anywhere: nothing widens the pane or the window.
        assert detail.horizontalScrollBar().maximum() == 0
        assert window.width() <= 1366
        assert window.samples.model.data(window.samples.model.index(0, 1)) == "Q" * CELL_CHARS

        qtbot.mouseClick(question.more, Qt.MouseButton.LeftButton)
        dialog = question.dialog
        assert dialog is not None
        qtbot.waitExposed(dialog)
        qtbot.waitUntil(lambda: dialog.loaded == QUESTION, timeout=60_000)  # loaded in steps
        assert dialog.view.document().characterCount() > QUESTION
        dialog.close()
    finally:
        close_window(window)


#: Characters the detail pane may lay out for a sample with one field of any length: each long
#: field shows at most 20,000 (its LongText), everything else is short.
DETAIL_CHARS = 30_000
#: Widgets the detail pane may hold for such a sample (2,000 reference steps were 2,000 labels).
DETAIL_WIDGETS = 400
FIELD_CHARS = 2_000_000


@pytest.fixture(scope="module")
def every_field(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    """One sample per field a sample view shows, that field 2 MB of U+202E + "ab" (the worst
    kind: every third character an escape), the rest of the sample short; and a tiny one."""
    path = tmp_path_factory.mktemp("fields") / "lib.thoughtdesk"
    return path, field_library(path, [(field, "invisible", FIELD_CHARS) for field in FIELDS])


@pytest.mark.parametrize("field", FIELDS)
def test_a_huge_field_lays_out_a_bounded_text_with_its_bidi_controls_shown(qtbot, every_field, field) -> None:
    path, pks = every_field
    detail = SampleDetail()
    qtbot.addWidget(detail)
    detail.resize(900, 700)
    detail.show()
    with Library.open(path) as library:
        stored = load_sample(library, pks[field_sample_id(field, "invisible", FIELD_CHARS)])
        assert stored is not None
        critiques = critiques_for_cots(library, stored.cot_pks)
        ratings = explanation_ratings_for_cots(library, stored.cot_pks)
    detail.show_sample(stored, critiques, ratings)
    body = content(detail)
    texts = shown_texts(body)
    assert sum(map(len, texts)) <= DETAIL_CHARS  # 2 MB of it before (6.7 MB shown)
    assert len(body.findChildren(QWidget)) <= DETAIL_WIDGETS
    assert not any("\u202e" in text for text in texts)  # every override shown as <U+202E>
    assert any("<U+202E>ab<U+202E>" in text for text in texts)
    assert detail.horizontalScrollBar().maximum() == 0


def test_many_reference_steps_are_one_capped_text_and_show_all_brings_them_all(qtbot, every_field) -> None:
    path, pks = every_field
    detail = SampleDetail()
    qtbot.addWidget(detail)
    detail.show()
    with Library.open(path) as library:
        stored = load_sample(library, pks[field_sample_id("steps", "invisible", FIELD_CHARS)])
    assert stored is not None and stored.sample.cot is not None and len(stored.sample.cot) == FIELD_CHARS // 100
    detail.show_sample(stored)
    body = content(detail)
    assert body.findChildren(QLabel, "referenceStep") == []
    steps = child(body, LongText, "referenceSteps")
    assert steps.shown_text().startswith("1. <U+202E>ab")
    assert steps.hidden_chars == len(numbered_steps(stored.sample.cot)) - steps._shown
    qtbot.mouseClick(steps.more, Qt.MouseButton.LeftButton)
    dialog = steps.dialog
    assert dialog is not None
    assert dialog.text == numbered_steps(stored.sample.cot)  # all 20,000 steps, numbered
    assert dialog.text.endswith(f"\n{len(stored.sample.cot)}. " + "\u202eab" * 33 + "\u202e")
    dialog.close()


def test_a_huge_context_is_capped_and_show_all_brings_it_whole(qtbot, every_field) -> None:
    path, pks = every_field
    detail = SampleDetail()
    qtbot.addWidget(detail)
    detail.show()
    with Library.open(path) as library:
        stored = load_sample(library, pks[field_sample_id("context", "invisible", FIELD_CHARS)])
    assert stored is not None
    detail.show_sample(stored)
    box = child(content(detail), PlainTextBox)
    assert box is not None and box.view.objectName() == "context"
    assert box.view.document().characterCount() <= DISPLAY_CHARS + 1
    qtbot.mouseClick(box.more, Qt.MouseButton.LeftButton)
    assert box.dialog is not None and box.dialog.text == stored.sample.context
    box.dialog.load_all()
    assert box.dialog.view.toPlainText().replace("\n", "") == reveal(stored.sample.context)
    box.dialog.close()


def test_huge_comments_are_read_cut_and_show_all_reads_them_whole(qtbot, tmp_path) -> None:
    # Issue 15, point 7: showing a sample read its 10 MB review comments whole (two: 20 MB,
    # 130 ms) to show 20,000 characters of them.
    from thoughtdesk.core.library.reader import cot_annotations
    from thoughtdesk.ui.samples.sample_detail import ANNOTATION_CHARS, annotations_text
    from thoughtdesk.ui.samples.tab import SamplesTab

    path = tmp_path / "lib.thoughtdesk"
    pks = field_library(path, [("comment", "invisible", 300_000)])
    window = open_window(qtbot, Library.open(path), size=(1366, 768))
    try:
        tab: SamplesTab = window.samples
        library = window.library
        assert library is not None
        stored = tab.read_sample(library, pks[field_sample_id("comment", "invisible", 300_000)])
        assert stored is not None
        (cot_pk,) = [pk for pk, cot in zip(stored.cot_pks, stored.sample.generated_cot, strict=True) if cot.annotations]
        whole = annotations_text(cot_annotations(library, cot_pk))
        assert stored.annotations_cut == {cot_pk: 2 * (300_000 - ANNOTATION_CHARS)}  # two comments
        tab._show_detail(library, stored)
        notes = child(content(tab.detail), LongText, "cotAnnotations")
        assert notes is not None and notes.shown_text().startswith("Annotations: comment: <U+202E>ab")
        assert notes.hidden_chars == len(whole) - notes._shown  # counted as if read whole
        qtbot.mouseClick(notes.more, Qt.MouseButton.LeftButton)
        assert notes.dialog is not None and notes.dialog.text == whole  # Show all: every character
        notes.dialog.close()
    finally:
        close_window(window)
