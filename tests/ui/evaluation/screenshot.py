"""Save docs/screenshots/results.png: the Results tab on the Demo and ThoughtSource collections.

Run on demand:  python tests/results/screenshot.py [OUT.png]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from tests.helpers.paths import ROOT

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TS67 = (
    ROOT.parent
    / "shared"
    / "datasets"
    / "thoughtsource"
    / "thoughtsource_67_openai_chat_gpt-3.5-turbo_None_None-kojima-01-zhou-01.json"
)


def main(argv: list[str]) -> int:
    from thoughtdesk.core.evaluation.rescoring import rescore
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.ui.app.startup import make_application, open_library_for_gui

    out = Path(argv[0]) if argv else ROOT / "docs" / "screenshots" / "results.png"
    app = make_application()
    from thoughtdesk.ui.app.main_window import MainWindow

    lib = open_library_for_gui(Path(tempfile.mkdtemp()) / "library.thoughtdesk")
    name = "Demo"
    if TS67.exists():
        name = "ThoughtSource 67 (gpt-3.5-turbo)"
        import_thoughtsource(lib, TS67, collection=name)
        rescore(lib, name)
    window = MainWindow(lib)
    window.resize(1440, 920)
    window.show()
    view = window.evaluation
    window.show_tab(view)
    window.samples.tree.select_collection(name)

    def spin(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.02)

    spin(0.5)
    while not view.is_idle() or view.snapshot is None:
        spin(0.1)
    spin(0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(out))
    print(f"written {out}")
    window.close()
    window.deleteLater()
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
