"""A library that cannot be written opens read-only in the window (issue 15, point 10): the title
says so, browsing works, and a change is refused with a message naming the library, not a crash."""

from __future__ import annotations

from pathlib import Path

from tests.core.library.test_file_faults import read_only
from tests.helpers.libraries import demo_library
from tests.helpers.paths import FIXTURES
from tests.helpers.window import last_message


def test_read_only_library_in_the_window(make_window, qtbot, tmp_path: Path):
    folder = tmp_path / "cd-rom"
    folder.mkdir()
    library = demo_library(folder / "ward.thoughtdesk")
    before = library.read_bytes()
    with read_only(folder):
        window = make_window(library)
        assert window.library.read_only
        assert "read-only" in window.windowTitle()
        assert window.samples.current_collection() is not None  # browsing works
        task = window.importing.import_file(FIXTURES / "thoughtsource" / "edge_cases.json", "edge")
        assert task is not None
        qtbot.waitUntil(lambda: task.done, timeout=20000)
        text = last_message(window).text()
        assert "ward.thoughtdesk is open read-only" in text and "Traceback" not in text
    assert library.read_bytes() == before


def test_writing_actions_are_disabled_with_the_reason(make_window, qtbot, tmp_path: Path):
    """Issue 15, point 10 (audit): on a read-only library the writing actions were tried and then
    refused; they are disabled, each saying why, and enabled again on a writable library."""
    from tests.helpers.libraries import DEMO
    from thoughtdesk.core.generation.runs import ModelSpec, RunSpec, SampleSelection, create_run, plan_run
    from thoughtdesk.core.library.store import Library
    from thoughtdesk.ui.qt import Qt

    folder = tmp_path / "cd-rom"
    folder.mkdir()
    library = demo_library(folder / "ward.thoughtdesk")
    model = ModelSpec("openai", "m", base_url="http://127.0.0.1:9/v1")
    with Library.open(library) as lib:
        run_id = create_run(lib, plan_run(lib, RunSpec(samples=SampleSelection(DEMO), models=(model,))))
    before = library.read_bytes()
    with read_only(folder):
        window = make_window(library)
        reason = window.read_only_reason()
        assert reason is not None and "ward.thoughtdesk is open read-only" in reason
        generation, review = window.generation, window.review
        writing = [
            window.importing.action_import,
            generation.action_plan,
            generation.action_critique,
            generation.action_revise,
            generation.action_judge,
            generation.action_rationales,
            review.action_new_queue,
            review.action_label_sets,
            review.action_import,
        ]
        for action in writing:
            assert not action.isEnabled(), action.text()
            assert action.toolTip() == reason and action.statusTip() == reason
        assert window.importing.action_export.isEnabled()  # reading and exporting stay
        assert generation.action_runs.isEnabled() and window.reports.action_report.isEnabled()

        panel = generation.runs_panel
        panel.reload()
        qtbot.waitUntil(lambda: panel.model.row_of(run_id) is not None, timeout=5000)
        assert panel.select_run(run_id)
        for button in (panel.start_button, panel.rename_button, panel.delete_button, panel.cancel_button):
            assert not button.isEnabled() and button.toolTip() == reason
        evaluation = window.evaluation
        for button in (evaluation.rescore_button, evaluation.restore_button):
            assert not button.isEnabled() and button.toolTip() == reason

        view = review.view
        window.show_tab(view)
        qtbot.waitUntil(lambda: view.stored is not None, timeout=10000)
        assert not view.panel.label_box.isEnabled() and view.panel.label_box.toolTip() == reason
        assert not view.panel.comment_button.isEnabled() and not view.panel.quality_buttons[0].isEnabled()
        said: list[str] = []
        view.message.connect(said.append)
        qtbot.keyClick(view, Qt.Key.Key_1)  # a label's key: said, not tried
        qtbot.keyClick(view, Qt.Key.Key_S)  # preferred
        assert said and all(text == reason for text in said)
    assert library.read_bytes() == before

    writable = demo_library(tmp_path / "mine.thoughtdesk")
    assert window.open_library(writable)
    assert window.read_only_reason() is None
    for action in writing:
        assert action.isEnabled() and action.toolTip() != reason
    assert evaluation.rescore_button.isEnabled() and evaluation.rescore_button.toolTip() != reason
