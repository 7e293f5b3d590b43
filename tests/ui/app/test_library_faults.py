"""A damaged library and a full disk in the window (issue 15, point 9; the audit found no GUI test):
each ends in a dialog naming the library and what to do, and the app keeps running with what it
showed, nothing half-written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.window import last_message, message_boxes
from thoughtdesk.core.library.store import Library


def damage(path: Path) -> None:
    """Scribble over the pages after the schema, as test_file_faults does."""
    with Library.open(path) as lib:
        page_size = lib.conn.execute("PRAGMA page_size").fetchone()[0]
        pages = lib.conn.execute("PRAGMA page_count").fetchone()[0]
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(path, "r+b") as handle:
        handle.seek(2 * page_size)
        handle.write(b"\xde\xad\xbe\xef" * (page_size * (pages - 2) // 4))


def test_opening_a_damaged_library_says_so_and_keeps_the_one_shown(make_window, tmp_path):
    window = make_window(demo_library(tmp_path / "mine.thoughtdesk"))
    broken = demo_library(tmp_path / "ward.thoughtdesk")
    damage(broken)
    assert not window.open_library(broken)
    text = last_message(window).text()
    assert "ward.thoughtdesk" in text and "damaged" in text and "backup" in text and "Traceback" not in text
    assert window.isVisible() and window.library.path.name == "mine.thoughtdesk"
    assert window.samples.current_collection() == DEMO  # still browsing the library it showed


def test_a_library_damaged_while_open_fails_the_task_with_a_dialog(make_window, qtbot, tmp_path):
    library = demo_library(tmp_path / "ward.thoughtdesk")
    window = make_window(library)
    damage(library)  # under the open window: its next work reads the damaged pages
    task = window.importing.export_collection(DEMO, tmp_path / "out.json")
    assert task is not None
    qtbot.waitUntil(lambda: task.done, timeout=20000)
    text = last_message(window).text()
    assert "ward.thoughtdesk" in text and "damaged" in text and "Traceback" not in text
    assert not (tmp_path / "out.json").exists()
    assert window.isVisible()


def test_a_full_disk_during_an_import_is_a_dialog_and_nothing_half_written(make_window, qtbot, tmp_path, monkeypatch):
    """SQLite's max_page_count stands in for a full disk (it answers SQLITE_FULL as a full disk
    does), set on every connection the import opens."""
    library = demo_library(tmp_path / "ward.thoughtdesk")
    window = make_window(library)
    real_open = Library.open  # bound to Library, before the patch

    def nearly_full(cls, path, **options):
        opened = real_open(path, **options)
        pages = opened.conn.execute("PRAGMA page_count").fetchone()[0]
        opened.conn.execute(f"PRAGMA max_page_count = {pages + 1}")
        return opened

    big = tmp_path / "big.json"  # more than the free pages hold
    samples = [
        {"id": f"s{i}", "question": f"Question {i}: " + "words " * 400, "type": "text", "answer": ["a"]}
        for i in range(300)
    ]
    big.write_text(json.dumps({"gsm8k": {"test": samples}}), encoding="utf-8")
    monkeypatch.setattr(Library, "open", classmethod(nearly_full))
    task = window.importing.import_file(big, "big")
    assert task is not None
    qtbot.waitUntil(lambda: task.done, timeout=20000)
    monkeypatch.undo()
    boxes = message_boxes(window)
    assert boxes, "no dialog"
    text = boxes[-1].text()
    assert "the disk holding the library" in text and "ward.thoughtdesk is full" in text and "Traceback" not in text
    assert window.isVisible()
    assert [c.name for c in window.library.collections()] == [DEMO]  # nothing of the import kept
    with Library.open(library) as lib:
        assert [c.name for c in lib.collections()] == [DEMO]
        assert lib.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
