"""Fixtures for the generation GUI: a library with a small collection (the main window of
``tests/helpers/window.py`` opens it), and the llama.cpp server fixtures of tests/generation
(imported, so the model is assembled once)."""

from __future__ import annotations

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
def window_library(library_path) -> Path:
    """The main window (``window``) opens the "Lab quiz" library."""
    return library_path


@pytest.fixture
def generation(window):
    """The Generate menu, planner and Runs tab of the window."""
    return window.generation
