"""Queries behind the sample table: filters, full-text search, sorting, row pages.

The table model first asks for the first keys in display order (:func:`first_sample_keys`, a
LIMITed query that an index answers without reading the whole collection), then for the whole
ordered list of matching keys in a worker (:func:`sample_keys`, a few hundred milliseconds for a
million samples), and fetches display rows a page at a time by key, so scrolling anywhere costs
one small indexed query.
"""

from __future__ import annotations

import json
import re
import sqlite3
from array import array
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

from thoughtdesk.core.library.records import CollectionInfo, SplitStats
from thoughtdesk.core.library.store import Library


class Correctness(StrEnum):
    ANY = "any"
    HAS_CORRECT = "correct"
    HAS_INCORRECT = "incorrect"
    UNSCORED = "unscored"


@dataclass(frozen=True)
class SampleFilter:
    """Which samples the table shows. ``None`` means no restriction."""

    collection_id: int | None = None
    dataset: str | None = None
    split: str | None = None
    search: str = ""
    answer_type: str | None = None
    has_cots: bool | None = None
    correctness: Correctness = Correctness.ANY
    annotated: bool | None = None


@dataclass(frozen=True)
class SampleRow:
    """One line of the sample table."""

    pk: int
    sample_id: str
    question: str
    type: str
    gold: str
    n_cots: int
    n_answers: int
    n_correct: int
    n_annotations: int
    dataset: str
    split: str

    @property
    def share_correct(self) -> float | None:
        """Correct answers over answers with a stored verdict; None when there are none."""
        return self.n_correct / self.n_answers if self.n_answers else None


#: Characters of the question and of the gold answer the table sorts by (ties then keep the
#: collection's order): the sort indexes hold these prefixes, not whole texts.
SORT_PREFIX_CHARS = 100

#: Sortable columns of the table, by name, as SQL expressions. Each one (after
#: ``s.collection_id = ?``) is exactly the expression of an index of migration m012, so the
#: first page in any order is read from an index: keep the two identical.
SORT_KEYS = {
    "id": "s.sample_id",
    "question": f"substr(s.question, 1, {SORT_PREFIX_CHARS}) COLLATE NOCASE",
    "type": "s.type",
    "gold": f"substr(s.answer, 1, {SORT_PREFIX_CHARS}) COLLATE NOCASE",
    "cots": "s.n_cots",
    "correct": "CASE WHEN s.n_answers = 0 THEN -1.0 ELSE 1.0 * s.n_correct / s.n_answers END",
    "annotated": "s.n_annotations",
    "position": "s.id",
}

_TOKEN = re.compile(r"\w[\w'\-]*", re.UNICODE)


def fts_query(text: str) -> str:
    """An FTS5 query for what a person typed: every word must occur; the last one may be a prefix.

    Quotes and operators in the input are treated as text, so any input is a valid query.
    """
    words = _TOKEN.findall(text)
    if not words:
        return ""
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    quoted[-1] += "*"
    return " AND ".join(quoted)


def _where(f: SampleFilter) -> tuple[str, list[int | str]]:
    # The filters on counts and type are written ``+s.column``: SQLite then never reads a sort
    # index (migration m012) as a range for them. They rarely exclude much (most samples have
    # CoTs), and a range read would have to sort every sample it yields before the first page,
    # where walking the collection in display order stops after a page.
    clauses: list[str] = []
    params: list[int | str] = []
    if f.collection_id is not None:
        clauses.append("s.collection_id = ?")
        params.append(f.collection_id)
    if f.dataset is not None:
        clauses.append("s.dataset = ?")
        params.append(f.dataset)
    if f.split is not None:
        clauses.append("s.split = ?")
        params.append(f.split)
    if f.answer_type:
        clauses.append("+s.type = ?")
        params.append(f.answer_type)
    if f.has_cots is not None:
        clauses.append("+s.n_cots > 0" if f.has_cots else "+s.n_cots = 0")
    if f.correctness is Correctness.HAS_CORRECT:
        clauses.append("+s.n_correct > 0")
    elif f.correctness is Correctness.HAS_INCORRECT:
        clauses.append("+s.n_incorrect > 0")
    elif f.correctness is Correctness.UNSCORED:
        clauses.append("+s.n_answers = 0")
    if f.annotated is not None:
        clauses.append("+s.n_annotations > 0" if f.annotated else "+s.n_annotations = 0")
    match = fts_query(f.search)
    if match:
        clauses.append("s.id IN (SELECT rowid FROM sample_fts WHERE sample_fts MATCH ?)")
        params.append(match)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def _keys_sql(f: SampleFilter, sort: str, descending: bool) -> tuple[str, list[int | str]]:
    direction = " DESC" if descending else ""
    match = fts_query(f.search)
    if match:
        rest = replace(f, search="")
        where, params = _where(rest)
        where += (" AND " if where else " WHERE ") + "sample_fts MATCH ?"
        params.append(match)
        if sort == "position":
            # A search in key order: the full-text index yields its hits in rowid order, so
            # SQLite walks them and stops at a LIMIT, instead of collecting every hit into a
            # list first (what ``s.id IN (SELECT rowid ...)`` does). When the collection is the
            # only other condition, its covering index checks it without reading the wide rows.
            only_collection = f.collection_id is not None and replace(rest, collection_id=None) == SampleFilter()
            index = " INDEXED BY sample_collection" if only_collection else ""
            join = f"sample_fts JOIN sample s{index} ON s.id = sample_fts.rowid"
            return f"SELECT s.id FROM {join}{where} ORDER BY sample_fts.rowid{direction}", params
        # A search in another order: its hits (usually a small part of the collection) are
        # read first and sorted (CROSS JOIN keeps the full-text index the outer loop); walking
        # a sort index over the whole collection for a rare word's few hits reads every row.
        join = "sample_fts CROSS JOIN sample s ON s.id = sample_fts.rowid"
        return f"SELECT s.id FROM {join}{where} ORDER BY {SORT_KEYS[sort]}{direction}, s.id{direction}", params
    where, params = _where(f)
    # The tie-break on the key runs in the column's direction: the column's index (migration
    # m012, which ends with the rowid) then yields the whole order, read forwards or
    # backwards, with no sort step, and descending is exactly ascending reversed.
    order = f"{SORT_KEYS[sort]}{direction}, s.id{direction}"
    return f"SELECT s.id FROM sample s{where} ORDER BY {order}", params


def first_sample_keys(
    lib: Library, f: SampleFilter, sort: str = "position", descending: bool = False, limit: int = 1000
) -> array:
    """The first ``limit`` keys of :func:`sample_keys`' list, without listing the others.

    In the default order (and any order an index gives) SQLite stops after ``limit`` rows, so
    the time does not grow with the collection; a search in the default order reads its hits in
    key order and stops as soon as the page is full, instead of collecting and sorting every
    hit. Every sortable column has an index (migration m012); a search in another order than
    the default sorts its hits.
    """
    sql, params = _keys_sql(f, sort, descending)
    return array("q", (r[0] for r in lib.conn.execute(f"{sql} LIMIT ?", [*params, limit])))


#: Characters of the keys' JSON list parsed at a time (about 50,000 keys): the GIL is held
#: for a few milliseconds at a time, so the GUI thread stays responsive while a worker lists keys.
KEYS_PIECE_CHARS = 400_000


def sample_keys(
    lib: Library,
    f: SampleFilter,
    sort: str = "position",
    descending: bool = False,
    cancelled: Callable[[], bool] | None = None,
) -> array:
    """The keys of matching samples in display order (an ``array('q')``: 8 bytes a sample).

    SQLite collects the keys into one JSON list (``json_group_array`` over the ordered query,
    which keeps its order): the whole scan runs without the GIL, where fetching a million rows
    one by one held it for most of a second, stalling the GUI thread while a worker listed
    them. The list is then parsed a piece at a time. ``cancelled`` is asked during the scan
    (SQLite's progress handler) and between pieces; once it says True the keys read so far
    are returned (the caller that cancelled throws them away).
    """
    sql, params = _keys_sql(f, sort, descending)
    keys = array("q")
    if cancelled is not None:
        lib.conn.set_progress_handler(lambda: 1 if cancelled() else 0, 100_000)
    try:
        row = lib.conn.execute(f"SELECT json_group_array(id) FROM ({sql})", params).fetchone()
    except sqlite3.OperationalError:
        if cancelled is not None and cancelled():
            return keys  # interrupted by the progress handler
        raise
    finally:
        if cancelled is not None:
            lib.conn.set_progress_handler(None, 0)
    body = row[0][1:-1]  # "[1,2,3]" -> "1,2,3"
    start = 0
    while start < len(body):
        if cancelled is not None and cancelled():
            return keys
        end = body.find(",", start + KEYS_PIECE_CHARS)
        end = len(body) if end < 0 else end
        keys.extend(json.loads(f"[{body[start:end]}]"))
        start = end + 1
    return keys


#: Characters of a text column the table reads: a cell shows a line, never a 10 MB text.
CELL_CHARS = 400
#: Characters of the gold answer's JSON the table reads (a list of answers needs some room).
GOLD_JSON_CHARS = 2000


def _gold(answer_json: str | None) -> str:
    if not answer_json:
        return ""
    if len(answer_json) > GOLD_JSON_CHARS:  # cut by the query: not JSON any more, show its start
        return answer_json.lstrip('["').replace('", "', "; ")[:CELL_CHARS]
    try:
        value = json.loads(answer_json)
    except ValueError:
        return answer_json
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return str(value)


def sample_rows(lib: Library, keys: list[int]) -> dict[int, SampleRow]:
    """Display rows for ``keys`` (at most a few hundred at a time), by key.

    Text columns are read as bounded prefixes (``substr``): a sample with a 10 MB question costs
    the page no more than a short one, and no view ever measures the whole text.
    """
    if not keys:
        return {}
    marks = ",".join("?" * len(keys))
    rows = lib.conn.execute(
        f"""SELECT id, substr(sample_id, 1, {CELL_CHARS}), substr(question, 1, {CELL_CHARS}), type,
                   substr(answer, 1, {GOLD_JSON_CHARS + 1}), n_cots, n_answers,
                   n_correct, n_annotations, dataset, split
            FROM sample WHERE id IN ({marks})""",
        keys,
    ).fetchall()
    return {
        r[0]: SampleRow(
            r[0], r[1], r[2] or "", r[3] or "", _gold(r[4])[:CELL_CHARS], r[5], r[6], r[7], r[8], r[9], r[10]
        )
        for r in rows
    }


@dataclass(frozen=True)
class BrowseState:
    """What the sample browser shows: which samples, in which order (``SORT_KEYS``)."""

    filter: SampleFilter
    sort: str = "position"
    descending: bool = False


@dataclass(frozen=True)
class Browse:
    """The collection tree's counts and the sample table's keys for one :class:`BrowseState`,
    computed together (in a worker, so the GUI thread never scans a large library)."""

    state: BrowseState
    tree: list[tuple[CollectionInfo, list[SplitStats]]]
    keys: array


def sample_labels(lib: Library, pks: list[int]) -> dict[int, str]:
    """``dataset/split/sample_id`` of each sample key in ``pks`` (for tables that list samples),
    read in chunks of 500 keys (SQLite's bound-parameter limit)."""
    labels: dict[int, str] = {}
    for start in range(0, len(pks), 500):
        chunk = pks[start : start + 500]
        for pk, dataset, split, sid in lib.conn.execute(
            f"SELECT id, dataset, split, sample_id FROM sample WHERE id IN ({','.join('?' * len(chunk))})", chunk
        ):
            labels[pk] = f"{dataset}/{split}/{sid}"
    return labels


def browse(lib: Library, state: BrowseState) -> Browse:
    """Count the tree and list the keys ``state`` shows, in display order."""
    return Browse(state, lib.tree_stats(), sample_keys(lib, state.filter, state.sort, state.descending))


# Lookups for the views (the UI runs no SQL of its own) ----------------------------------------


def collection_name(lib: Library, collection_id: int) -> str | None:
    """The name of collection ``collection_id``; None when there is no such collection."""
    row = lib.conn.execute("SELECT name FROM collection WHERE id = ?", (collection_id,)).fetchone()
    return row[0] if row else None


def sample_collection_name(lib: Library, sample_pk: int) -> str | None:
    """The name of the collection holding sample ``sample_pk``; None when there is no such sample."""
    row = lib.conn.execute(
        "SELECT c.name FROM sample s JOIN collection c ON c.id = s.collection_id WHERE s.id = ?", (sample_pk,)
    ).fetchone()
    return row[0] if row else None


def sample_collection_id(lib: Library, sample_pk: int) -> int | None:
    """The collection (primary key) holding sample ``sample_pk``; None when there is no such sample."""
    row = lib.conn.execute("SELECT collection_id FROM sample WHERE id = ?", (sample_pk,)).fetchone()
    return row[0] if row else None


def collection_authors(lib: Library, collection: str) -> list[str]:
    """Everyone who annotated a CoT of ``collection`` (named authors, sorted); [] for no such collection."""
    collection_id = lib.collection_id(collection)
    if collection_id is None:
        return []
    rows = lib.conn.execute(
        "SELECT DISTINCT a.author FROM annotation a JOIN generated_cot c ON a.cot_pk = c.id "
        "JOIN sample s ON c.sample_pk = s.id WHERE s.collection_id = ? AND coalesce(a.author, '') != '' "
        "ORDER BY a.author",
        (collection_id,),
    )
    return [row[0] for row in rows]


def cot_sample(lib: Library, cot_pk: int) -> int | None:
    """The sample (primary key) generated CoT ``cot_pk`` belongs to; None when it is gone."""
    row = lib.conn.execute("SELECT sample_pk FROM generated_cot WHERE id = ?", (cot_pk,)).fetchone()
    return row[0] if row else None


def data_version(lib: Library) -> int:
    """SQLite's ``PRAGMA data_version`` of this connection: it changes when another connection
    (a run's thread, the CLI, another window) commits to the file, not on this one's own writes."""
    return int(lib.conn.execute("PRAGMA data_version").fetchone()[0])


def integrity_check(lib: Library) -> str:
    """SQLite's ``PRAGMA integrity_check``: "ok", or the first problem found."""
    return str(lib.conn.execute("PRAGMA integrity_check").fetchone()[0])
