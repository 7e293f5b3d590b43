"""Mined rationales in the library (migration m009_rationales): documents to rewrite, rewrites
with their records, filtering scores; written one document or rationale per transaction, so an
interrupted extraction or filter pass keeps what it finished and resumes after it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import sqlite_utils

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.store import Library, inserted_id
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.rationales.extraction import Markers, RationaleError, Rewrite, split_records
from thoughtdesk.core.rationales.filtering import LossReduction

SourceKind = Literal["reference", "generated", "file"]
#: A score's identity: the table's unique index rationale_score_identity (migration m009).
SCORE_IDENTITY = ("rationale_id", "scorer", "decay")


@dataclass(frozen=True, slots=True)
class Document:
    """A text to mine: where it comes from (``doc_key`` names it uniquely) and its text."""

    doc_key: str
    source: SourceKind
    text: str
    sample_pk: int | None = None
    cot_pk: int | None = None


@dataclass(frozen=True, slots=True)
class StoredRationale:
    """A rationale record as stored, with its filtering result for one scorer (None: not yet)."""

    id: int
    doc_id: int
    doc_key: str
    preceding: str
    rationale: str
    following: str
    score: LossReduction | None = None


def documents(lib: Library, collection: str, source: str) -> list[Document]:
    """The documents of ``collection`` to mine: ``reference`` (each sample's reference CoT, its
    steps joined by spaces), ``generated`` (each generated CoT), or a FILE (.txt: documents
    separated by blank lines; .jsonl: one object with a ``text`` field per line)."""
    collection_id = lib.require_collection(collection)
    if source == "reference":
        rows = lib.conn.execute(
            "SELECT id, dataset, split, sample_id, cot FROM sample WHERE collection_id = ? "
            "ORDER BY dataset, split, position",
            (collection_id,),
        ).fetchall()
        found = []
        for pk, dataset, split, sample_id, cot in rows:
            steps = json.loads(cot) if cot else []
            text = " ".join(str(step).strip() for step in steps if str(step).strip()) if isinstance(steps, list) else ""
            if text:
                found.append(Document(f"reference:{dataset}/{split}/{sample_id}", "reference", text, sample_pk=pk))
        return found
    if source == "generated":
        rows = lib.conn.execute(
            "SELECT g.id, s.id, s.dataset, s.split, s.sample_id, g.position, g.cot FROM generated_cot g "
            "JOIN sample s ON s.id = g.sample_pk WHERE s.collection_id = ? "
            "ORDER BY s.dataset, s.split, s.position, g.position",
            (collection_id,),
        ).fetchall()
        return [
            Document(f"generated:{dataset}/{split}/{sample_id}/{position}", "generated", cot.strip(), pk_s, pk_g)
            for pk_g, pk_s, dataset, split, sample_id, position, cot in rows
            if cot and cot.strip()
        ]
    return file_documents(Path(source))


def file_documents(path: Path) -> list[Document]:
    """The documents of a .txt file (separated by blank lines) or a .jsonl file (``text`` fields)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RationaleError(
            f"--source {path}: no such file (use reference, generated, or a .txt or .jsonl file)"
        ) from None
    except UnicodeDecodeError as error:
        raise DataFileError(path, f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    name = path.name
    found: list[Document] = []
    if path.suffix.lower() == ".jsonl":
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataFileError(path, f"not JSON: {error.msg}", line=number, column=error.colno) from None
            text = record.get("text") if isinstance(record, dict) else None
            if not isinstance(text, str):
                raise DataFileError(
                    path, "a record needs a string field 'text'", line=number, hint="one JSON object per line"
                )
            if text.strip():
                found.append(Document(f"file:{name}:{number}", "file", text.strip()))
        return found
    block: list[str] = []
    start = 0
    for number, line in enumerate([*raw.splitlines(), ""], start=1):
        if line.strip():
            if not block:
                start = number
            block.append(line)
        elif block:
            found.append(Document(f"file:{name}:{start}", "file", "\n".join(block).strip()))
            block = []
    return found


def done_keys(lib: Library, collection_id: int, model: str) -> set[str]:
    """The documents ``model`` has already rewritten in this collection (skipped on resume)."""
    rows = lib.conn.execute(
        "SELECT doc_key FROM rationale_doc WHERE collection_id = ? AND model = ?", (collection_id, model)
    )
    return {row[0] for row in rows}


def add_rewrite(
    lib: Library,
    collection_id: int,
    document: Document,
    *,
    model: str,
    markers: Markers,
    fragment_key: str | None,
    prompt_text: str,
    output: str,
    rewrite: Rewrite,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> int:
    """Store one rewrite and, when valid, its records, in one transaction; return the doc's id."""
    with lib.transaction() as conn:
        doc_id = inserted_id(
            conn.execute(
                "INSERT INTO rationale_doc (collection_id, doc_key, source, sample_pk, cot_pk, model, markers, "
                "fragment_key, prompt_text, original, output, similarity, valid, prompt_tokens, completion_tokens, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    collection_id,
                    document.doc_key,
                    document.source,
                    document.sample_pk,
                    document.cot_pk,
                    model,
                    json.dumps([markers.begin, markers.end]),
                    fragment_key,
                    prompt_text,
                    document.text,
                    output,
                    rewrite.similarity,
                    int(rewrite.valid),
                    prompt_tokens,
                    completion_tokens,
                    now_iso(),
                ),
            )
        )
        if rewrite.valid:
            conn.executemany(
                "INSERT INTO rationale (doc_id, position, preceding, rationale, following) VALUES (?, ?, ?, ?, ?)",
                [
                    (doc_id, position, record.preceding, record.rationale, record.following)
                    for position, record in enumerate(split_records(rewrite))
                ],
            )
    return doc_id


def rationales(
    lib: Library, collection: str, *, scorer: str | None = None, decay: float | None = None
) -> Iterator[StoredRationale]:
    """The collection's rationale records in document order, each with its score by ``scorer``
    at ``decay`` (None when not scored, or when no scorer is named)."""
    collection_id = lib.require_collection(collection)
    rows = lib.conn.execute(
        "SELECT r.id, r.doc_id, d.doc_key, r.preceding, r.rationale, r.following, "
        "s.loss_without, s.loss_with, s.tokens_without, s.tokens_with "
        "FROM rationale r JOIN rationale_doc d ON d.id = r.doc_id "
        "LEFT JOIN rationale_score s ON s.rationale_id = r.id AND s.scorer = ? AND s.decay = ? "
        "WHERE d.collection_id = ? ORDER BY d.id, r.position",
        (scorer or "", decay if decay is not None else -1.0, collection_id),
    )
    for rid, doc_id, key, preceding, rationale, following, without, with_, n_without, n_with in rows:
        score = None if without is None else LossReduction(without, with_, n_without, n_with)
        yield StoredRationale(rid, doc_id, key, preceding, rationale, following, score)


def add_score(lib: Library, rationale_id: int, *, scorer: str, decay: float, result: LossReduction) -> None:
    """Store one rationale's filtering result, updating in place an earlier one by the same scorer
    and decay (the table's identity): sqlite-utils' upsert, in the library's transaction (a
    non-hot path: one row per scored rationale, after seconds of model scoring)."""
    with lib.transaction() as conn:
        table = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)["rationale_score"]
        table.upsert(  # type: ignore[union-attr]  # a table, not a view: the migration made it
            {
                "rationale_id": rationale_id,
                "scorer": scorer,
                "decay": decay,
                "loss_without": result.loss_without,
                "loss_with": result.loss_with,
                "reduction": result.reduction,
                "tokens_without": result.tokens_without,
                "tokens_with": result.tokens_with,
                "created": now_iso(),
            },
            pk=SCORE_IDENTITY,
        )


def scorers(lib: Library, collection: str) -> list[tuple[str, float, int]]:
    """The (scorer, decay, rationales scored) combinations stored for ``collection``."""
    collection_id = lib.require_collection(collection)
    rows = lib.conn.execute(
        "SELECT s.scorer, s.decay, count(*) FROM rationale_score s JOIN rationale r ON r.id = s.rationale_id "
        "JOIN rationale_doc d ON d.id = r.doc_id WHERE d.collection_id = ? GROUP BY s.scorer, s.decay "
        "ORDER BY s.scorer, s.decay",
        (collection_id,),
    )
    return [(scorer, float(decay), int(count)) for scorer, decay, count in rows]


@dataclass(frozen=True, slots=True)
class ExtractionCounts:
    """Documents rewritten, valid rewrites and rationale records of a collection (Table 1's first columns)."""

    documents: int
    valid: int
    rationales: int


def extraction_counts(lib: Library, collection: str) -> ExtractionCounts:
    collection_id = lib.require_collection(collection)
    documents_, valid = lib.conn.execute(
        "SELECT count(*), coalesce(sum(valid), 0) FROM rationale_doc WHERE collection_id = ?", (collection_id,)
    ).fetchone()
    (records,) = lib.conn.execute(
        "SELECT count(*) FROM rationale r JOIN rationale_doc d ON d.id = r.doc_id WHERE d.collection_id = ?",
        (collection_id,),
    ).fetchone()
    return ExtractionCounts(int(documents_), int(valid), int(records))
