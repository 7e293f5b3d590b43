"""The sample table's sort indexes (created by migration m012), off during a large import.

Each sortable column of the sample table (``queries.SORT_KEYS``) has an index led by the
collection, so a sorted first page reads a page. An import keeps them up to date row by row,
and for the question and gold answer (random order, longer keys) that costs a quarter of a
large import's time; building them afresh afterwards sorts once and costs a fraction of that.
So an import of many samples into a library holding fewer drops them first and builds them
again at the end (:func:`deferred`, used by the importer); ``Library.open`` builds any that a
killed import left missing.
"""

from __future__ import annotations

import sqlite3

#: (name, definition) of each index, exactly as migration m012 created it.
SORT_INDEXES: tuple[tuple[str, str], ...] = (
    ("sample_sort_id", "sample(collection_id, sample_id)"),
    ("sample_sort_question", "sample(collection_id, substr(question, 1, 100) COLLATE NOCASE)"),
    ("sample_sort_type", "sample(collection_id, type)"),
    ("sample_sort_gold", "sample(collection_id, substr(answer, 1, 100) COLLATE NOCASE)"),
    ("sample_sort_cots", "sample(collection_id, n_cots)"),
    (
        "sample_sort_correct",
        "sample(collection_id, (CASE WHEN n_answers = 0 THEN -1.0 ELSE 1.0 * n_correct / n_answers END))",
    ),
    ("sample_sort_annotated", "sample(collection_id, n_annotations)"),
)

#: An import of at least this many samples, and at least as many as the library holds, builds
#: the indexes afresh at its end instead of updating them row by row.
DEFER_AT = 20_000


def missing(conn: sqlite3.Connection) -> list[str]:
    """The names of the sort indexes the file does not have."""
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    return [name for name, _ in SORT_INDEXES if name not in present]


def create(conn: sqlite3.Connection) -> None:
    """Build the sort indexes that are missing (inside the caller's transaction)."""
    for name, definition in SORT_INDEXES:
        conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {definition}")


def drop(conn: sqlite3.Connection) -> None:
    """Drop the sort indexes (inside the caller's transaction); the sample table still sorts
    correctly without them, by reading and sorting the collection."""
    for name, _ in SORT_INDEXES:
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def worth_deferring(conn: sqlite3.Connection, incoming: int | None) -> bool:
    """Whether an import of ``incoming`` samples should build the indexes afresh at its end."""
    if incoming is None or incoming < DEFER_AT:
        return False
    # Building the indexes reads every sample of the library; updating them costs about three
    # times as much per imported sample: afresh wins once the import is a third of the total.
    row = conn.execute("SELECT max(id) FROM sample").fetchone()
    return 2 * incoming >= (row[0] or 0)
