"""Save docs/screenshots/review.png and settings.png from a real ThoughtSource collection.

Run on demand, from the repository root, with every docs screenshot:
``python -m tests.helpers.screenshots --docs``; or only these two:
``PYTHONPATH=desktop python -m tests.ui.review.docs_screenshots [OUT_DIR]`` (default
docs/screenshots/). Offscreen; a temporary HOME, settings and library holding the ThoughtSource
67 collection of ../shared/datasets (gpt-3.5-turbo, three CoTs per question). Every tab of the
Settings dialog is also saved in the temporary folder (printed), to check that nothing is cut.
Look at the PNGs after.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tests.helpers.paths import ROOT
from tests.helpers.screenshots import TS67, isolated_home, spin

COLLECTION = "ThoughtSource 67 (gpt-3.5-turbo)"


def pick_sample(library) -> int:
    """A MedQA question where the three CoTs disagree (some correct, some not), not too long."""
    row = library.conn.execute(
        "SELECT id FROM sample WHERE dataset = 'med_qa' AND n_cots = 3 AND n_incorrect BETWEEN 1 AND 2 "
        "AND length(question) BETWEEN 200 AND 420 ORDER BY position LIMIT 1"
    ).fetchone()
    return row[0]


def models_server():
    """A server on 127.0.0.1 that lists one model, as ``llama-server`` or vLLM would."""
    import http.server
    import json
    import threading

    class Models(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name
            body = json.dumps({"object": "list", "data": [{"id": "medgemma-4b-it-q4"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    if not TS67.exists():
        print(f"{TS67} is missing", file=sys.stderr)
        return 1
    home = isolated_home("td-review-shots-")
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.core.library.store import Library
    from thoughtdesk.ui.app.startup import make_application

    app = make_application()
    from thoughtdesk.ui.app.main_window import MainWindow
    from thoughtdesk.ui.settings.dialog import SettingsDialog
    from thoughtdesk.ui.settings.options import AppSettings, save_settings

    save_settings(AppSettings(user_name="Dr Ada Lovelace", openai_enabled=True, local_model_path=""))
    library = Library.open(home / "library.thoughtdesk")
    import_thoughtsource(library, TS67, collection=COLLECTION)
    sample_pk = pick_sample(library)
    window = MainWindow(library)
    window.resize(1500, 950)
    window.show()
    spin(app, 0.5)
    view = window.review.view
    window.open_sample(sample_pk)
    window.show_tab(view)
    spin(app, 0.5)
    view.show_sample(sample_pk)
    spin(app, 0.3)

    def key(code, modifier=Qt.KeyboardModifier.NoModifier) -> None:
        QTest.keyClick(view, code, modifier)

    # A few annotations, as a reviewer would make them: on the second CoT preferred and quality 5;
    # on the first (left current, so the panel shows them) a label, a span label and quality 3.
    generated = [i for i, pk in enumerate(view.cot_pks) if pk is not None]
    view.compare.set_current(generated[1])
    view._show_current()
    key(Qt.Key.Key_S)
    key(Qt.Key.Key_5, Qt.KeyboardModifier.AltModifier)
    key(Qt.Key.Key_K)
    key(Qt.Key.Key_1)
    key(Qt.Key.Key_3, Qt.KeyboardModifier.AltModifier)
    panel = view.compare.panels[generated[0]]
    text = panel.cot.text
    assert isinstance(text, str)
    sentence_end = text.find(".", 40)
    if sentence_end > 0:
        panel.select_range(max(0, text.rfind(".", 0, sentence_end) + 1), sentence_end + 1)
        key(Qt.Key.Key_2)
    view.compare.paint_all()
    spin(app, 0.5)
    assert window.grab().save(str(out / "review.png"))

    server = models_server()
    dialog = SettingsDialog(parent=window)
    dialog.forms.providers.openai.base_url.setText(f"http://127.0.0.1:{server.server_address[1]}/v1")
    dialog.show()
    spin(app, 0.3)
    tested: list = []
    dialog.forms.providers.openai.tested.connect(tested.append)
    dialog.forms.providers.openai.test_connection()  # a llama.cpp-style server on this machine answers
    deadline = time.monotonic() + 10
    while not tested and time.monotonic() < deadline:
        spin(app, 0.05)
    server.shutdown()
    for index in range(dialog.tabs.count()):  # every tab, for checking that nothing is cut
        dialog.tabs.setCurrentIndex(index)
        spin(app, 0.1)
        dialog.grab().save(str(home / f"settings-tab-{index}.png"))
    dialog.tabs.setCurrentWidget(dialog.forms.providers)
    spin(app, 0.2)
    assert dialog.grab().save(str(out / "settings.png"))
    dialog.close()
    print(f"written to {out}: review.png (sample {sample_pk}), settings.png; every settings tab in {home}")
    window.close()
    library.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
