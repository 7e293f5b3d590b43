"""What a library file holds, read with sqlite-utils' introspection (issue 16, point 13).

sqlite-utils serves here, where its helpers say in one call what would otherwise be hand-made
queries of ``sqlite_master``: which tables are full-text indexes and which are their internal
(shadow) tables. The Datasette metadata of ``thoughtdesk library metadata`` is built from that,
so it always names the index the file really has and hides exactly its internal tables. The
import's hot path stays on ``executemany`` (``tests/benchmarks/bench_sqlite_utils.py``;
figures in docs/design.md).
"""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

import sqlite_utils

#: Tables of ThoughtDesk's own bookkeeping, not data a reader browses.
INTERNAL_TABLES = ("_migrations",)


def fts_tables(conn: sqlite3.Connection) -> list[str]:
    """The library's full-text index tables (FTS4 and FTS5), by name."""
    db = sqlite_utils.Database(conn)
    return sorted(set(db.table_names(fts4=True)) | set(db.table_names(fts5=True)))


def hidden_tables(conn: sqlite3.Connection) -> list[str]:
    """The full-text indexes, their shadow tables (``<index>_data``, ``_idx``, ...) and ThoughtDesk's
    own bookkeeping tables: what a browser of the data should not list."""
    db = sqlite_utils.Database(conn)
    indexes = fts_tables(conn)
    shadows = [name for name in db.table_names() if any(name.startswith(f"{index}_") for index in indexes)]
    return sorted({*indexes, *shadows, *(t for t in INTERNAL_TABLES if t in db.table_names())})


def datasette_metadata(conn: sqlite3.Connection, template: dict[str, Any], database: str) -> dict[str, Any]:
    """``template`` (the shipped datasette-metadata.json) for database ``database``: its table
    settings kept for tables this file has, the sample table's ``fts_table`` set to the index
    this file really has, and every internal table hidden."""
    document = copy.deepcopy(template)
    databases: dict[str, Any] = document.get("databases") or {}
    first: dict[str, Any] = next(iter(databases.values()), {})
    tables: dict[str, Any] = first.get("tables", {})
    existing = set(sqlite_utils.Database(conn).table_names())
    kept = {name: settings for name, settings in tables.items() if name in existing and not settings.get("hidden")}
    for name in hidden_tables(conn):
        kept[name] = {"hidden": True}
    indexes = fts_tables(conn)
    sample = kept.get("sample")
    if sample is not None:
        if "sample_fts" in indexes:
            sample["fts_table"], sample["fts_pk"] = "sample_fts", "id"
        else:  # an index of another name, or none: say nothing wrong
            sample.pop("fts_table", None)
            sample.pop("fts_pk", None)
    document["databases"] = {database: {"tables": kept}}
    return document


def library_metadata(path: Path, template: dict[str, Any]) -> dict[str, Any]:
    """:func:`datasette_metadata` of the library file at ``path``, opened read-only (nothing is
    written to it, not even a journal)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return datasette_metadata(conn, template, path.stem)
    finally:
        conn.close()
