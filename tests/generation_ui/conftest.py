"""Fixtures for the generation GUI: a library with a small collection, the main window, and the
llama.cpp server fixtures of tests/generation (imported, so the model is assembled once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.generation.conftest import SERVER_KEY, gguf_model, llama_server  # noqa: F401 - fixtures
from thoughtdesk.core.importing import import_thoughtsource
from thoughtdesk.core.store import Library

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "generation_ui"
COLLECTION = "Lab quiz"


@pytest.fixture
def library_path(tmp_path) -> Path:
    """A library holding the collection "Lab quiz": 3 test samples (one with braces and
    markup in its question) and 3 train samples with reference CoTs."""
    path = tmp_path / "gen.thoughtdesk"
    with Library.open(path) as lib:
        import_thoughtsource(lib, FIXTURES / "planner_collection.json", collection=COLLECTION)
    return path


@pytest.fixture
def window(qtbot, library_path) -> Iterator:
    from thoughtdesk.ui.main_window import MainWindow

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
    return window.installed["thoughtdesk.ui.generation_ui"]
