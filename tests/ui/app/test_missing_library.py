"""A library named on the command line that does not exist is not created unasked (issue 16,
point 11, in the GUI): ``thoughtdesk gui /tmp/typo/dir/x.thoughtdesk`` created the folders and a
library with the demo collection without a word. The user is now asked: create it there, choose
another file, or quit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from tests.helpers.screenshots import save_screenshot
from tests.ui.app.test_fits_laptop import assert_fits
from thoughtdesk.ui.app import missing_library
from thoughtdesk.ui.app.missing_library import Choice, confirm_library, missing_library_box
from thoughtdesk.ui.qt import QApplication, QMessageBox, QTimer
from thoughtdesk.ui.widgets.sizing import LAPTOP_CLIENT


def test_the_question_names_the_file_and_the_folders_it_would_make(qtbot, tmp_path):
    typo = tmp_path / "typo" / "dir" / "x.thoughtdesk"
    box = missing_library_box(typo)
    qtbot.addWidget(box)
    text = box.text()
    assert str(typo) in text and f"The folder {tmp_path / 'typo'} does not exist either" in text
    assert "with 1 folder(s) inside it" in text
    names = [button.text() for button in box.buttons()]
    assert sorted(names) == sorted(["&Create new library", "C&hoose another…", "&Quit"])
    assert box.defaultButton().objectName() == "chooseLibrary"  # Enter never creates folders
    assert box.textFormat().name == "PlainText"
    box.show()
    qtbot.wait(50)
    assert_fits(box, "the missing-library question")
    deep = tmp_path.joinpath(*(["a_rather_long_folder_name_from_a_hospital_share"] * 6)) / "x.thoughtdesk"
    long_box = missing_library_box(deep)
    qtbot.addWidget(long_box)
    long_box.show()
    qtbot.wait(50)
    assert_fits(long_box, "the missing-library question on a long path")
    assert box.width() <= LAPTOP_CLIENT.width()
    save_screenshot(box, tmp_path, "missing-library")
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize(("button", "choice"), [("createLibrary", Choice.CREATE), ("quitLibrary", Choice.QUIT)])
def test_the_real_dialog_answers_what_was_clicked(qtbot, tmp_path, button, choice):
    def click() -> None:
        box = next(w for w in QApplication.topLevelWidgets() if w.objectName() == "missingLibrary")
        assert isinstance(box, QMessageBox)
        next(b for b in box.buttons() if b.objectName() == button).click()

    QTimer.singleShot(100, click)
    assert missing_library.ask_missing_library(tmp_path / "none.thoughtdesk") is choice


def test_confirm_creates_nothing_and_follows_the_answer(tmp_path, monkeypatch):
    typo = tmp_path / "typo" / "x.thoughtdesk"
    answers: list[Choice] = []
    monkeypatch.setattr(missing_library, "question", lambda path, parent, **_: answers.pop(0))
    other = tmp_path / "other.thoughtdesk"
    picked: list[Path | None] = [None, other]  # the file dialog cancelled once: asked again
    monkeypatch.setattr(missing_library, "chooser", lambda path, parent: picked.pop(0))

    answers[:] = [Choice.QUIT]
    assert confirm_library(typo) is None
    answers[:] = [Choice.CREATE]
    assert confirm_library(typo) == typo
    answers[:] = [Choice.CHOOSE, Choice.CHOOSE]
    assert confirm_library(typo) == other and not answers
    assert not (tmp_path / "typo").exists() and not other.exists()  # the caller creates, never the question
    existing = tmp_path / "here.thoughtdesk"
    existing.write_bytes(b"")
    assert confirm_library(existing) == existing  # not asked


DRIVER = """
import sys
from pathlib import Path
from thoughtdesk.ui.app import missing_library, startup

answer = missing_library.Choice(sys.argv[2])
def question(path, parent, **_):
    print("asked", path, flush=True)
    return answer
missing_library.question = question
missing_library.chooser = lambda path, parent: Path(sys.argv[3])
raise SystemExit(startup.run_gui(sys.argv[1]))
"""


def _run_gui(tmp_path: Path, library: Path, answer: str, other: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        QT_QPA_PLATFORM="offscreen",
        THOUGHTDESK_QUIT_WHEN_SHOWN="1",
        THOUGHTDESK_NO_WIZARD="1",
        THOUGHTDESK_LOG_DIR=str(tmp_path / "logs"),
        THOUGHTDESK_CONFIG_DIR=str(tmp_path / "config"),
    )
    args = [sys.executable, "-c", DRIVER, str(library), answer, str(other or tmp_path / "unused")]
    # A child starts Python, Qt and the app: 5-8 s on 2 cores with other work beside it. 300 s
    # is for a machine far busier still; a child that still has not quit fails with its output.
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"run_gui did not quit within 300 s; stdout: {expired.stdout!r}; stderr: {expired.stderr!r}")


def test_gui_on_a_typo_asks_and_quitting_leaves_nothing(tmp_path):
    """In a child process: run_gui runs the real app.exec() (see test_run_gui.py)."""
    typo = tmp_path / "typo" / "dir" / "x.thoughtdesk"
    run = _run_gui(tmp_path, typo, "quit")
    assert run.stdout.startswith(f"asked {typo}"), run.stdout + run.stderr
    assert "window-shown" not in run.stdout and run.returncode == 1
    assert f"no library at {typo}; nothing was created" in run.stderr
    assert not (tmp_path / "typo").exists()
    log = (tmp_path / "logs" / "thoughtdesk.log").read_text(encoding="utf-8")
    assert f"no library at {typo}: the user chose quit" in log


def test_gui_creates_the_library_only_when_told(tmp_path):
    typo = tmp_path / "new" / "x.thoughtdesk"
    run = _run_gui(tmp_path, typo, "create")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"asked {typo}" and lines[1].startswith("window-shown ")
    assert typo.is_file()
    log = (tmp_path / "logs" / "thoughtdesk.log").read_text(encoding="utf-8")
    assert f"created a new library at {typo} with the demo collection" in log

    other = tmp_path / "chosen.thoughtdesk"
    run = _run_gui(tmp_path, tmp_path / "typo2" / "y.thoughtdesk", "choose", other)
    assert run.returncode == 0, run.stderr
    assert other.is_file() and not (tmp_path / "typo2").exists()

    run = _run_gui(tmp_path, typo, "quit")  # it exists now: opened without a question
    assert run.returncode == 0 and run.stdout.startswith("window-shown "), run.stdout + run.stderr


def test_the_default_library_of_a_first_start_is_made_without_asking(tmp_path):
    default = tmp_path / "data" / "ThoughtDesk" / "library.thoughtdesk"
    run = _run_gui(tmp_path, default, "quit")
    assert run.returncode == 0 and run.stdout.startswith("window-shown "), run.stdout + run.stderr
    assert default.is_file()


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # offscreen: the window comes to the front
def test_a_missing_library_handed_over_is_asked_about(window, qtbot, tmp_path, monkeypatch):
    shown = window.library.path
    asked: list[tuple[Path, str]] = []

    def question(path, parent, **options):
        asked.append((path, options.get("quit_text", "")))
        return Choice.QUIT

    monkeypatch.setattr(missing_library, "question", question)
    typo = tmp_path / "typo" / "x.thoughtdesk"
    window.open_handed_over(typo)
    assert asked == [(typo, "&Cancel")] and window.library.path == shown
    assert not (tmp_path / "typo").exists()
    assert isinstance(missing_library_box(typo), QMessageBox)
