"""Issue 27, point 2: the window's first paint shows the Samples tab with data, and the Review,
Results and Runs tabs (the review core, pyqtgraph, scipy, the run engine, the backends) are built
after it or when first needed. The real start-up runs in a child process (``thoughtdesk`` with the cold-start probe),
which reports at its first paint what was imported and what the window shows.
Timing and GUI-thread stalls: tests/benchmarks/bench_cold_start.py --stalls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.libraries import demo_library

#: Run as `python -c`: the probe reports at the first paint instead of quitting blindly.
_PROBE = """
import json, sys
from thoughtdesk.ui.app import startup_probe
from thoughtdesk.ui.qt import QApplication, QEvent, QObject

class Report(QObject):
    def eventFilter(self, watched, event):
        if event.type() in (QEvent.Type.Paint, QEvent.Type.Expose):
            watched.removeEventFilter(self)
            window = watched
            report = {
                "modules": sorted(sys.modules),
                "tab": window.tabs.tabText(window.tabs.currentIndex()),
                "rows": window.samples.table.model().rowCount(),
                "pages": [type(window.tabs.widget(i)).__name__ for i in range(window.tabs.count())],
            }
            with open(sys.argv[1], "w", encoding="utf-8") as stream:
                json.dump(report, stream)
            QApplication.quit()
        return False

def report_when_shown(window):
    window.installEventFilter(Report(window))

startup_probe.quit_when_shown = report_when_shown
from thoughtdesk.cli.main import main
raise SystemExit(main(sys.argv[2:]))
"""

NOT_BEFORE_FIRST_PAINT = (
    "pyqtgraph",
    "scipy",
    "llama_cpp",
    "httpx",
    "thoughtdesk.ui.evaluation.view",
    "thoughtdesk.ui.review.view",
    "thoughtdesk.core.review.compare.similarity",
    # The settings, the Generate menu, Edit > Models and the Samples tab used to import these.
    "thoughtdesk.core.generation.runs.spec",
    "thoughtdesk.core.generation.fragment_store",
    "thoughtdesk.ui.models.dialog",
    "thoughtdesk.core.models.fit",
    "thoughtdesk.ui.trajectories.view",
    "thoughtdesk.ui.generation.runs_panel",
    "thoughtdesk.core.generation.runs.execute",
    "thoughtdesk.core.generation.backends.openai_compat",
)


def test_first_paint_shows_samples_with_data_and_defers_the_heavy_tabs(tmp_path: Path) -> None:
    library = demo_library(tmp_path / "lib.thoughtdesk")
    report_path = tmp_path / "report.json"
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        THOUGHTDESK_QUIT_WHEN_SHOWN="1",
        THOUGHTDESK_NO_WIZARD="1",
        THOUGHTDESK_CONFIG_DIR=str(tmp_path / "config"),
        THOUGHTDESK_LOG_DIR=str(tmp_path / "logs"),
    )
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(report_path), "gui", str(library)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report_path.exists(), done.stderr[-3000:]
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["tab"] == "Samples" and report["rows"] > 0  # the first frame has data
    modules = set(report["modules"])
    early = [name for name in NOT_BEFORE_FIRST_PAINT if name in modules]
    assert not early, f"imported before the first paint: {early}"
    assert report["pages"][1:4] == ["QWidget", "QWidget", "QWidget"]  # Review, Results, Runs: stand-ins until built
