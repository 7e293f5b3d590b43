"""A library that cannot be written opens read-only in the window (issue 15, point 10): the title
says so, browsing works, and a change is refused with a message naming the library, not a crash."""

from __future__ import annotations

from pathlib import Path

from tests.core.library.test_file_faults import read_only
from tests.helpers.libraries import demo_library
from tests.helpers.paths import FIXTURES
from tests.helpers.window import last_message


def test_read_only_library_in_the_window(make_window, qtbot, tmp_path: Path):
    folder = tmp_path / "cd-rom"
    folder.mkdir()
    library = demo_library(folder / "ward.thoughtdesk")
    before = library.read_bytes()
    with read_only(folder):
        window = make_window(library)
        assert window.library.read_only
        assert "read-only" in window.windowTitle()
        assert window.samples.current_collection() is not None  # browsing works
        task = window.importing.import_file(FIXTURES / "thoughtsource" / "edge_cases.json", "edge")
        assert task is not None
        qtbot.waitUntil(lambda: task.done, timeout=20000)
        text = last_message(window).text()
        assert "ward.thoughtdesk is open read-only" in text and "Traceback" not in text
    assert library.read_bytes() == before
