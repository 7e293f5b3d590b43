"""Screenshots: the one helper tests save them with, and the script that remakes the docs' ones.

In tests, :func:`save_screenshot` writes under the test's ``tmp_path`` (never /tmp or docs/).
To collect every screenshot of a test run in one folder, set ``THOUGHTDESK_SCREENSHOTS=DIR``::

    THOUGHTDESK_SCREENSHOTS=/tmp/shots python -m pytest tests/ui

The README's and docs' screenshots are made on demand, not by the test run::

    python -m tests.helpers.screenshots --docs      # into docs/screenshots/
    python -m tests.helpers.screenshots OUT_DIR     # anywhere else, to compare first

Run from the repository root. It writes main-window.png (below), review.png and settings.png
(tests/ui/review/docs_screenshots.py), results.png (tests/ui/evaluation/screenshot.py) and
review-dark.png (tests/ui/review/test_screenshots.py, the dark palette), each in a child
process, offscreen, with a temporary HOME and library. The pictures that use the ThoughtSource
67 collection need ../shared/datasets. Look at the PNGs after. The import, mapping, planner,
fragment and runs pictures are taken by hand from a test run's screenshots.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.helpers.paths import ROOT, SHARED

#: The variable naming a folder that receives a copy of every screenshot a test saves.
COLLECT_VARIABLE = "THOUGHTDESK_SCREENSHOTS"

TS67 = SHARED / "thoughtsource" / "thoughtsource_67_openai_chat_gpt-3.5-turbo_None_None-kojima-01-zhou-01.json"


def save_screenshot(widget, folder: Path, name: str) -> Path:
    """Save ``widget`` as ``folder/name.png`` and return the path; fail if nothing was written.

    ``folder`` is the test's ``tmp_path`` (or a folder in it). With ``THOUGHTDESK_SCREENSHOTS``
    set, a copy also goes to that folder.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    assert widget.grab().save(str(path)), f"could not write {path}"
    assert path.stat().st_size > 0
    collect = os.environ.get(COLLECT_VARIABLE)
    if collect:
        Path(collect).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(collect) / path.name)
    return path


# The on-demand script ------------------------------------------------------------------------


def spin(app, seconds: float) -> None:
    """Run the event loop for ``seconds`` (scripts have no qtbot)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def isolated_home(prefix: str) -> Path:
    """A temporary HOME for a screenshot script: its settings, config, logs and keyring are its
    own, never the user's. Call before importing the application."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    for name, value in (
        ("HOME", home),
        ("XDG_CONFIG_HOME", home / "config"),
        ("XDG_DATA_HOME", home / "data"),
        ("THOUGHTDESK_CONFIG_DIR", home / "config" / "td"),
        ("THOUGHTDESK_LOG_DIR", home / "logs"),
    ):
        os.environ[name] = str(value)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["THOUGHTDESK_TESTING"] = "1"  # in-memory keyring
    os.environ["THOUGHTDESK_NO_WIZARD"] = "1"
    from thoughtdesk.ui.qt import QSettings

    for settings_format in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(settings_format, QSettings.Scope.UserScope, str(home / "qsettings"))
    return home


def main_window_png(out: Path) -> None:
    """main-window.png: the Samples tab on the demo and (when present) ThoughtSource 67."""
    home = isolated_home("td-shots-")
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.ui.app.startup import make_application, open_library_for_gui

    app = make_application()
    from thoughtdesk.ui.app.main_window import MainWindow

    library = open_library_for_gui(home / "library.thoughtdesk")
    if TS67.exists():
        import_thoughtsource(library, TS67, collection="ThoughtSource 67 (gpt-3.5-turbo)")
    window = MainWindow(library)
    window.resize(1440, 900)
    window.show()
    spin(app, 1.0)
    if TS67.exists():
        window.samples.tree.select_collection("ThoughtSource 67 (gpt-3.5-turbo)")
        spin(app, 0.5)
        window.samples.table.selectRow(2)
    spin(app, 1.0)
    assert window.grab().save(str(out / "main-window.png"))
    window.close()


def _child(args: list[str], **extra_env: str) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", THOUGHTDESK_TESTING="1", **extra_env)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "desktop"), str(ROOT), env.get("PYTHONPATH", "")])
    print("+", " ".join(args), flush=True)
    subprocess.run([sys.executable, *args], cwd=ROOT, env=env, check=True)


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--main-window-only":  # the first child below
        main_window_png(Path(argv[1]))
        return 0
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    out = (ROOT / "docs" / "screenshots" if argv[0] == "--docs" else Path(argv[0])).resolve()
    out.mkdir(parents=True, exist_ok=True)
    _child(["-m", "tests.helpers.screenshots", "--main-window-only", str(out)])
    _child(["-m", "tests.ui.review.docs_screenshots", str(out)])
    _child(["-m", "tests.ui.evaluation.screenshot", str(out / "results.png")])
    with tempfile.TemporaryDirectory(prefix="td-shots-") as shots:
        test = "tests/ui/review/test_screenshots.py::test_review_tab_screenshot[dark]"
        _child(["-m", "pytest", "-q", "-p", "no:cacheprovider", test], **{COLLECT_VARIABLE: shots})
        shutil.copy(Path(shots) / "review-dark.png", out / "review-dark.png")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
