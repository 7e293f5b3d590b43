"""Fixtures for the generation GUI: a library with a small collection, the main window, and the
llama.cpp server fixtures of tests/generation (imported, so the model is assembled once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.models import SERVER_KEY  # noqa: F401 - re-exported for the tests here
from tests.helpers.paths import FIXTURES
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library

GEN_UI = FIXTURES / "generation_ui"
COLLECTION = "Lab quiz"


@pytest.fixture
def library_path(tmp_path) -> Path:
    """A library holding the collection "Lab quiz": 3 test samples (one with braces and
    markup in its question) and 3 train samples with reference CoTs."""
    path = tmp_path / "gen.thoughtdesk"
    with Library.open(path) as lib:
        import_thoughtsource(lib, GEN_UI / "planner_collection.json", collection=COLLECTION)
    return path


@pytest.fixture
def window(qtbot, library_path) -> Iterator:
    from thoughtdesk.ui.app.main_window import MainWindow

    win = MainWindow(Library.open(library_path))
    qtbot.addWidget(win)
    win.resize(1400, 860)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()


@pytest.fixture
def generation(window):
    """The GenerationUI object the installer put on the window."""
    return window.installed["thoughtdesk.ui.generation.controller"]
