"""The generic-import mapping dialog: live preview, saved mappings, a real import."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import FIXTURES
from tests.helpers.screenshots import save_screenshot
from tests.helpers.window import imported_outcomes
from tests.ui.importing.test_dataset_dialog import wait_import
from thoughtdesk.core.datasets import ColumnMapping
from thoughtdesk.core.datasets.mapping_preview import preview_mapping
from thoughtdesk.core.importing.mappings import SavedMappings, mappings_file
from thoughtdesk.ui.importing.mapping_dialog import PREVIEW_HEADERS, MappingDialog

QUIZ = FIXTURES / "import_dialogs" / "quiz.csv"
COL = {name: index for index, name in enumerate(PREVIEW_HEADERS)}


@pytest.fixture
def dialog(qtbot, tmp_path):
    widget = MappingDialog(QUIZ, ["existing"], saved=SavedMappings(tmp_path / "mappings.json"))
    qtbot.addWidget(widget)
    return widget


def map_quiz(dialog: MappingDialog) -> None:
    dialog.choices.setCurrentText("opt_a|opt_b|opt_c")
    dialog.answer_type.setCurrentText("multiplechoice")
    dialog.set_field("cot", "why")
    dialog.refresh_preview()


def test_columns_guessed_and_preview_shows_mapped_rows(dialog, tmp_path):
    assert dialog.question.currentText() == "problem"
    assert dialog.optional["answer"].currentData() == "label"
    assert dialog.optional["id"].currentData() == "qid"
    map_quiz(dialog)
    rows = dialog.preview_texts()
    assert len(rows) == 4
    first = rows[0]
    assert first[COL["line"]] == "2" and first[COL["id"]] == "q1"
    assert first[COL["question"]] == "What colour is the sky on a clear day?"
    assert first[COL["choices"]] == "blue | green | red" and first[COL["answer"]] == "blue"
    assert first[COL["reference CoT"]].startswith("Rayleigh scattering") and first[COL["error"]] == ""
    assert rows[3][COL["answer"]] == "eight"  # "2" read as a 1-based choice number
    bad = rows[2]
    assert bad[COL["line"]] == "4" and bad[COL["question"]] == ""
    assert "answer 'Z' is not among the choices" in bad[COL["error"]]
    assert "1 cannot be mapped" in dialog.status.text()
    # The answer column read as letters only: "2" no longer maps, and the preview says so.
    dialog.answer_format.setCurrentIndex(dialog.answer_format.findData("letter"))
    dialog.refresh_preview()
    assert "not among the choices" in dialog.preview_texts()[3][COL["error"]]
    dialog.resize(1000, 720)
    save_screenshot(dialog, tmp_path, "mapping_dialog")


def test_markup_in_cells_is_plain_text(dialog):
    map_quiz(dialog)
    dialog.choices.setCurrentText("")  # no choices: any answer text is accepted
    dialog.answer_type.setCurrentText("text")
    dialog.refresh_preview()
    row = dialog.preview_texts()[2]
    assert row[COL["question"]] == "<b>Bold</b> & <i>tags</i> stay literal?"
    # QTableWidgetItem has no rich-text mode; the label showing status is plain text too.
    from PySide6.QtCore import Qt

    assert dialog.status.textFormat() == Qt.TextFormat.PlainText


def test_preview_updates_live_after_a_change(dialog, qtbot):
    dialog.set_field("answer", None)
    qtbot.waitUntil(lambda: dialog.preview_texts() and dialog.preview_texts()[0][COL["answer"]] == "", timeout=10000)
    dialog.set_field("answer", "label")
    qtbot.waitUntil(lambda: dialog.preview_texts()[0][COL["answer"]] == "A", timeout=10000)


def test_saved_mapping_reloads_in_a_new_dialog(dialog, qtbot, tmp_path):
    map_quiz(dialog)
    assert dialog.save_current("quiz mapping")
    store = SavedMappings(tmp_path / "mappings.json")
    assert store.names() == ["quiz mapping"]
    other = MappingDialog(QUIZ, [], saved=store)
    qtbot.addWidget(other)
    assert other.saved_combo.currentText() == "quiz mapping"
    other.set_field("cot", None)
    other.choices.setCurrentText("")
    assert other.load_saved("quiz mapping")
    assert other.mapping() == dialog.mapping()
    assert other.preview_texts() == dialog.preview_texts()
    assert not other.load_saved("nope") and "nope" in other.error_label.text()


def test_default_store_lives_in_the_user_config_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("THOUGHTDESK_CONFIG_DIR")  # the default folder, not the test's override
    mapping = ColumnMapping(question="q", answer="a")
    SavedMappings().save("m", mapping)
    assert mappings_file().is_file() and str(mappings_file()).startswith(str(Path.home()))
    assert SavedMappings().get("m") == mapping


def test_broken_store_is_reported_with_file_and_line(tmp_path, qtbot):
    store = tmp_path / "mappings.json"
    store.write_text('{"a": {"question": "q"},\n oops}')
    widget = MappingDialog(QUIZ, [], saved=SavedMappings(store))
    qtbot.addWidget(widget)
    assert "mappings.json, line 2" in widget.error_label.text()


def test_preview_of_unreadable_file_raises(tmp_path):
    from thoughtdesk.core.errors import DataFileError

    with pytest.raises(DataFileError, match="no such file"):
        preview_mapping(tmp_path / "none.csv", ColumnMapping(question="q"))


def test_mapping_dialog_imports_through_the_window(window, qtbot, tmp_path):
    reports = imported_outcomes(window)
    dialog = MappingDialog(QUIZ, [], saved=SavedMappings(tmp_path / "m.json"))
    qtbot.addWidget(dialog)
    map_quiz(dialog)
    dialog.target.on_error.setCurrentIndex(dialog.target.on_error.findData("skip"))
    request = dialog.request()
    assert request.dataset == "quiz" and request.collection == "quiz"
    wait_import(qtbot, window, window.importing.import_request(request))
    assert reports[-1].inserted == 3 and [e.line for e in reports[-1].bad_records] == [4]
    rows = window.library.conn.execute(
        "SELECT sample_id, answer, type FROM sample WHERE dataset = 'quiz' ORDER BY position"
    ).fetchall()
    assert rows == [
        ("q1", '["blue"]', "multiplechoice"),
        ("q2", '["whale"]', "multiplechoice"),
        ("q4", '["eight"]', "multiplechoice"),
    ]
    window.importing.skip_log_dialog.close()


def test_a_mapping_change_re_maps_the_rows_read_once(qtbot, tmp_path):
    import shutil

    copy = tmp_path / "quiz.csv"
    shutil.copy(QUIZ, copy)
    widget = MappingDialog(copy, [], saved=SavedMappings(tmp_path / "mappings.json"))
    qtbot.addWidget(widget)
    map_quiz(widget)
    widget.refresh_preview()
    first = widget.preview_texts()
    copy.unlink()  # the file is not read again for a new preview
    widget.set_field("answer", None)
    qtbot.waitUntil(lambda: widget.preview_texts() and widget.preview_texts()[0][COL["answer"]] == "", timeout=10000)
    assert (
        len(widget.preview_texts()) == len(first)
        and widget.preview_texts()[0][COL["question"]] == first[0][COL["question"]]
    )


def test_a_headerless_table_is_mapped_by_position(qtbot, tmp_path):
    """Issue 16, point 10: MMLU's layout is detected, its columns are 1..6, the guess maps
    question, choices and a letter answer, and the first row is previewed as a sample."""
    exam = tmp_path / "exam.csv"
    exam.write_bytes((FIXTURES / "datasets" / "mmlu_medical" / "anatomy_test.csv").read_bytes())
    dialog = MappingDialog(exam, [], saved=SavedMappings(tmp_path / "mappings.json"))
    qtbot.addWidget(dialog)
    assert dialog.no_header.isChecked()
    assert dialog.columns == ["1", "2", "3", "4", "5", "6"]
    mapping = dialog.mapping()
    assert (mapping.question, mapping.choices, mapping.answer, mapping.header) == (
        "1",
        ["2", "3", "4", "5"],
        "6",
        False,
    )
    assert mapping.answer_type == "multiplechoice" and mapping.answer_format == "letter"
    rows = dialog.preview_texts()
    assert rows[0][COL["question"]].startswith("A lesion causing compression")
    assert rows[0][COL["answer"]] == "paralysis of the facial muscles." and not rows[0][COL["error"]]
    assert dialog.status.text().endswith("as they would be stored.")  # every previewed row maps
    save_screenshot(dialog, tmp_path, "mapping_headerless")
    dialog.no_header.setChecked(False)  # the user says row 1 is a header after all
    assert dialog.columns[0].startswith("A lesion causing compression")
    assert dialog.mapping().header is True
    dialog.no_header.setChecked(True)
    assert dialog.save_current("exam by position")
    again = MappingDialog(exam, [], saved=SavedMappings(tmp_path / "mappings.json"))
    qtbot.addWidget(again)
    again.no_header.setChecked(False)
    assert again.load_saved("exam by position")
    assert again.no_header.isChecked() and again.mapping().header is False and again.columns[0] == "1"


def test_import_button_waits_for_a_mapping_that_works(dialog, qtbot):
    """Issue 16, point 9: Import is enabled only while the choice can be imported."""
    assert dialog.import_button.isEnabled(), dialog.problem()
    dialog.target.collection.setEditText("  ")
    assert not dialog.import_button.isEnabled() and "Name the collection" in dialog.import_button.toolTip()
    dialog.target.collection.setEditText("quiz")
    dialog.set_field("answer", "no such column")
    dialog.refresh_preview()
    assert not dialog.import_button.isEnabled()
    assert "None of the first records can be mapped" in dialog.import_button.toolTip()
