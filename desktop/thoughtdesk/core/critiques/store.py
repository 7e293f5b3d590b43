"""Critiques and human ratings in the library: written and read back as typed records.

Writers take the connection of the caller's transaction (``with lib.transaction() as conn``), so
a critique commits together with whatever else the caller writes (a request row, an import).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from thoughtdesk.core.critiques.records import (
    DS_BULLETS,
    Critique,
    CritiqueRating,
    ElementOutcome,
    ExplanationRating,
    ParsedCritique,
    ds_layout_text,
    elements_derivable,
    elements_from_parsed,
    outcomes_from_json,
    outcomes_to_json,
)
from thoughtdesk.core.library.prompt_refs import expand_prompt, is_prompt_ref
from thoughtdesk.core.library.store import Library, inserted_id
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.library.writer import insert_rows

CRITIQUE_COLUMNS = (
    "id, cot_pk, position, critique_model, llm_options, fragment_key, prompt_text, raw_text, main_flaw, "
    "dimension, general_feedback, specific_feedback, explanation_score, outcomes, elements, source, run_id, "
    "request_id, created, extra"
)
_CRITIQUE_NAMES = tuple(CRITIQUE_COLUMNS.split(", "))
#: Characters of a critique's raw text read for a view (which shows its parsed fields, never the
#: raw text: kept only so a view's records compare alike).
VIEW_RAW_CHARS = 10_000
#: :data:`CRITIQUE_COLUMNS` for views: no prompt (never shown; a run's prompt quotes the whole
#: CoT, and an old library stores it whole), the raw text cut to :data:`VIEW_RAW_CHARS`.
_VIEW_COLUMNS = CRITIQUE_COLUMNS.replace("prompt_text", "NULL").replace(
    "raw_text", f"substr(raw_text, 1, {VIEW_RAW_CHARS})"
)


#: The ``elements`` column of an imported critique whose critique_elements object is its parsed
#: columns and outcomes exactly (:func:`elements_derivable`): the usual DSCB critique, whose
#: elements need not be stored twice. (A JSON string: an elements object is never one.)
ELEMENTS_FROM_COLUMNS = '"columns"'
#: The ``elements`` column of an imported critique whose elements are derivable as above and
#: whose raw text is exactly their Digital Socrates layout (:func:`ds_layout_text`, one marker
#: per bullet form): the raw text is stored empty and rebuilt when read, as DSCB's critique texts
#: are their elements written out (a 20,000-critique import stores 6.7 MB less).
TEXT_FROM_ELEMENTS: dict[str, str] = {f'"columns+ds{i}"': bullet for i, bullet in enumerate(DS_BULLETS)}


def outcomes_text(outcomes: dict[str, ElementOutcome]) -> str:
    """The ``outcomes`` column of a critique (compact JSON, see :func:`outcomes_to_json`)."""
    return msgspec.json.encode(outcomes_to_json(outcomes)).decode("utf-8")


def outcomes_of(text: str) -> dict[str, ElementOutcome]:
    """A critique's outcomes from its ``outcomes`` column (either stored form)."""
    return outcomes_from_json(json.loads(text))


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _loads(text: str | None, default: Any) -> Any:
    return default if text is None else json.loads(text)


def add_critique(conn: sqlite3.Connection, critique: Critique) -> int:
    """Insert ``critique`` (and its ratings) after the CoT's other critiques; return its primary key."""
    position = conn.execute(
        "SELECT coalesce(max(position) + 1, 0) FROM critique WHERE cot_pk = ?", (critique.cot_pk,)
    ).fetchone()[0]
    p = critique.parsed
    pk = inserted_id(
        conn.execute(
            f"INSERT INTO critique ({CRITIQUE_COLUMNS}) VALUES (NULL, {', '.join('?' * 19)})",
            (
                critique.cot_pk,
                position,
                critique.critique_model,
                _dumps(critique.llm_options),
                critique.fragment_key,
                critique.prompt_text,
                critique.raw_text,
                p.main_flaw,
                p.dimension,
                p.general_feedback,
                p.specific_feedback,
                p.explanation_score,
                outcomes_text(p.outcomes),
                _dumps(critique.elements),
                critique.source,
                critique.run_id,
                critique.request_id,
                critique.created or now_iso(),
                _dumps(critique.extra or None),
            ),
        )
    )
    critique.pk, critique.position = pk, position
    for rating in critique.ratings:
        add_critique_rating(conn, pk, rating)
    return pk


def add_critique_rating(conn: sqlite3.Connection, critique_pk: int, rating: CritiqueRating) -> int:
    """Append a rating to a critique (imports keep every rating, in file order)."""
    position = conn.execute(
        "SELECT coalesce(max(position) + 1, 0) FROM critique_rating WHERE critique_pk = ?", (critique_pk,)
    ).fetchone()[0]
    rating.pk = inserted_id(
        conn.execute(
            "INSERT INTO critique_rating (critique_pk, position, author, score, created, extra) VALUES (?, ?, ?, ?, ?, ?)",
            (
                critique_pk,
                position,
                rating.author,
                rating.score,
                rating.created or now_iso(),
                _dumps(rating.extra or None),
            ),
        )
    )
    return rating.pk


def add_explanation_rating(conn: sqlite3.Connection, cot_pk: int, rating: ExplanationRating) -> int:
    """Append a rating to a CoT (imports keep every rating, in file order)."""
    position = conn.execute(
        "SELECT coalesce(max(position) + 1, 0) FROM explanation_rating WHERE cot_pk = ?", (cot_pk,)
    ).fetchone()[0]
    rating.pk = inserted_id(
        conn.execute(
            "INSERT INTO explanation_rating (cot_pk, position, author, score, dimensions, created, extra) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                cot_pk,
                position,
                rating.author,
                rating.score,
                json.dumps(list(rating.dimensions)),
                rating.created or now_iso(),
                _dumps(rating.extra or None),
            ),
        )
    )
    return rating.pk


def _extra(text: str | None, conn: sqlite3.Connection, cots: dict[Any, str | None] | None) -> dict[str, Any]:
    """A critique's extras, the prompt of a run's provenance whole (stored as a reference)."""
    extra = _loads(text, {})
    provenance = extra.get("thoughtdesk")
    if isinstance(provenance, dict) and is_prompt_ref(provenance.get("prompt")):
        provenance["prompt"] = expand_prompt(conn, provenance["prompt"], cots)
    return extra


def _critique(
    row: Sequence[Any], conn: sqlite3.Connection, cots: dict[Any, str | None] | None = None, *, prompt: bool = True
) -> Critique:
    """A critique from its row, its prompt whole (a run's prompt is stored with a reference to
    the CoT it quotes, see prompt_refs; ``cots`` keeps the CoT texts read for the next rows).
    Without ``prompt`` the prompt is left as stored (for callers that only read the raw text)."""
    parsed = ParsedCritique(row[8], row[9], row[10], row[11], row[12], outcomes_of(row[13]))
    marker, raw_text = row[14], row[7]
    if marker == ELEMENTS_FROM_COLUMNS:
        elements = elements_from_parsed(parsed)
    elif marker in TEXT_FROM_ELEMENTS:
        elements = elements_from_parsed(parsed)
        raw_text = ds_layout_text(elements, TEXT_FROM_ELEMENTS[marker]) or ""
    else:
        elements = _loads(marker, None)
    return Critique(
        cot_pk=row[1],
        critique_model=row[3],
        raw_text=raw_text,
        parsed=parsed,
        llm_options=_loads(row[4], {}),
        fragment_key=row[5],
        prompt_text=expand_prompt(conn, row[6], cots) if prompt and is_prompt_ref(row[6]) else row[6],
        elements=elements,
        source=row[15],
        run_id=row[16],
        request_id=row[17],
        created=row[18],
        extra=_extra(row[19], conn, cots) if prompt else _loads(row[19], {}),
        position=row[2],
        pk=row[0],
    )


def critique_by_pk(conn: sqlite3.Connection, critique_pk: int) -> Critique | None:
    """One stored critique (without its ratings), or None if there is no such row."""
    row = conn.execute(f"SELECT {CRITIQUE_COLUMNS} FROM critique WHERE id = ?", (critique_pk,)).fetchone()
    return None if row is None else _critique(row, conn)


def _chunks(values: Sequence[int], size: int = 900) -> Iterable[Sequence[int]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def critiques_for_cots(lib: Library, cot_pks: Iterable[int], *, for_view: bool = False) -> dict[int, list[Critique]]:
    """The critiques of each CoT (with their ratings), in stored order; CoTs without any are absent.
    ``for_view``: what views show, read bounded: each critique's ``prompt_text`` is None, its
    provenance's prompt as stored (neither read nor rebuilt from the CoT it quotes) and its
    ``raw_text`` cut to :data:`VIEW_RAW_CHARS` (the parsed fields stay whole). Exports and
    analyses read everything (the default)."""
    pks = list(dict.fromkeys(cot_pks))
    out: dict[int, list[Critique]] = {}
    by_pk: dict[int, Critique] = {}
    cots: dict[Any, str | None] = {}
    for chunk in _chunks(pks):
        marks = ", ".join("?" * len(chunk))
        for row in lib.conn.execute(
            f"SELECT {_VIEW_COLUMNS if for_view else CRITIQUE_COLUMNS} FROM critique "
            f"WHERE cot_pk IN ({marks}) ORDER BY cot_pk, position",
            chunk,
        ):
            critique = _critique(row, lib.conn, cots, prompt=not for_view)
            out.setdefault(critique.cot_pk, []).append(critique)
            by_pk[critique.pk or 0] = critique
    for chunk in _chunks(list(by_pk)):
        marks = ", ".join("?" * len(chunk))
        for pk, critique_pk, author, score, created, extra in lib.conn.execute(
            f"SELECT id, critique_pk, author, score, created, extra FROM critique_rating "
            f"WHERE critique_pk IN ({marks}) ORDER BY critique_pk, position",
            chunk,
        ):
            by_pk[critique_pk].ratings.append(CritiqueRating(author, score, created, _loads(extra, {}), pk))
    return out


def explanation_ratings_for_cots(lib: Library, cot_pks: Iterable[int]) -> dict[int, list[ExplanationRating]]:
    """The human explanation ratings of each CoT, in stored order; CoTs without any are absent."""
    out: dict[int, list[ExplanationRating]] = {}
    for chunk in _chunks(list(dict.fromkeys(cot_pks))):
        marks = ", ".join("?" * len(chunk))
        for pk, cot_pk, author, score, dimensions, created, extra in lib.conn.execute(
            f"SELECT id, cot_pk, author, score, dimensions, created, extra FROM explanation_rating "
            f"WHERE cot_pk IN ({marks}) ORDER BY cot_pk, position",
            chunk,
        ):
            out.setdefault(cot_pk, []).append(
                ExplanationRating(author, score, tuple(json.loads(dimensions)), created, _loads(extra, {}), pk)
            )
    return out


def set_explanation_rating(
    conn: sqlite3.Connection, cot_pk: int, author: str, score: int | None, dimensions: Sequence[str]
) -> ExplanationRating | None:
    """Set ``author``'s rating of a CoT (a reviewer has one; the first of theirs is replaced);
    a rating with no score and no dimensions deletes it. Returns the previous rating (for undo)."""
    row = conn.execute(
        "SELECT id, score, dimensions, created, extra FROM explanation_rating WHERE cot_pk = ? AND author = ? "
        "ORDER BY position LIMIT 1",
        (cot_pk, author),
    ).fetchone()
    previous = (
        None
        if row is None
        else ExplanationRating(author, row[1], tuple(json.loads(row[2])), row[3], _loads(row[4], {}), row[0])
    )
    if score is None and not dimensions:
        if row is not None:
            conn.execute("DELETE FROM explanation_rating WHERE id = ?", (row[0],))
    elif row is None:
        add_explanation_rating(conn, cot_pk, ExplanationRating(author, score, tuple(dimensions)))
    else:
        conn.execute(
            "UPDATE explanation_rating SET score = ?, dimensions = ?, created = ? WHERE id = ?",
            (score, json.dumps(list(dimensions)), now_iso(), row[0]),
        )
    return previous


def set_critique_rating(conn: sqlite3.Connection, critique_pk: int, author: str, score: int | None) -> int | None:
    """Set ``author``'s rating of a critique (None deletes it). Returns the previous score (for undo)."""
    row = conn.execute(
        "SELECT id, score FROM critique_rating WHERE critique_pk = ? AND author = ? ORDER BY position LIMIT 1",
        (critique_pk, author),
    ).fetchone()
    if score is None:
        if row is not None:
            conn.execute("DELETE FROM critique_rating WHERE id = ?", (row[0],))
    elif row is None:
        add_critique_rating(conn, critique_pk, CritiqueRating(author, score))
    else:
        conn.execute("UPDATE critique_rating SET score = ?, created = ? WHERE id = ?", (score, now_iso(), row[0]))
    return None if row is None else row[1]


def _next_id(conn: sqlite3.Connection, table: str) -> int:
    return (conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0) + 1


class ImportedRows:
    """Rows of critiques, critique ratings and explanation ratings for an import into CoTs it has
    just written, sent at once by :meth:`write` (``executemany``, primary keys assigned here).
    :func:`add_imported` fills it from records; an importer may fill it straight from its file's
    objects (core/importing/dscb.py), so both store exactly the same rows."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.created = now_iso()
        self.next_critique = self._first_critique = _next_id(conn, "critique")
        self.next_rating = self._first_rating = _next_id(conn, "critique_rating")
        self.next_explanation = self._first_explanation = _next_id(conn, "explanation_rating")
        self.critique_rows: list[tuple[Any, ...]] = []
        self.rating_rows: list[tuple[Any, ...]] = []
        self.explanation_rows: list[tuple[Any, ...]] = []
        # Most critiques share a handful of outcome combinations (all parsed, no flaw, ...): keyed by
        # the outcomes' identities, the value keeping those objects alive (so no other object can
        # take their ids while the key is here); the common outcomes are shared objects.
        self._outcomes: dict[tuple[Any, ...], tuple[str, tuple[ElementOutcome, ...]]] = {}
        self._positions: dict[int, int] = {}

    def critique(
        self,
        cot_pk: int,
        position: int,
        critique_model: str,
        llm_options: Any,
        raw_text: str,
        parsed: ParsedCritique,
        elements: Any,
        extra: dict[str, Any] | None,
        *,
        fragment_key: str | None = None,
        prompt_text: str | None = None,
        source: str = "import",
        run_id: int | None = None,
        request_id: int | None = None,
        created: str = "",
    ) -> int:
        """Queue one critique row; return its primary key."""
        pk = self.next_critique
        self.next_critique += 1
        outcomes = parsed.outcomes
        values = tuple(outcomes.values())
        key = (*outcomes, *map(id, values))
        cached = self._outcomes.get(key)
        if cached is None:
            cached = self._outcomes[key] = (outcomes_text(outcomes), values)
        if elements is None:
            elements_text = None
        elif elements.__class__ is dict and elements_derivable(elements, parsed):
            elements_text = ELEMENTS_FROM_COLUMNS  # read back by elements_from_parsed
            for marker, bullet in TEXT_FROM_ELEMENTS.items():
                if raw_text == ds_layout_text(elements, bullet):
                    elements_text, raw_text = marker, ""  # rebuilt by _critique
                    break
        else:
            elements_text = _encoded(elements)
        self.critique_rows.append(
            (
                pk,
                cot_pk,
                position,
                critique_model,
                _encoded(llm_options),
                fragment_key,
                prompt_text,
                raw_text,
                parsed.main_flaw,
                parsed.dimension,
                parsed.general_feedback,
                parsed.specific_feedback,
                parsed.explanation_score,
                cached[0],
                elements_text,
                source,
                run_id,
                request_id,
                created or self.created,
                _encoded(extra or None),
            )
        )
        return pk

    def critique_rating(
        self,
        critique_pk: int,
        position: int,
        author: str,
        score: int | None,
        extra: dict[str, Any] | None,
        created: str = "",
    ) -> int:
        """Queue one rating of a critique; return its primary key."""
        pk = self.next_rating
        self.next_rating += 1
        self.rating_rows.append(
            (pk, critique_pk, position, author, score, created or self.created, _encoded(extra or None))
        )
        return pk

    def explanation_rating(
        self,
        cot_pk: int,
        author: str,
        score: int | None,
        dimensions: Sequence[str],
        extra: dict[str, Any] | None,
        created: str = "",
    ) -> int:
        """Queue one rating of a CoT, after the ones queued for it before; return its primary key."""
        pk = self.next_explanation
        self.next_explanation += 1
        position = self._positions[cot_pk] = self._positions.get(cot_pk, -1) + 1
        self.explanation_rows.append(
            (
                pk,
                cot_pk,
                position,
                author,
                score,
                _encoded(list(dimensions)),
                created or self.created,
                _encoded(extra or None),
            )
        )
        return pk

    def write(self) -> None:
        """Insert every queued row (inside the caller's transaction). Rows queued in earlier
        transactions (a staged import's chunks) move above keys another process took meanwhile:
        the keys returned when queueing are final only when queued in this transaction."""
        conn = self.conn
        dc = max(0, _next_id(conn, "critique") - self._first_critique)
        dr = max(0, _next_id(conn, "critique_rating") - self._first_rating)
        de = max(0, _next_id(conn, "explanation_rating") - self._first_explanation)
        if dc:
            self.critique_rows = [(row[0] + dc, *row[1:]) for row in self.critique_rows]
        if dc or dr:
            self.rating_rows = [(row[0] + dr, row[1] + dc, *row[2:]) for row in self.rating_rows]
        if de:
            self.explanation_rows = [(row[0] + de, *row[1:]) for row in self.explanation_rows]
        insert_rows(self.conn, "critique", _CRITIQUE_NAMES, self.critique_rows)
        insert_rows(self.conn, "critique_rating", _RATING_NAMES, self.rating_rows)
        insert_rows(self.conn, "explanation_rating", _EXPLANATION_NAMES, self.explanation_rows)
        for rows in (self.critique_rows, self.rating_rows, self.explanation_rows):
            rows.clear()


_RATING_NAMES = ("id", "critique_pk", "position", "author", "score", "created", "extra")
_EXPLANATION_NAMES = ("id", "cot_pk", "position", "author", "score", "dimensions", "created", "extra")
_encode = msgspec.json.encode  # JSON values from a file: the same text as json.dumps, faster


def _encoded(value: Any) -> str | None:
    return None if value is None else _encode(value).decode("utf-8")


def add_imported(
    conn: sqlite3.Connection,
    critiques: Sequence[Critique],
    explanation_ratings: Sequence[tuple[int, ExplanationRating]] = (),
) -> None:
    """Insert many critiques (with their ratings) and explanation ratings ``(cot_pk, rating)`` at
    once, for an import into CoTs it has just written: primary keys assigned here and rows sent
    with ``executemany``; each critique keeps its ``position``, ratings their order in the lists.
    (:func:`add_critique` is the one-at-a-time form for CoTs that may already have critiques.)"""
    rows = ImportedRows(conn)
    for critique in critiques:
        critique.pk = rows.critique(
            critique.cot_pk,
            critique.position,
            critique.critique_model,
            critique.llm_options,
            critique.raw_text,
            critique.parsed,
            critique.elements,
            critique.extra,
            fragment_key=critique.fragment_key,
            prompt_text=critique.prompt_text,
            source=critique.source,
            run_id=critique.run_id,
            request_id=critique.request_id,
            created=critique.created,
        )
        for position, rating in enumerate(critique.ratings):
            rating.pk = rows.critique_rating(
                critique.pk, position, rating.author, rating.score, rating.extra, rating.created
            )
    for cot_pk, explanation in explanation_ratings:
        explanation.pk = rows.explanation_rating(
            cot_pk,
            explanation.author,
            explanation.score,
            explanation.dimensions,
            explanation.extra,
            explanation.created,
        )
    rows.write()


# ---- exchanging ratings between reviewers (core/review/exchange.py) ---------------------------


def critique_content_hash(text: str | None) -> str:
    """``"sha256:<hex>"`` of a critique's raw text (UTF-8): with the critique model and the CoT,
    what identifies a critique across libraries (primary keys differ from library to library)."""
    return "sha256:" + hashlib.sha256((text or "").encode("utf-8")).hexdigest()


def find_critique(conn: sqlite3.Connection, cot_pk: int, critique_model: str, content_hash: str) -> int | None:
    """The primary key of ``cot_pk``'s critique by ``critique_model`` whose raw text has this hash."""
    for row in conn.execute(
        f"SELECT {CRITIQUE_COLUMNS} FROM critique WHERE cot_pk = ? AND critique_model = ? ORDER BY position",
        (cot_pk, critique_model),
    ):
        if critique_content_hash(_critique(row, conn, prompt=False).raw_text) == content_hash:
            return int(row[0])
    return None


def critique_raw_texts(conn: sqlite3.Connection, critique_pks: Iterable[int]) -> dict[int, str]:
    """The raw text of each critique (rebuilt where an import stored it as its elements, see
    :data:`TEXT_FROM_ELEMENTS`); read the column through this, not directly."""
    out: dict[int, str] = {}
    for chunk in _chunks(list(dict.fromkeys(critique_pks))):
        marks = ", ".join("?" * len(chunk))
        for row in conn.execute(f"SELECT {CRITIQUE_COLUMNS} FROM critique WHERE id IN ({marks})", chunk):
            out[row[0]] = _critique(row, conn, prompt=False).raw_text
    return out


def explanation_rating_of(conn: sqlite3.Connection, cot_pk: int, author: str) -> ExplanationRating | None:
    """``author``'s (first) rating of a CoT, or None."""
    row = conn.execute(
        "SELECT id, score, dimensions, created, extra FROM explanation_rating WHERE cot_pk = ? AND author = ? "
        "ORDER BY position LIMIT 1",
        (cot_pk, author),
    ).fetchone()
    if row is None:
        return None
    return ExplanationRating(author, row[1], tuple(json.loads(row[2])), row[3], _loads(row[4], {}), row[0])


def critique_rating_of(conn: sqlite3.Connection, critique_pk: int, author: str) -> CritiqueRating | None:
    """``author``'s (first) rating of a critique, or None."""
    row = conn.execute(
        "SELECT id, score, created, extra FROM critique_rating WHERE critique_pk = ? AND author = ? "
        "ORDER BY position LIMIT 1",
        (critique_pk, author),
    ).fetchone()
    return None if row is None else CritiqueRating(author, row[1], row[2], _loads(row[3], {}), row[0])


def replace_explanation_rating(
    conn: sqlite3.Connection, rating_pk: int, score: int | None, dimensions: Sequence[str], created: str
) -> None:
    """Overwrite a stored explanation rating with a newer one (a merge keeps the other's date)."""
    conn.execute(
        "UPDATE explanation_rating SET score = ?, dimensions = ?, created = ? WHERE id = ?",
        (score, json.dumps(list(dimensions)), created or now_iso(), rating_pk),
    )


def replace_critique_rating(conn: sqlite3.Connection, rating_pk: int, score: int | None, created: str) -> None:
    """Overwrite a stored critique rating with a newer one (a merge keeps the other's date)."""
    conn.execute(
        "UPDATE critique_rating SET score = ?, created = ? WHERE id = ?", (score, created or now_iso(), rating_pk)
    )
