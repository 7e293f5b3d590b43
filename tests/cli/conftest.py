"""Fixtures for the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.libraries import demo_library


@pytest.fixture
def library_path(tmp_path: Path) -> Path:
    """A fresh library file with the shipped demo collection (16 samples, 4 datasets)."""
    return demo_library(tmp_path / "library.thoughtdesk")
