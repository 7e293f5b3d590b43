"""The small lookups the views use instead of SQL of their own (core.library.queries)."""

from __future__ import annotations

from tests.helpers.libraries import DEMO, demo_library
from thoughtdesk.core.library.queries import (
    collection_name,
    cot_sample,
    data_version,
    integrity_check,
    sample_collection_name,
)
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.library.store import Library


def test_names_and_owners_are_looked_up_by_key(tmp_path):
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        cid = lib.collection_id(DEMO)
        assert cid is not None and collection_name(lib, cid) == DEMO
        assert collection_name(lib, cid + 1000) is None
        stored = next(
            s for s in (load_sample(lib, pk) for pk in range(1, 40)) if s is not None and s.sample.generated_cot
        )
        assert sample_collection_name(lib, stored.pk) == DEMO
        assert sample_collection_name(lib, 10**9) is None
        cot_pk = stored.cot_pks[0]
        assert cot_sample(lib, cot_pk) == stored.pk
        assert cot_sample(lib, 10**9) is None
        assert integrity_check(lib) == "ok"


def test_data_version_changes_on_another_connections_commit_only(tmp_path):
    path = demo_library(tmp_path / "lib.thoughtdesk")
    with Library.open(path) as lib, Library.open(path) as other:
        before = data_version(lib)
        rename(lib, DEMO, "mine")  # this connection's own write
        assert data_version(lib) == before
        rename(other, "mine", "theirs")
        assert data_version(lib) != before


def rename(lib: Library, old: str, new: str) -> None:
    """A committed write (the library has no rename: it is done here in SQL)."""
    with lib.transaction():
        lib.conn.execute("UPDATE collection SET name = ? WHERE name = ?", (new, old))
