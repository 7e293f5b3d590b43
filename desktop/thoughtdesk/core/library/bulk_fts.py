"""The full-text index's write settings during a large import (issue 17, point 7).

FTS5 gathers the terms of a transaction's new rows in memory and writes them out as a segment
whenever that buffer (its ``hashsize``, 1 MiB by default) fills, and at each commit; later writes
merge segments ``automerge`` (4 by default) at a time, level by level. A staged import writes in
2-second transactions, so at the defaults a 1,000,000-sample import wrote thousands of small
segments and merged them again and again: 56 s of its 197 s. With the whole of a transaction's
terms in one segment and 16 segments merged at a time, the same index took 26-39 s (measured
with tests/benchmarks/bench_library.py; figures in docs/design.md). The merges stay incremental
(:data:`BULK_CRISISMERGE`), so no transaction of the import does a level's merge at once.

The settings are stored in the index itself (``sample_fts_config``), so they hold for every
connection: a large import sets them at its start (:func:`set_bulk`) and sets the defaults again
at its end (:func:`set_default`); ``Library.open`` sets the defaults should a killed import have
left them. They change how the index is written, never what a search finds.
"""

from __future__ import annotations

import sqlite3

#: Bytes of terms the index gathers in memory before writing a segment: the terms of one
#: 2-second transaction of an import (about 15,000 samples) fit.
BULK_HASHSIZE = 32 * 1024 * 1024
#: Segments merged at a time during a large import: fewer, larger merges.
BULK_AUTOMERGE = 16
#: Segments a level may hold before FTS5 merges them all at once, in the transaction that wrote
#: the last one. Its default (16) equals BULK_AUTOMERGE: every merge of a level would then be
#: done at once, and at a million samples one such merge wrote ~400 MB inside one transaction,
#: holding the lock far beyond the import's 2-second transactions. Above it, FTS5 merges
#: incrementally, each transaction doing merge work in proportion to what it wrote.
BULK_CRISISMERGE = 64
#: FTS5's own defaults, what the index is written with at every other time.
DEFAULT_HASHSIZE = 1024 * 1024
DEFAULT_AUTOMERGE = 4
DEFAULT_CRISISMERGE = 16


def _configure(conn: sqlite3.Connection, hashsize: int, automerge: int, crisismerge: int) -> None:
    # FTS5's documented way to change an option: an INSERT naming it (stored in sample_fts_config).
    conn.execute("INSERT INTO sample_fts (sample_fts, rank) VALUES ('hashsize', ?)", (hashsize,))
    conn.execute("INSERT INTO sample_fts (sample_fts, rank) VALUES ('automerge', ?)", (automerge,))
    conn.execute("INSERT INTO sample_fts (sample_fts, rank) VALUES ('crisismerge', ?)", (crisismerge,))


def set_bulk(conn: sqlite3.Connection) -> None:
    """Write the index with large segments, merged 16 at a time, incrementally (inside the
    caller's transaction)."""
    _configure(conn, BULK_HASHSIZE, BULK_AUTOMERGE, BULK_CRISISMERGE)


def set_default(conn: sqlite3.Connection) -> None:
    """Write the index with FTS5's default settings again (inside the caller's transaction)."""
    _configure(conn, DEFAULT_HASHSIZE, DEFAULT_AUTOMERGE, DEFAULT_CRISISMERGE)


def is_bulk(conn: sqlite3.Connection) -> bool:
    """Whether the index is set as for a large import (one is under way, or was killed)."""
    rows = dict(
        conn.execute(
            "SELECT k, v FROM sample_fts_config WHERE k IN ('hashsize', 'automerge', 'crisismerge')"
        ).fetchall()
    )
    return (
        rows.get("hashsize", DEFAULT_HASHSIZE) != DEFAULT_HASHSIZE
        or rows.get("automerge", DEFAULT_AUTOMERGE) != DEFAULT_AUTOMERGE
        or rows.get("crisismerge", DEFAULT_CRISISMERGE) != DEFAULT_CRISISMERGE
    )
