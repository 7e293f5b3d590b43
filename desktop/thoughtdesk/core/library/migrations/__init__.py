"""Forward-only schema migrations of the library file.

Each migration is a small named function, applied once, in order, and recorded in the
``_migrations`` table (the way Simon Willison's ``llm`` does it). ``PRAGMA user_version`` mirrors
the number applied so that a newer file can be recognised and refused before anything is written.
Never edit a migration that has shipped: add a new one.

The functions live by era (``early``: m001-m009, ``later``: m010 on); ``MIGRATIONS`` below is the
one ordered list of them, the order they are applied in. A new migration is a function at the end
of ``later.py`` and one line at the end of this list.
"""

from __future__ import annotations

import sqlite3

from thoughtdesk.core.library.migrations import early, later, runner
from thoughtdesk.core.library.migrations.runner import Migration

MIGRATIONS: list[tuple[str, Migration]] = [
    (fn.__name__, fn)
    for fn in (
        early.m001_initial,
        early.m002_answer_scoring,
        early.m003_runs,
        early.m004_review,
        early.m005_answer_original_scoring,
        early.m006_browse_indexes,
        early.m007_critiques,
        early.m008_run_lease,
        early.m009_rationales,
        later.m010_trajectories,
        later.m011_batches,
        later.m012_sort_indexes,
        later.m013_foreign_key_indexes,
        later.m014_compact_critiques,
        later.m015_request_claim,
        later.m016_reasoning,
        later.m017_steps,
        later.m018_judge_verdicts,
        later.m019_preferences,
        later.m020_rationale_runs,
    )
]


def current_version() -> int:
    """The schema version this build of ThoughtDesk writes."""
    return len(MIGRATIONS)


def pending_migrations(conn: sqlite3.Connection) -> list[str]:
    """The names of the migrations a library lacks (read only: nothing is written)."""
    return runner.pending(conn, MIGRATIONS)


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations the file lacks, each in its own transaction; return their names."""
    return runner.apply(conn, MIGRATIONS)
