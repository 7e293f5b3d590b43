"""run_gui: the wizard before the main window only on a first start; the library from settings.

Each case runs in a child process: run_gui runs the real ``app.exec()``, and after an
``exec()`` returns in a process, PySide6 has torn down objects that later tests' background
tasks need ("Signal source has been deleted"), so it must not run inside the test process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

# The wizard's exec() is replaced so the child does not wait for a person: it prints that the
# wizard was shown and returns "cancelled", as a user closing it would.
DRIVER = """
import sys
from thoughtdesk.ui.app import startup as app
from thoughtdesk.ui.settings import first_run, options as settings

def shown(self):
    print("wizard-shown", flush=True)
    return 0

first_run.FirstRunWizard.exec = shown
# A library named here that does not exist is asked about first (test_missing_library.py): "create".
from thoughtdesk.ui.app import missing_library
missing_library.question = lambda path, parent, **_: missing_library.Choice.CREATE
if "--done" in sys.argv:
    settings.mark_first_run_done()
if "--library-setting" in sys.argv:
    settings.save_settings(settings.AppSettings(library_path=sys.argv[-1]))
raise SystemExit(app.run_gui(None if sys.argv[1] == "-" else sys.argv[1]))
"""


def _run_gui(tmp_path: Path, *args: str, no_wizard: bool = False) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        QT_QPA_PLATFORM="offscreen",
        THOUGHTDESK_QUIT_WHEN_SHOWN="1",
        THOUGHTDESK_LOG_DIR=str(tmp_path / "logs"),
        THOUGHTDESK_CONFIG_DIR=str(tmp_path / "config" / "ThoughtDesk"),
    )
    env.pop("THOUGHTDESK_NO_WIZARD", None)
    if no_wizard:
        env["THOUGHTDESK_NO_WIZARD"] = "1"
    return subprocess.run(
        [sys.executable, "-c", DRIVER, *args], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT
    )


def test_first_start_shows_the_wizard_before_the_window(tmp_path):
    run = _run_gui(tmp_path, str(tmp_path / "a.thoughtdesk"))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "wizard-shown" and lines[1].startswith("window-shown ")
    assert (tmp_path / "a.thoughtdesk").exists()
    assert "log started" in (tmp_path / "logs" / "thoughtdesk.log").read_text()


@pytest.mark.parametrize("how", ["env", "done"])
def test_no_wizard_when_done_or_disabled(tmp_path, how):
    args = [str(tmp_path / "b.thoughtdesk")] + (["--done"] if how == "done" else [])
    run = _run_gui(tmp_path, *args, no_wizard=how == "env")
    assert run.returncode == 0, run.stderr
    assert "wizard-shown" not in run.stdout and run.stdout.startswith("window-shown ")


def test_library_path_setting_is_used(tmp_path):
    target = tmp_path / "from-settings.thoughtdesk"
    run = _run_gui(tmp_path, "-", "--library-setting", str(target), no_wizard=True)
    assert run.returncode == 0, run.stderr
    assert target.exists() and not (tmp_path / "data" / "ThoughtDesk" / "library.thoughtdesk").exists()


def test_bad_values_in_the_settings_file_open_the_window_with_defaults(tmp_path):
    """Issue 28, point 15: a hand-edited settings file with values no option allows still opens
    the window; each bad value is logged as one line naming the file, the line and the key."""
    settings = tmp_path / "config" / "ThoughtDesk" / "ThoughtDesk.ini"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        "[network]\noffline=maybe\n[columns]\nsampleTable=wide\n[mainWindow]\ngeometry=big\n"
        "[review]\nblind=perhaps\n[generation]\nmax_response_mb=lots\n",
        encoding="utf-8",
    )
    run = _run_gui(tmp_path, str(tmp_path / "c.thoughtdesk"), no_wizard=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("window-shown ") and "Traceback" not in run.stderr
    log = (tmp_path / "logs" / "thoughtdesk.log").read_text(encoding="utf-8")
    assert f"{settings}, line 2: network/offline is 'maybe', not true or false" in log
    assert f"{settings}, line 6: mainWindow/geometry is 'big', not binary data" in log
    assert f"{settings}, line 10: generation/max_response_mb is 'lots'" in log
