"""Introspection of a library with sqlite-utils, and the Datasette metadata built from it
(issue 16, points 12 and 13)."""

from __future__ import annotations

import json
import sqlite3

from thoughtdesk.core.library.schema import datasette_metadata, fts_tables, hidden_tables, library_metadata
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import resource_path

TEMPLATE = json.loads(resource_path("datasette-metadata.json").read_text(encoding="utf-8"))


def test_the_index_and_its_shadow_tables_are_found(tmp_path):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        assert fts_tables(lib.conn) == ["sample_fts"]
        hidden = hidden_tables(lib.conn)
        names = {r[0] for r in lib.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "sample_fts" in hidden and "sample_fts_data" in hidden and "_migrations" in hidden
    assert set(hidden) <= names and "sample" not in hidden


def test_metadata_fits_the_file(tmp_path):
    path = tmp_path / "ward.thoughtdesk"
    Library.open(path).close()
    document = library_metadata(
        path, {**TEMPLATE, "databases": {"x": {"tables": {"ghost": {}, **TEMPLATE["databases"]["library"]["tables"]}}}}
    )
    tables = document["databases"]["ward"]["tables"]
    assert "ghost" not in tables  # named by the template, absent from the file
    assert tables["sample"]["fts_table"] == "sample_fts" and tables["sample_fts_idx"] == {"hidden": True}
    bare = sqlite3.connect(":memory:")
    bare.execute("CREATE TABLE sample (id INTEGER PRIMARY KEY, question TEXT)")
    plain = datasette_metadata(bare, TEMPLATE, "bare")["databases"]["bare"]["tables"]
    assert "fts_table" not in plain["sample"]  # no index: none is named
