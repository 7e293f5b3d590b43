"""Review tests: a real library file holding the review fixture collection."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library

FIXTURE = FIXTURES / "review" / "review_collection.json"
COLLECTION = "review"


def open_library(path: Path) -> Library:
    """A library at ``path`` holding the review fixture as collection ``review``."""
    lib = Library.open(path)
    if lib.collection_id(COLLECTION) is None:
        import_thoughtsource(lib, FIXTURE, collection=COLLECTION)
    return lib


def table_digest(lib: Library) -> str:
    """SHA-256 over every row of every ordinary table, to prove a failed merge changed nothing."""
    digest = hashlib.sha256()
    tables = [
        r[0]
        for r in lib.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name"
        )
    ]
    for table in tables:
        digest.update(table.encode())
        # Sorted in Python: FTS shadow tables are WITHOUT ROWID, so there is no common order key.
        for text in sorted(repr(row) for row in lib.conn.execute(f'SELECT * FROM "{table}"')):
            digest.update(text.encode())
    return digest.hexdigest()


def cot_pks(lib: Library, sample_id: str) -> list[int]:
    """Keys of a fixture sample's generated CoTs, in stored order."""
    return [
        r[0]
        for r in lib.conn.execute(
            "SELECT c.id FROM generated_cot c JOIN sample s ON c.sample_pk = s.id "
            "WHERE s.sample_id = ? ORDER BY c.position",
            (sample_id,),
        )
    ]


def sample_pk(lib: Library, sample_id: str) -> int:
    return lib.conn.execute("SELECT id FROM sample WHERE sample_id = ?", (sample_id,)).fetchone()[0]


def n_annotations(lib: Library, sample_id: str) -> int:
    return lib.conn.execute("SELECT n_annotations FROM sample WHERE sample_id = ?", (sample_id,)).fetchone()[0]


@pytest.fixture
def lib_path(tmp_path) -> Path:
    return tmp_path / "library.sqlite"


@pytest.fixture
def lib(lib_path):
    library = open_library(lib_path)
    yield library
    library.close()
