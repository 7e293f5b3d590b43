"""Fixtures for the dataset loader tests: the fixture folder and the shared real-data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import FIXTURES

DATASET_FIXTURES = FIXTURES / "datasets"


@pytest.fixture
def dataset_fixtures() -> Path:
    return DATASET_FIXTURES
