"""Save docs/screenshots/results.png: the Results tab on the Demo and ThoughtSource collections.

Run on demand, from the repository root, with every docs screenshot:
``python -m tests.helpers.screenshots --docs``; or only this one:
``PYTHONPATH=desktop python -m tests.ui.evaluation.screenshot [OUT.png]``
(default docs/screenshots/results.png).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.helpers.paths import ROOT
from tests.helpers.screenshots import TS67, isolated_home, spin


def main(argv: list[str]) -> int:
    home = isolated_home("td-results-shot-")
    from thoughtdesk.core.evaluation.rescoring import rescore
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.ui.app.startup import make_application, open_library_for_gui

    out = Path(argv[0]) if argv else ROOT / "docs" / "screenshots" / "results.png"
    app = make_application()
    from thoughtdesk.ui.app.main_window import MainWindow

    lib = open_library_for_gui(home / "library.thoughtdesk")
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

    spin(app, 0.5)
    while not view.is_idle() or view.snapshot is None:
        spin(app, 0.1)
    spin(app, 0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(out))
    print(f"written {out}")
    window.close()
    window.deleteLater()
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
