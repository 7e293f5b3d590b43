"""Native crashes and Qt's warnings reach the log folder (issue 16, point 15). Both run in a
child process: one ends in a real segmentation fault, and a Qt message handler is process-wide."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers.paths import ROOT

CHILD = """
import faulthandler, logging
from thoughtdesk.core.settings.logs import setup_logging
from thoughtdesk.ui.app.diagnostics import enable_native_crash_log, route_qt_messages
from PySide6.QtCore import QCoreApplication, qWarning

app = QCoreApplication([])
setup_logging()
route_qt_messages()
qWarning("probe: a Qt warning")
logging.shutdown()
print(enable_native_crash_log())
faulthandler._sigsegv()  # a real native crash
"""


def test_a_native_crash_and_qt_warnings_are_written_to_the_log_folder(tmp_path):
    logs = tmp_path / "logs"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), QT_QPA_PLATFORM="offscreen", THOUGHTDESK_LOG_DIR=str(logs))
    run = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode != 0, "the child was meant to crash"
    crash_log = logs / "native-crash.log"
    assert run.stdout.strip() == str(crash_log)
    crash = crash_log.read_text(encoding="utf-8")
    assert "Fatal Python error: Segmentation fault" in crash and "<module>" in crash  # with the stack
    log = (logs / "thoughtdesk.log").read_text(encoding="utf-8")
    line = next(line for line in log.splitlines() if "probe: a Qt warning" in line)
    assert "WARNING" in line and "thoughtdesk.qt" in line
