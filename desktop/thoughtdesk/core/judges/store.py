"""Judge verdicts in the library (table ``judge_verdict``, migration m018): written in the
caller's transaction, read back for the figures, the exports and the comparison with humans."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from thoughtdesk.core.judges.parse import Verdict
from thoughtdesk.core.library.store import inserted_id
from thoughtdesk.core.library.timestamps import now_iso


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """One single verdict: ``judge_model`` with template ``template`` (version
    ``template_version``) shown CoT ``first_cot_pk`` as A and ``second_cot_pk`` as B.
    ``preferred_cot_pk`` is the CoT chosen (None for a tie or unparseable)."""

    sample_pk: int
    first_cot_pk: int
    second_cot_pk: int
    judge_model: str
    template: str
    template_version: str
    verdict: Verdict
    raw_text: str
    reason: str = ""
    run_id: int | None = None
    request_id: int | None = None
    created: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    pk: int | None = None

    @property
    def preferred_cot_pk(self) -> int | None:
        if self.verdict == "A":
            return self.first_cot_pk
        if self.verdict == "B":
            return self.second_cot_pk
        return None


def add_verdict(conn: sqlite3.Connection, verdict: JudgeVerdict) -> int:
    """Insert ``verdict`` (inside the caller's transaction); return its key."""
    return inserted_id(
        conn.execute(
            "INSERT INTO judge_verdict (sample_pk, first_cot_pk, second_cot_pk, judge_model, template, "
            "template_version, verdict, preferred_cot_pk, reason, raw_text, run_id, request_id, created, extra) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                verdict.sample_pk,
                verdict.first_cot_pk,
                verdict.second_cot_pk,
                verdict.judge_model,
                verdict.template,
                verdict.template_version,
                verdict.verdict,
                verdict.preferred_cot_pk,
                verdict.reason or None,
                verdict.raw_text,
                verdict.run_id,
                verdict.request_id,
                verdict.created or now_iso(),
                json.dumps(verdict.extra, ensure_ascii=False) if verdict.extra else None,
            ),
        )
    )


_SELECT = (
    "SELECT id, sample_pk, first_cot_pk, second_cot_pk, judge_model, template, template_version, verdict, "
    "raw_text, coalesce(reason, ''), run_id, request_id, created, extra FROM judge_verdict"
)


def _verdict(row: tuple[Any, ...]) -> JudgeVerdict:
    return JudgeVerdict(
        sample_pk=row[1],
        first_cot_pk=row[2],
        second_cot_pk=row[3],
        judge_model=row[4],
        template=row[5],
        template_version=row[6],
        verdict=row[7],
        raw_text=row[8],
        reason=row[9],
        run_id=row[10],
        request_id=row[11],
        created=row[12],
        extra=json.loads(row[13]) if row[13] else {},
        pk=row[0],
    )


def verdict_by_pk(conn: sqlite3.Connection, pk: int) -> JudgeVerdict | None:
    row = conn.execute(_SELECT + " WHERE id = ?", (pk,)).fetchone()
    return None if row is None else _verdict(row)


def verdicts_of_run(conn: sqlite3.Connection, run_id: int) -> list[JudgeVerdict]:
    """The verdicts a run stored, in request order."""
    return [_verdict(row) for row in conn.execute(_SELECT + " WHERE run_id = ? ORDER BY request_id, id", (run_id,))]


class VerdictRow(NamedTuple):
    """What the figures need of a verdict (no raw text). A named tuple: 100,000 of them are
    read for the figures, and a tuple costs a third of a dataclass."""

    pk: int
    sample_pk: int
    first_cot_pk: int
    second_cot_pk: int
    judge_model: str
    template: str
    template_version: str
    verdict: Verdict
    created: str


def collection_verdicts(conn: sqlite3.Connection, collection_id: int, *, latest_only: bool = True) -> list[VerdictRow]:
    """Every judge's latest verdict per ordered pair of a collection's CoTs (a pair judged again,
    e.g. with ``--force``, counts once: its newest verdict); ``latest_only=False``: every
    verdict, oldest first (for a caller that keeps the last one itself)."""
    rows = conn.execute(
        "SELECT v.id, v.sample_pk, v.first_cot_pk, v.second_cot_pk, v.judge_model, v.template, "
        "v.template_version, v.verdict, v.created FROM judge_verdict v JOIN sample s ON s.id = v.sample_pk "
        "WHERE s.collection_id = ? ORDER BY v.id",
        (collection_id,),
    ).fetchall()
    if not latest_only:
        return rows
    latest: dict[tuple[str, str, int, int], Any] = {}
    for row in rows:
        latest[(row[4], row[6], row[2], row[3])] = row
    # Plain rows (a VerdictRow is a tuple of these fields in this order): making 100,000 named
    # tuples took a third of the figures' time. Read them by name with VerdictRow._make.
    return list(latest.values()) if len(latest) < len(rows) else rows
