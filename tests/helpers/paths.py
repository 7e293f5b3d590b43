"""Where things are: the repository, the project's test fixtures, the shared datasets folder."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = (ROOT / ".." / "shared" / "datasets").resolve()


def shared_path(*parts: str) -> Path:
    """A path in ../shared/datasets; skips the test with a reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared dataset file {path} is absent (clone without ../shared)")
    return path
