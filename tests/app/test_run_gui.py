"""run_gui: the wizard before the main window only on a first start; the library from settings."""

from __future__ import annotations

import sys

import pytest

from thoughtdesk.ui import app as app_module
from thoughtdesk.ui import first_run
from thoughtdesk.ui.qt import QApplication
from thoughtdesk.ui.settings import AppSettings, mark_first_run_done, save_settings


@pytest.fixture
def gui(qapp, monkeypatch, capsys):
    """run_gui quits right after the first paint; the wizard's exec is recorded, not run."""
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # run_gui installs the crash hook
    monkeypatch.setenv("THOUGHTDESK_QUIT_WHEN_SHOWN", "1")
    shown: list[str] = []

    def fake_exec(self) -> int:
        shown.append(self.objectName())
        return 0  # as if cancelled: the app starts with the defaults

    monkeypatch.setattr(first_run.FirstRunWizard, "exec", fake_exec)

    def run(library: str | None = None) -> tuple[int, list[str], str]:
        status = app_module.run_gui(library)
        for widget in QApplication.topLevelWidgets():
            widget.close()
        return status, shown, capsys.readouterr().out

    return run


def test_first_start_shows_the_wizard_before_the_window(gui, monkeypatch, tmp_path):
    monkeypatch.delenv("THOUGHTDESK_NO_WIZARD")
    status, shown, out = gui(str(tmp_path / "a.thoughtdesk"))
    assert status == 0 and shown == ["firstRunWizard"]
    assert out.startswith("window-shown ")
    assert (tmp_path / "a.thoughtdesk").exists()


@pytest.mark.parametrize("how", ["env", "done"])
def test_no_wizard_when_done_or_disabled(gui, monkeypatch, tmp_path, how):
    if how == "done":
        monkeypatch.delenv("THOUGHTDESK_NO_WIZARD")
        mark_first_run_done()
    status, shown, _ = gui(str(tmp_path / "b.thoughtdesk"))
    assert status == 0 and shown == []


def test_library_path_setting_is_used(gui, tmp_path):
    target = tmp_path / "from-settings.thoughtdesk"
    save_settings(AppSettings(library_path=str(target)))
    status, _, _ = gui()
    assert status == 0 and target.exists()
