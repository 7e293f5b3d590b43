"""Human ratings in the annotation exchange file: exported with a reviewer's annotations, merged
on import under their author's name (docs/critiques-review.md, "Exchange").

Two lists sit beside ``annotations`` in a ``thoughtdesk-annotations`` file:

* ``explanation_ratings``: a reviewer's score 0-5 and flaw dimensions of a CoT, keyed like an
  annotation (collection, dataset, split, sample id, CoT id/position, CoT text hash);
* ``critique_ratings``: a reviewer's score 0-3 of a critique, which is identified by the CoT it
  judges plus the critique model and a hash of the critique's raw text.

A reader that does not know these lists ignores them, so the format version stays 1. Merging is
per slot (author + CoT, or author + critique): a colleague's rating is added under their name,
the same rating twice is left alone, a differing one replaces the stored one only when it is
newer. :mod:`thoughtdesk.core.review.exchange` calls these inside its one transaction.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thoughtdesk.core.critiques import DIMENSIONS, CritiqueRating, ExplanationRating
from thoughtdesk.core.critiques.store import (
    add_critique_rating,
    add_explanation_rating,
    critique_content_hash,
    critique_rating_of,
    critique_raw_texts,
    explanation_rating_of,
    find_critique,
    replace_critique_rating,
    replace_explanation_rating,
)
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.merge_outcome import RatingCounts

EXPLANATION_KEY = "explanation_ratings"
CRITIQUE_KEY = "critique_ratings"


@dataclass
class IncomingRating:
    """One rating read from a file. ``kind`` is ``explanation`` or ``critique``; the CoT keys are
    matched like an annotation's; a critique rating also names its critique (model + hash)."""

    kind: str
    where: str
    collection: str | None
    dataset: str
    split: str
    sample_id: str
    cot_id: str
    cot_position: int | None
    cot_hash: str | None
    author: str
    date: str
    score: int | None
    dimensions: tuple[str, ...] = ()
    critique_model: str = ""
    critique_hash: str = ""
    problem: str | None = None
    span: None = None  # ratings are of a whole CoT (the matcher checks an annotation's span)


def _where_clause(author: str | None, collection_id: int | None, table: str) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if author is not None:
        clauses.append(f"{table}.author = ?")
        params.append(author)
    if collection_id is not None:
        clauses.append("s.collection_id = ?")
        params.append(collection_id)
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


def export_ratings(
    library: Library, author: str | None, collection_id: int | None, cot_hash
) -> tuple[list[dict], list[dict]]:
    """``author``'s explanation and critique ratings (everyone's if None; one collection if
    given) as exchange records; ``cot_hash(text)`` is the exchange's CoT text hash."""
    keys = "k.name, s.dataset, s.split, s.sample_id, c.cot_id, c.position, c.cot"
    joins = "JOIN generated_cot c ON {}.cot_pk = c.id JOIN sample s ON c.sample_pk = s.id JOIN collection k ON s.collection_id = k.id"
    order = "ORDER BY k.name, s.dataset, s.split, s.position, c.position"
    where, params = _where_clause(author, collection_id, "e")
    explanation = library.conn.execute(
        f"SELECT {keys}, e.author, e.created, e.score, e.dimensions FROM explanation_rating e "
        f"{joins.format('e')} {where} {order}, e.position, e.id",
        params,
    ).fetchall()
    where, params = _where_clause(author, collection_id, "r")
    critique = library.conn.execute(
        f"SELECT {keys}, r.author, r.created, r.score, q.critique_model, q.id FROM critique_rating r "
        f"JOIN critique q ON r.critique_pk = q.id {joins.format('q')} {where} {order}, q.position, r.position, r.id",
        params,
    ).fetchall()

    def base(row) -> dict:
        return {
            "collection": row[0],
            "dataset": row[1],
            "split": row[2],
            "sample_id": row[3],
            "cot_id": row[4] or "",
            "cot_position": row[5],
            "cot_hash": cot_hash(row[6] or ""),
            "author": row[7] or "",
            "date": row[8] or "",
            "score": row[9],
        }

    explanation_records = [{**base(r), "dimensions": json.loads(r[10])} for r in explanation]
    raw_texts = critique_raw_texts(library.conn, [r[11] for r in critique])
    critique_records = [
        {**base(r), "critique_model": r[10], "critique_hash": critique_content_hash(raw_texts[r[11]])} for r in critique
    ]
    return explanation_records, critique_records


def _text(obj: dict, key: str) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _score(value: Any, top: int) -> tuple[int | None, str | None]:
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        return None, f"bad record: score must be an integer 0-{top} or null, got {value!r}"
    return value, None


def read_ratings(path: Path, document: dict) -> list[IncomingRating]:
    """The rating records of an exchange document (absent lists: none), each checked; a record
    that is wrong gets a ``problem`` and is reported, never merged."""
    out: list[IncomingRating] = []
    for key, kind, top in ((EXPLANATION_KEY, "explanation", 5), (CRITIQUE_KEY, "critique", 3)):
        items = document.get(key, [])
        if not isinstance(items, list):
            raise DataFileError(path, f"field {key!r} must be a list", where="top level")
        for index, obj in enumerate(items):
            if not isinstance(obj, dict):
                bad = IncomingRating(kind, f"{kind} rating {index}", None, "", "", "", "", None, None, "", "", None)
                bad.problem = "bad record: not an object"
                out.append(bad)
                continue
            position = obj.get("cot_position")
            where = (
                f"{kind} rating {index} (dataset {_text(obj, 'dataset')}, split {_text(obj, 'split')}, "
                f"sample {_text(obj, 'sample_id')}, CoT {_text(obj, 'cot_id') or position}"
                + (f", critique by {_text(obj, 'critique_model')}" if kind == "critique" else "")
                + ")"
            )
            problem: str | None
            score, problem = _score(obj.get("score"), top)
            dims: tuple[str, ...] = ()
            if not _text(obj, "dataset") or not _text(obj, "sample_id"):
                problem = "bad record: dataset and sample_id are required"
            elif kind == "explanation":
                raw_dims = obj.get("dimensions", [])
                if not isinstance(raw_dims, list) or not all(isinstance(d, str) for d in raw_dims):
                    problem = problem or "bad record: dimensions must be a list of names"
                else:
                    unknown = [d for d in raw_dims if d not in DIMENSIONS]
                    if unknown:
                        problem = problem or f"bad record: unknown flaw dimension {unknown[0]!r}"
                    dims = tuple(dict.fromkeys(raw_dims))  # the file's order: a round trip is exact
                if problem is None and score is None and not dims:
                    problem = "bad record: a rating with neither a score nor dimensions"
            elif problem is None and (not _text(obj, "critique_model") or not _text(obj, "critique_hash")):
                problem = "bad record: critique_model and critique_hash are required"
            elif problem is None and score is None:
                problem = "bad record: a critique rating needs a score"
            out.append(
                IncomingRating(
                    kind,
                    where,
                    _text(obj, "collection") or None,
                    _text(obj, "dataset"),
                    _text(obj, "split"),
                    _text(obj, "sample_id"),
                    _text(obj, "cot_id"),
                    position if isinstance(position, int) and not isinstance(position, bool) else None,
                    _text(obj, "cot_hash") or None,
                    _text(obj, "author"),
                    _text(obj, "date"),
                    score,
                    dims,
                    _text(obj, "critique_model"),
                    _text(obj, "critique_hash"),
                    problem,
                )
            )
    return out


def critique_of(conn: sqlite3.Connection, rating: IncomingRating, cot_pk: int) -> int | str:
    """The critique a critique rating is about on the matched CoT, or why there is none."""
    pk = find_critique(conn, cot_pk, rating.critique_model, rating.critique_hash)
    return pk if pk is not None else "critique not found on the CoT (critique model and text hash)"


def merge_rating(conn: sqlite3.Connection, counts: RatingCounts, rating: IncomingRating, target: int, newer) -> None:
    """Merge one rating into its CoT (``target`` = CoT key) or critique (critique key).
    ``newer(a, b)`` says whether date ``a`` is later than date ``b``."""
    if rating.kind == "explanation":
        stored_e = explanation_rating_of(conn, target, rating.author)
        if stored_e is None:
            add_explanation_rating(
                conn, target, ExplanationRating(rating.author, rating.score, rating.dimensions, rating.date)
            )
            counts.added += 1
        elif (stored_e.score, stored_e.dimensions) == (rating.score, rating.dimensions):
            counts.unchanged += 1
        elif newer(rating.date, stored_e.created) and stored_e.pk is not None:
            replace_explanation_rating(conn, stored_e.pk, rating.score, rating.dimensions, rating.date)
            counts.updated += 1
        else:
            counts.kept += 1
        return
    stored_c = critique_rating_of(conn, target, rating.author)
    if stored_c is None:
        add_critique_rating(conn, target, CritiqueRating(rating.author, rating.score, rating.date))
        counts.added += 1
    elif stored_c.score == rating.score:
        counts.unchanged += 1
    elif newer(rating.date, stored_c.created) and stored_c.pk is not None:
        replace_critique_rating(conn, stored_c.pk, rating.score, rating.date)
        counts.updated += 1
    else:
        counts.kept += 1
