"""The fragment editor driven as a user drives it: add, edit, duplicate, delete, undo, import,
and the user's changes surviving a restart (a new store reading the same file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.core.generation.fragment_store import FragmentStore, default_user_fragments_path
from thoughtdesk.core.generation.fragments import ALL_KINDS, FragmentLibrary
from thoughtdesk.ui.generation.fragment_editor import FragmentEditor
from thoughtdesk.ui.qt import Qt

GEN_UI = FIXTURES / "generation_ui"


def open_editor(qtbot, path: Path) -> FragmentEditor:
    store = FragmentStore(path)
    editor = FragmentEditor(store.load(), store)
    qtbot.addWidget(editor)
    editor.resize(1000, 600)
    editor.show()
    return editor


def current_key(editor: FragmentEditor) -> str:
    fragment = editor.current_fragment()
    assert fragment is not None, "no fragment is selected"
    return fragment.key


@pytest.fixture
def user_file(tmp_path) -> Path:
    return tmp_path / "config" / "fragments.json"


def test_default_store_path_is_in_the_user_config_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("THOUGHTDESK_CONFIG_DIR", str(tmp_path / "cfg"))
    assert default_user_fragments_path() == tmp_path / "cfg" / "fragments.json"


def test_lists_builtin_fragments_by_kind(qtbot, user_file):
    editor = open_editor(qtbot, user_file)
    builtin = FragmentLibrary.defaults()
    # + the built-in critique template's main and system texts, + ProcessBench's step-judge template
    # (a main text, no system text), + the rationale extraction prompt, + the 5 guided-generation prompts,
    # + the pairwise judge template's main and system texts
    assert len(builtin) == 63 + 2 + 1 + 1 + 5 + 2
    assert [editor.tabs.tabText(i) for i in range(editor.tabs.count())][3:] == [
        "Critique prompts",
        "Critique system texts",
        "Rationale extraction",
        "Guided generation",
        "Pairwise judge prompts",
        "Pairwise judge system texts",
    ]
    assert set(editor.models) == set(ALL_KINDS)
    for kind in ALL_KINDS:
        assert editor.models[kind].rowCount() == len(builtin.of_kind(kind)) > 0
    assert editor.select("cot_trigger", "kojima-01")
    assert editor.text_edit.toPlainText() == "Answer: Let's think step by step."
    assert "Kojima" in editor.citation_edit.text()
    assert "built-in" in editor.source_label.text()
    assert not user_file.exists()  # nothing written until the user changes something


def test_add_edit_duplicate_delete_undo_and_restart(qtbot, user_file):
    editor = open_editor(qtbot, user_file)
    editor.tabs.setCurrentIndex(1)  # CoT triggers
    before = editor.models["cot_trigger"].rowCount()

    added = editor.add_new()
    assert added is not None and added.kind == "cot_trigger"
    assert editor.models["cot_trigger"].rowCount() == before + 1
    assert current_key(editor) == added.key

    editor.key_edit.setText("my-trigger")
    editor.text_edit.setPlainText("Answer: Let's check {each} <b>option</b>.")
    editor.citation_edit.setText("Me, 2025")
    qtbot.keyClick(editor.text_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    edited = editor.library.get("cot_trigger", "my-trigger")
    assert edited.text == "Answer: Let's check {each} <b>option</b>."
    assert edited.citation == "Me, 2025"
    assert ("cot_trigger", added.key) not in editor.library

    copy = editor.duplicate_current()
    assert copy is not None and copy.key == "my-trigger-copy" and copy.text == edited.text
    assert editor.models["cot_trigger"].rowCount() == before + 2

    editor.select("cot_trigger", "kojima-01")
    editor.delete_current()
    assert ("cot_trigger", "kojima-01") not in editor.library

    # The saved file holds only the changes: the new fragments and the hidden built-in one.
    saved = json.loads(user_file.read_text(encoding="utf-8"))
    assert {f["key"] for f in saved["fragments"]} == {"my-trigger", "my-trigger-copy"}
    assert saved["hidden_builtin"] == [{"kind": "cot_trigger", "key": "kojima-01"}]

    editor.undo_stack.undo()  # the delete
    assert ("cot_trigger", "kojima-01") in editor.library
    assert current_key(editor) == "kojima-01"
    editor.undo_stack.undo()  # the duplicate
    assert ("cot_trigger", "my-trigger-copy") not in editor.library
    editor.undo_stack.redo()
    assert ("cot_trigger", "my-trigger-copy") in editor.library

    # Restart: a new store and editor on the same file show the same library, in the same order.
    keys = [f.key for f in editor.library.of_kind("cot_trigger")]
    editor.close()
    again = open_editor(qtbot, user_file)
    assert [f.key for f in again.library.of_kind("cot_trigger")] == keys
    assert again.library.get("cot_trigger", "my-trigger").text == "Answer: Let's check {each} <b>option</b>."
    assert again.library.get("cot_trigger", "kojima-01").text == "Answer: Let's think step by step."


def test_edit_of_a_builtin_is_kept_and_builtin_restorable(qtbot, user_file):
    editor = open_editor(qtbot, user_file)
    editor.select("instruction", "qa-01")
    editor.text_edit.setPlainText("My own wording of qa-01.")
    editor.apply_edits()
    editor.select("instruction", "qa-02")
    editor.delete_current()
    restarted = FragmentStore(user_file)
    library = restarted.load()
    assert library.get("instruction", "qa-01").text == "My own wording of qa-01."
    assert library.get("instruction", "qa-01").source == "user"
    assert ("instruction", "qa-02") not in library
    assert [f.key for f in restarted.restore_builtin(library)] == ["qa-02"]


def shown_error(editor) -> str:
    """The error the editor's status line shows (in red), or "" when it shows none."""
    return editor.status.text() if "#b3261e" in editor.status.styleSheet() else ""


def test_invalid_edits_show_an_error_and_change_nothing(qtbot, user_file):
    editor = open_editor(qtbot, user_file)
    editor.select("cot_trigger", "kojima-01")
    editor.key_edit.setText("zhou-01")  # already taken
    assert editor.apply_edits() is None
    assert "already exists" in shown_error(editor)
    editor.key_edit.setText("kojima-01")
    editor.text_edit.setPlainText("   ")
    assert editor.apply_edits() is None
    assert "non-empty text" in shown_error(editor)
    assert editor.library.get("cot_trigger", "kojima-01").text == "Answer: Let's think step by step."
    assert editor.undo_stack.count() == 0


def test_import_thoughtsource_fragments_file(qtbot, user_file):
    editor = open_editor(qtbot, user_file)
    report = editor.import_file(GEN_UI / "thoughtsource_fragments.json")
    assert report is not None
    assert {f.key for f in report.added} == {"lab-01", "lab-trigger-01"}
    assert report.unchanged == 3  # qa-01, kojima-01, kojima-A-D match the built-in texts
    assert [f.key for f in report.conflicts] == ["td-letter"]
    assert "kept as they were" in editor.status.text()
    lab = editor.library.get("instruction", "lab-01")
    assert lab.source == "import:thoughtsource_fragments.json"
    # Shown literally in the table (an item view draws plain text).
    model = editor.models["instruction"]
    row = model.row_of("lab-01")
    assert row is not None
    assert "<b>step-by-step</b>" in model.data(model.index(row, 1))

    replaced = editor.import_file(GEN_UI / "thoughtsource_fragments.json", replace_conflicts=True)
    assert replaced is not None
    assert [f.key for f in replaced.replaced] == ["td-letter"]
    editor.undo_stack.undo()
    editor.undo_stack.undo()
    assert ("instruction", "lab-01") not in editor.library
    assert editor.library.get("answer_extraction", "td-letter").text == "So the letter of the correct choice is"


def test_import_of_a_broken_file_names_file_and_line(qtbot, user_file):
    editor = open_editor(qtbot, user_file)
    count = len(editor.library)
    assert editor.import_file(GEN_UI / "broken_fragments.json") is None
    assert "broken_fragments.json" in shown_error(editor) and "line 5" in shown_error(editor)
    assert len(editor.library) == count


def test_unreadable_user_file_is_kept_aside_not_overwritten(qtbot, user_file):
    user_file.parent.mkdir(parents=True)
    user_file.write_text('{"fragments": [ {"key": "x"', encoding="utf-8")
    editor = open_editor(qtbot, user_file)
    assert "could not be read" in shown_error(editor)
    # 63 + critique template (2) + ProcessBench's template + rationale extraction + 5 guide prompts + judge template (2)
    assert len(editor.library) == 74
    editor.select("instruction", "qa-01")
    editor.duplicate_current()
    aside = list(user_file.parent.glob("fragments.json.unreadable-*"))
    assert len(aside) == 1 and aside[0].read_text(encoding="utf-8") == '{"fragments": [ {"key": "x"'
    assert FragmentStore(user_file).load().get("instruction", "qa-01-copy")
