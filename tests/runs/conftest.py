"""Fixtures for run tests: a library holding the demo collection, and the generation servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from thoughtdesk.core.importing import import_thoughtsource
from thoughtdesk.core.paths import resource_path
from thoughtdesk.core.store import Library

# Reused, not copied: the llama.cpp server (session-scoped) and the fault-injecting server.
from tests.generation.conftest import (  # noqa: F401  (pytest fixtures)
    SERVER_KEY,
    fake_server,
    gguf_model,
    llama_server,
)

DEMO = "demo"


@pytest.fixture
def library_path(tmp_path: Path) -> Iterator[Path]:
    """A fresh library file with the shipped demo collection (16 samples, 4 datasets)."""
    path = tmp_path / "library.thoughtdesk"
    with Library.open(path) as lib:
        import_thoughtsource(lib, resource_path("demo_collection.json"), collection=DEMO)
    yield path
