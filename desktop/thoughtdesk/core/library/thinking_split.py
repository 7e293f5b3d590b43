"""Stored CoTs that hold a reasoning model's ``<think>`` block in their text, split into the
thinking (``generated_cot.reasoning``) and the visible text (``cot``), as a run stores them now
(issue 24, point 2): ``thoughtdesk cots split-thinking COLLECTION``.

Nothing is lost: the text as it was is kept in the CoT's ``extra`` under
:data:`ORIGINAL_KEY` (with the tags and what was odd), and ``--undo`` puts it back. Only CoTs
without a stored thinking are split; the full-text index of each changed sample is rebuilt from
its CoTs' new texts (visible text and thinking, as everywhere). Answers are not touched: re-score them from the visible text with
``thoughtdesk evaluate COLLECTION --rescore``.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.library.writer import cot_search_text
from thoughtdesk.core.thinking import DEFAULT_THINK_TAGS, estimate_reasoning_tokens, split_thinking

#: The key of a split CoT's ``extra`` that keeps the text as it was (and how it was split).
ORIGINAL_KEY = "thoughtdesk_thinking_split"


@dataclass(slots=True)
class SplitOutcome:
    """What a split (or an undo) did: CoTs looked at, changed, and the notes of odd ones."""

    collection: str
    examined: int = 0
    changed: int = 0
    unclosed: int = 0
    dry_run: bool = False
    notes: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "examined": self.examined,
            "changed": self.changed,
            "unclosed": self.unclosed,
            "dry_run": self.dry_run,
            "notes": self.notes,
        }


def _collection(lib: Library, name: str) -> int:
    collection_id = lib.collection_id(name)
    if collection_id is None:
        raise ThoughtDeskError(f"no collection named {name!r}; `thoughtdesk collections` lists them")
    return collection_id


def split_stored_thinking(
    lib: Library, collection: str, *, tags: tuple[str, str] = DEFAULT_THINK_TAGS, dry_run: bool = False
) -> SplitOutcome:
    """Split every CoT of ``collection`` whose text holds thinking in ``tags`` and that has no
    stored thinking yet; one transaction. ``dry_run``: count, change nothing."""
    collection_id = _collection(lib, collection)
    report = SplitOutcome(collection, dry_run=dry_run)
    opening, closing = tags
    rows = lib.conn.execute(
        "SELECT c.id, c.sample_pk, c.cot, c.extra FROM generated_cot c JOIN sample s ON s.id = c.sample_pk "
        "WHERE s.collection_id = ? AND c.reasoning IS NULL AND (instr(c.cot, ?) > 0 OR instr(c.cot, ?) > 0) "
        "ORDER BY c.id",
        (collection_id, opening, closing),
    ).fetchall()
    changes: list[tuple[int, int, str, str, int | None, str]] = []
    for cot_pk, sample_pk, text, extra_json in rows:
        report.examined += 1
        split = split_thinking(text, tags)
        if split.reasoning is None:
            continue
        extra = _extra(extra_json)
        extra[ORIGINAL_KEY] = {
            "original_cot": text,
            "tags": list(tags),
            "split_at": now_iso(),
            **({"note": split.note} if split.note else {}),
            **({"unclosed": True} if split.unclosed else {}),
        }
        report.changed += 1
        report.unclosed += split.unclosed
        if split.note:
            report.notes.append({"cot": cot_pk, "note": split.note})
        changes.append(
            (
                cot_pk,
                sample_pk,
                split.visible,
                split.reasoning,
                estimate_reasoning_tokens(split.reasoning),
                json.dumps(extra, ensure_ascii=False),
            )
        )
    if dry_run or not changes:
        return report
    with lib.transaction() as conn:
        conn.executemany(
            "UPDATE generated_cot SET cot = ?, reasoning = ?, reasoning_tokens = ?, extra = ? WHERE id = ?",
            [(visible, reasoning, tokens, extra, pk) for pk, _, visible, reasoning, tokens, extra in changes],
        )
        _refresh_fts(conn, {sample_pk for _, sample_pk, *_ in changes})
    return report


def undo_split(lib: Library, collection: str, *, dry_run: bool = False) -> SplitOutcome:
    """Put back the text of every CoT of ``collection`` that :func:`split_stored_thinking` split
    (its thinking and token count cleared, the kept original removed from ``extra``)."""
    collection_id = _collection(lib, collection)
    report = SplitOutcome(collection, dry_run=dry_run)
    rows = lib.conn.execute(
        "SELECT c.id, c.sample_pk, c.extra FROM generated_cot c JOIN sample s ON s.id = c.sample_pk "
        "WHERE s.collection_id = ? AND instr(c.extra, ?) > 0 ORDER BY c.id",
        (collection_id, ORIGINAL_KEY),
    ).fetchall()
    changes: list[tuple[str, str, int]] = []
    samples: set[int] = set()
    for cot_pk, sample_pk, extra_json in rows:
        report.examined += 1
        extra = _extra(extra_json)
        kept = extra.pop(ORIGINAL_KEY, None)
        if not isinstance(kept, dict) or not isinstance(kept.get("original_cot"), str):
            continue
        report.changed += 1
        samples.add(sample_pk)
        changes.append((kept["original_cot"], json.dumps(extra, ensure_ascii=False), cot_pk))
    if dry_run or not changes:
        return report
    with lib.transaction() as conn:
        conn.executemany(
            "UPDATE generated_cot SET cot = ?, reasoning = NULL, reasoning_tokens = NULL, extra = ? WHERE id = ?",
            changes,
        )
        _refresh_fts(conn, samples)
    return report


def _extra(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        value = {}
    return value if isinstance(value, dict) else {"extra_as_stored": text}


def _refresh_fts(conn: sqlite3.Connection, samples: set[int]) -> None:
    """The search index's generated text of ``samples`` rebuilt from their CoTs (as the writer
    builds it: each CoT's visible text and thinking, in order; writer.cot_search_text)."""
    for sample_pk in sorted(samples):
        rows = conn.execute(
            "SELECT cot, reasoning FROM generated_cot WHERE sample_pk = ? ORDER BY position, id", (sample_pk,)
        ).fetchall()
        texts = [cot_search_text(cot, reasoning) for cot, reasoning in rows]
        conn.execute(
            "UPDATE sample_fts SET generated = ? WHERE rowid = ?", ("\n".join(t for t in texts if t), sample_pk)
        )
