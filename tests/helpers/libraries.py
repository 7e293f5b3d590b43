"""Library files for tests: real SQLite files holding a known collection."""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import resource_path

DEMO = "demo"


def demo_library(path: Path) -> Path:
    """A fresh library file at ``path`` with the shipped demo collection (16 samples, 4 datasets)."""
    with Library.open(path) as lib:
        import_thoughtsource(lib, resource_path("demo_collection.json"), collection=DEMO)
    return path
