"""Bulk writing of samples into a library, fast and all-or-nothing.

The caller opens a transaction (:meth:`Library.transaction`); :class:`SampleWriter` assigns the
primary keys itself and sends rows in batches with ``executemany``, which is what makes a
200,000-sample import take seconds rather than minutes.

The writer fills a hidden staging collection and checks duplicates against the collection the
import goes into (its *target*: the staging collection itself for a new collection). It never
changes the target: a sample it replaces is only listed (:attr:`SampleWriter.replaced_pks`), and
the importer's last transaction deletes those and moves the staged samples into the target
(:meth:`Library.merge_staged`), so a merge is seen all at once or not at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from operator import itemgetter
from typing import Any

import msgspec

from thoughtdesk.core.errors import DataFileError, DuplicateSamplesError
from thoughtdesk.core.library.records import GeneratedCot, Sample, model_name, thoughtsource_unextractable
from thoughtdesk.core.library.store import Library

BATCH = 2000


_SAMPLE_COLUMNS = (
    "id collection_id dataset split position sample_id ref_id question type choices context cot "
    "answer feedback extra missing n_cots n_answers n_correct n_incorrect n_unextractable n_annotations"
)
_COT_COLUMNS = (
    "id sample_pk position cot_id fragments_version instruction cot_trigger cot_trigger_template "
    "prompt_text cot author date api_service model model_name comment extra missing "
    "reasoning finish_reason reasoning_tokens"
)
_ANSWER_COLUMNS = (
    "id cot_pk position answer_id answer_extraction answer_extraction_template "
    "answer_extraction_text answer correct_answer extra missing td_outcome td_value td_method td_reason "
    "td_span_source td_span_start td_span_end original_scoring"
)
_ANNOTATION_COLUMNS = "id cot_pk position author date key value value_is_json extra missing"


def insert_rows(conn: sqlite3.Connection, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
    """``executemany`` of ``INSERT INTO table (columns)`` with ``rows``, where a column that is
    None in every row is written as a literal NULL instead of bound (the same row stored).

    Why: Python 3.11's sqlite3 sends every bound None through its adapter lookup, which raises
    and clears an AttributeError: about half a microsecond each, five times a bound text. An
    import's rows are mostly empty columns (an answer's ten scoring and extra columns, a
    critique's run and prompt columns): a 10,000-record DSCB import bound 250,000 Nones."""
    if not rows:
        return
    first = rows[0]
    empty = {
        i
        for i, value in enumerate(first)
        if value is None and (len(rows) == 1 or list(map(itemgetter(i), rows)).count(None) == len(rows))
    }
    keep = [i for i in range(len(columns)) if i not in empty]
    marks = ", ".join("NULL" if i in empty else "?" for i in range(len(columns)))
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
    if not empty:
        conn.executemany(sql, rows)
    elif len(keep) == 1:
        conn.executemany(sql, [(row[keep[0]],) for row in rows])
    elif keep:
        conn.executemany(sql, map(itemgetter(*keep), rows))
    else:
        conn.executemany(sql, [()] * len(rows))


class OnDuplicate(StrEnum):
    """What an import does with a sample whose (dataset, split, id) is already stored."""

    FAIL = "fail"
    SKIP = "skip"
    REPLACE = "replace"


@dataclass
class WriteResult:
    """What an import did, in samples."""

    inserted: int = 0
    replaced: int = 0
    skipped: int = 0


_encode = msgspec.json.encode


def _json(value: Any) -> str:
    return _encode(value).decode("utf-8")


def _opt_json(value: dict | tuple) -> str | None:
    return _json(list(value) if isinstance(value, tuple) else value) if value else None


#: Characters of one text (a question, a CoT) the full-text index holds: search finds words in the
#: first 100,000 characters. The index stores what it indexes, so a 20 MB model answer indexed
#: whole would be stored twice more (content and terms) beside the CoT itself (issue 15, point 6).
FTS_CHARS = 100_000


def fts_prefix(text: str) -> str:
    """The part of ``text`` the full-text index holds (its first :data:`FTS_CHARS` characters)."""
    return text if len(text) <= FTS_CHARS else text[:FTS_CHARS]


def cot_search_text(cot: str | None, reasoning: str | None) -> str:
    """What the full-text index holds of one generated CoT: its visible text and, after it, a
    reasoning model's thinking (each its first :data:`FTS_CHARS` characters), so a search finds
    words the model only thought (issue 24, point 6)."""
    visible = fts_prefix(cot) if cot else ""
    if not reasoning:
        return visible
    return f"{visible}\n{fts_prefix(reasoning)}" if visible else fts_prefix(reasoning)


#: SQL: :func:`cot_search_text` of the generated CoT whose id is the one parameter.
COT_SEARCH_SQL = (
    f"SELECT CASE WHEN coalesce(reasoning, '') = '' THEN substr(coalesce(cot, ''), 1, {FTS_CHARS}) "
    f"WHEN coalesce(cot, '') = '' THEN substr(reasoning, 1, {FTS_CHARS}) "
    f"ELSE substr(cot, 1, {FTS_CHARS}) || char(10) || substr(reasoning, 1, {FTS_CHARS}) END FROM generated_cot WHERE id = ?"
)


def cot_fts_text(cots: list[GeneratedCot]) -> str:
    return "\n".join(text for text in (cot_search_text(c.cot, c.reasoning) for c in cots) if text)


def reference_fts_text(steps: list[Any]) -> str:
    return fts_prefix("\n".join(s for s in steps if isinstance(s, str)))


class SampleWriter:
    """Writes samples into collection ``collection_id``, as if into ``target`` (default: the same):
    duplicates are looked for, and positions continue, in ``target``. Use inside
    ``library.transaction()``, then :meth:`close`."""

    def __init__(
        self, library: Library, collection_id: int, on_duplicate: OnDuplicate, *, target: int | None = None
    ) -> None:
        self.library = library
        self.conn = library.conn
        self.collection_id = collection_id
        self.target = collection_id if target is None else target
        self.on_duplicate = OnDuplicate(on_duplicate)
        self.result = WriteResult()
        self.duplicates: list[str] = []
        #: Keys of the target's samples that the written ones replace: whoever publishes the
        #: written samples deletes these in the same transaction.
        self.replaced_pks: list[int] = []
        self._seen: set[tuple[str, str, str]] = set()
        self._positions: dict[tuple[str, str], int] = {}
        #: Per (dataset, split) the target's last position when the writer first met the split:
        #: new samples come after it (replacing ones take the replaced one's position).
        self.last_positions: dict[tuple[str, str], int] = {}
        self._existing = bool(
            self.conn.execute("SELECT 1 FROM sample WHERE collection_id = ? LIMIT 1", (self.target,)).fetchone()
        )
        self._next_sample = self._next_id("sample")
        self._next_cot = self._next_id("generated_cot")
        self._next_answer = self._next_id("answer")
        self._next_annotation = self._next_id("annotation")
        self._samples: list[tuple] = []
        self._cots: list[tuple] = []
        self._answers: list[tuple] = []
        self._annotations: list[tuple] = []
        self._fts: list[tuple] = []

    @property
    def next_cot_pk(self) -> int:
        """The primary key the next queued generated CoT gets: a sample's CoTs get consecutive keys
        in their order, so an importer that stores rows referring to them (critiques) knows them."""
        return self._next_cot

    def resync(self) -> None:
        """Continue above keys other processes took since the last commit (a staged import
        commits in chunks; this writer chooses its own primary keys)."""
        self._next_sample = max(self._next_sample, self._next_id("sample"))
        self._next_cot = max(self._next_cot, self._next_id("generated_cot"))
        self._next_answer = max(self._next_answer, self._next_id("answer"))
        self._next_annotation = max(self._next_annotation, self._next_id("annotation"))

    def _next_id(self, table: str) -> int:
        return (self.conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0) + 1

    def _init_position(self, dataset: str, split: str) -> None:
        key = (dataset, split)
        if key not in self._positions:
            row = self.conn.execute(
                "SELECT max(position) FROM sample WHERE collection_id = ? AND dataset = ? AND split = ?",
                (self.target, dataset, split),
            ).fetchone()
            self._positions[key] = self.last_positions[key] = -1 if row[0] is None else row[0]

    def _position(self, dataset: str, split: str) -> int:
        self._init_position(dataset, split)
        self._positions[(dataset, split)] += 1
        return self._positions[(dataset, split)]

    def add(self, dataset: str, split: str, sample: Sample, *, where: str = "", path=None) -> None:
        """Queue one sample. ``where``/``path`` name it in errors (e.g. a duplicate id)."""
        key = (dataset, split, sample.id)
        if key in self._seen:
            raise DataFileError(path, f"sample id {sample.id!r} occurs twice in {dataset}/{split}", where=where)
        self._seen.add(key)
        position = None
        if self._existing:
            self._init_position(dataset, split)
            row = self.conn.execute(
                "SELECT id, position FROM sample WHERE collection_id = ? AND dataset = ? "
                "AND split = ? AND sample_id = ?",
                (self.target, dataset, split, sample.id),
            ).fetchone()
            if row is not None:
                if self.on_duplicate is OnDuplicate.FAIL:
                    self.duplicates.append(f"{dataset}/{split}/{sample.id}")
                    return
                if self.on_duplicate is OnDuplicate.SKIP:
                    self.result.skipped += 1
                    return
                self.replaced_pks.append(row[0])
                position = row[1]
                self.result.replaced += 1
        if self.duplicates:
            return  # failing anyway: keep counting duplicates, write nothing more
        if position is None:
            position = self._position(dataset, split)
            self.result.inserted += 1
        self._queue(dataset, split, position, sample)
        if len(self._samples) >= BATCH:
            self.flush()

    def _queue(self, dataset: str, split: str, position: int, s: Sample) -> None:
        pk = self._next_sample
        self._next_sample += 1
        # The sample counters, counted here while walking the records rather than by
        # core.library.counters (one UPDATE per sample would cost import speed); same rules.
        n_answers = n_correct = n_incorrect = n_unextractable = n_annotations = 0
        for cot_position, cot in enumerate(s.generated_cot):
            cot_pk = self._next_cot
            self._next_cot += 1
            self._cots.append(
                (
                    cot_pk,
                    pk,
                    cot_position,
                    cot.id,
                    cot.fragments_version,
                    cot.instruction,
                    cot.cot_trigger,
                    cot.cot_trigger_template,
                    cot.prompt_text,
                    cot.cot,
                    cot.author,
                    cot.date,
                    cot.api_service,
                    cot.model,
                    model_name(cot.model),
                    cot.comment,
                    _opt_json(cot.extra),
                    _opt_json(cot.missing),
                    cot.reasoning,
                    cot.finish_reason,
                    cot.reasoning_tokens,
                )
            )
            for a_position, a in enumerate(cot.answers):
                scoring = a.scoring
                span = (scoring.span if scoring is not None else None) or (None, None, None)
                self._answers.append(
                    (
                        self._next_answer,
                        cot_pk,
                        a_position,
                        a.id,
                        a.answer_extraction,
                        a.answer_extraction_template,
                        a.answer_extraction_text,
                        a.answer,
                        None if a.correct_answer is None else int(a.correct_answer),
                        _opt_json(a.extra),
                        _opt_json(a.missing),
                        None if scoring is None else scoring.outcome,
                        None if scoring is None else scoring.value,
                        None if scoring is None else scoring.method,
                        None if scoring is None else scoring.reason,
                        *span,
                        None if scoring is None or scoring.original is None else _json(scoring.original),
                    )
                )
                self._next_answer += 1
                n_answers += 1
                if a.correct_answer is True:
                    n_correct += 1
                elif a.correct_answer is False:
                    n_incorrect += 1
                elif scoring is not None and scoring.outcome == "unextractable" or thoughtsource_unextractable(a):
                    n_unextractable += 1
            for n_position, n in enumerate(cot.annotations):
                is_json = not isinstance(n.value, str)
                self._annotations.append(
                    (
                        self._next_annotation,
                        cot_pk,
                        n_position,
                        n.author,
                        n.date,
                        n.key,
                        _json(n.value) if is_json else n.value,
                        int(is_json),
                        _opt_json(n.extra),
                        _opt_json(n.missing),
                    )
                )
                self._next_annotation += 1
                n_annotations += 1
        self._samples.append(
            (
                pk,
                self.collection_id,
                dataset,
                split,
                position,
                s.id,
                s.ref_id,
                s.question,
                s.type,
                _json(s.choices),
                s.context,
                _json(s.cot),
                _json(s.answer),
                _json(s.feedback),
                _opt_json(s.extra),
                _opt_json(s.missing),
                len(s.generated_cot),
                n_answers,
                n_correct,
                n_incorrect,
                n_unextractable,
                n_annotations,
            )
        )
        cot_list = s.cot if isinstance(s.cot, list) else []
        self._fts.append(
            (pk, fts_prefix(s.question or ""), reference_fts_text(cot_list), cot_fts_text(s.generated_cot))
        )

    def flush(self) -> None:
        c = self.conn
        insert_rows(c, "sample", _SAMPLE_COLUMNS.split(), self._samples)
        insert_rows(c, "generated_cot", _COT_COLUMNS.split(), self._cots)
        insert_rows(c, "answer", _ANSWER_COLUMNS.split(), self._answers)
        insert_rows(c, "annotation", _ANNOTATION_COLUMNS.split(), self._annotations)
        if self._fts:
            c.executemany(
                "INSERT INTO sample_fts (rowid, question, reference, generated) VALUES (?, ?, ?, ?)",
                self._fts,
            )
        for buffer in (self._samples, self._cots, self._answers, self._annotations, self._fts):
            buffer.clear()

    def close(self, collection_name: str) -> WriteResult:
        """Flush the rest; raise :class:`DuplicateSamplesError` if duplicates were refused."""
        if self.duplicates:
            raise DuplicateSamplesError(collection_name, len(self.duplicates), self.duplicates[0])
        self.flush()
        return self.result
