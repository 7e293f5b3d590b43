"""Fixtures for run tests: a library holding the demo collection."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.libraries import DEMO, demo_library  # noqa: F401 - DEMO re-exported for the tests here
from tests.helpers.models import SERVER_KEY  # noqa: F401 - re-exported for the tests here


@pytest.fixture
def library_path(tmp_path: Path) -> Path:
    """A fresh library file with the shipped demo collection (16 samples, 4 datasets)."""
    return demo_library(tmp_path / "library.thoughtdesk")
