"""Save the README's screenshot of the main window (docs/screenshots/main-window.png).

Run on demand:  python tests/screenshots.py [OUT_DIR]   (default docs/screenshots/)
Offscreen; a temporary library with the demo collection and, when ../shared/datasets is
present, a ThoughtSource collection with generated CoTs. Look at the PNGs after.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from tests.helpers.paths import ROOT

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["THOUGHTDESK_TESTING"] = "1"  # in-memory keyring

TS = (
    ROOT.parent
    / "shared"
    / "datasets"
    / "thoughtsource"
    / "thoughtsource_67_openai_chat_gpt-3.5-turbo_None_None-kojima-01-zhou-01.json"
)


def spin(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="td-shots-"))
    os.environ["HOME"] = str(home)
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    sys.path.insert(0, str(ROOT / "desktop"))
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.ui.app.startup import make_application, open_library_for_gui

    app = make_application()
    from thoughtdesk.ui.app.main_window import MainWindow

    library = open_library_for_gui(home / "library.thoughtdesk")
    if TS.exists():
        import_thoughtsource(library, TS, collection="ThoughtSource 67 (gpt-3.5-turbo)")
    window = MainWindow(library)
    window.resize(1440, 900)
    window.show()
    spin(app, 1.0)
    if TS.exists():
        window.samples.tree.select_collection("ThoughtSource 67 (gpt-3.5-turbo)")
        spin(app, 0.5)
        window.samples.table.selectRow(2)
    spin(app, 1.0)
    window.grab().save(str(out / "main-window.png"))

    print(f"written to {out}")
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
