"""Critiques and human ratings in ThoughtSource JSON: the ``thoughtdesk_critiques`` extension field.

ThoughtSource has no place for critiques, so an export puts each generated CoT's critiques (with
their ratings) and explanation ratings into one extra key of that CoT::

    "thoughtdesk_critiques": {"critiques": [{critique_model, raw_text, llm_options, fragment_key,
        prompt_text, parsed: {main_flaw, ..., explanation_score, outcomes}, elements, source, run_id,
        request_id, created, extra, ratings: [{author, score, created, extra}]}, ...],
      "explanation_ratings": [{author, score, dimensions, created, extra}, ...]}

An import of such a file takes the key out of the CoT's extra and stores the rows again (run and
request ids are not restored: they name rows of the library that wrote the file). Tools that do
not know the key keep it as an unknown field, as ThoughtSource's own tools do.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from thoughtdesk.core.critiques.records import (
    Critique,
    CritiqueRating,
    ElementOutcome,
    ExplanationRating,
    ParsedCritique,
)
from thoughtdesk.core.critiques.store import add_imported, critiques_for_cots, explanation_ratings_for_cots
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.reader import StoredSample, iter_stored_split
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.library.store import Library

#: The extension key on a generated CoT.
EXTENSION = "thoughtdesk_critiques"
_BATCH = 500


def has_critiques(library: Library, collection_id: int) -> bool:
    """True when any CoT of the collection has a critique or an explanation rating."""
    query = (
        "SELECT 1 FROM {table} t JOIN generated_cot g ON g.id = t.cot_pk JOIN sample s ON s.id = g.sample_pk "
        "WHERE s.collection_id = ? LIMIT 1"
    )
    return any(
        library.conn.execute(query.format(table=table), (collection_id,)).fetchone() is not None
        for table in ("critique", "explanation_rating")
    )


def critique_to_json(c: Critique) -> dict[str, Any]:
    """One critique (with its ratings) as the extension's JSON object."""
    p = c.parsed
    return {
        "critique_model": c.critique_model,
        "raw_text": c.raw_text,
        "llm_options": c.llm_options,
        "fragment_key": c.fragment_key,
        "prompt_text": c.prompt_text,
        "parsed": {
            "main_flaw": p.main_flaw,
            "dimension": p.dimension,
            "general_feedback": p.general_feedback,
            "specific_feedback": p.specific_feedback,
            "explanation_score": p.explanation_score,
            "outcomes": {k: v.to_json() for k, v in p.outcomes.items()},
        },
        "elements": c.elements,
        "source": c.source,
        "run_id": c.run_id,
        "request_id": c.request_id,
        "created": c.created,
        "extra": c.extra,
        "ratings": [{"author": r.author, "score": r.score, "created": r.created, "extra": r.extra} for r in c.ratings],
    }


def rating_to_json(r: ExplanationRating) -> dict[str, Any]:
    """One explanation rating as the extension's JSON object."""
    return {
        "author": r.author,
        "score": r.score,
        "dimensions": list(r.dimensions),
        "created": r.created,
        "extra": r.extra,
    }


def _with_extension(library: Library, batch: list[StoredSample]) -> Iterator[Sample]:
    cot_pks = [pk for stored in batch for pk in stored.cot_pks]
    critiques = critiques_for_cots(library, cot_pks)
    ratings = explanation_ratings_for_cots(library, cot_pks)
    for stored in batch:
        for pk, cot in zip(stored.cot_pks, stored.sample.generated_cot, strict=True):
            if pk in critiques or pk in ratings:
                cot.extra[EXTENSION] = {
                    "critiques": [critique_to_json(c) for c in critiques.get(pk, ())],
                    "explanation_ratings": [rating_to_json(r) for r in ratings.get(pk, ())],
                }
        yield stored.sample


def samples_with_critiques(library: Library, collection_id: int, dataset: str, split: str) -> Iterator[Sample]:
    """The samples of one split, each CoT with its critiques and ratings in the extension field."""
    batch: list[StoredSample] = []
    for stored in iter_stored_split(library, collection_id, dataset, split):
        batch.append(stored)
        if len(batch) >= _BATCH:
            yield from _with_extension(library, batch)
            batch = []
    if batch:
        yield from _with_extension(library, batch)


def collection_with_critiques(library: Library, collection_id: int) -> Iterator[tuple[str, str, Iterator[Sample]]]:
    """Like :func:`thoughtdesk.core.library.reader.iter_collection`, with the extension field."""
    order: dict[str, list[str]] = {}
    for dataset, split in library.splits(collection_id):
        order.setdefault(dataset, []).append(split)
    for dataset, splits in order.items():
        for split in splits:
            yield dataset, split, samples_with_critiques(library, collection_id, dataset, split)


class _Reader:
    """Reads the extension's JSON back, naming the place of anything malformed."""

    def __init__(self, path: Path | None, where: str) -> None:
        self.path, self.where = path, where

    def fail(self, field: str, message: str) -> DataFileError:
        return DataFileError(self.path, message, where=f"{self.where}, field {EXTENSION}.{field}")

    def obj(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, "must be an object")
        return value

    def items(self, obj: dict[str, Any], key: str, field: str) -> list[Any]:
        value = obj.get(key, [])
        if not isinstance(value, list):
            raise self.fail(f"{field}.{key}", "must be a list")
        return value

    def text(self, obj: dict[str, Any], key: str, field: str, *, nullable: bool = False) -> Any:
        value = obj.get(key)
        if isinstance(value, str) or (value is None and nullable):
            return value
        raise self.fail(f"{field}.{key}", "must be text")

    def score(self, obj: dict[str, Any], key: str, field: str) -> int | None:
        value = obj.get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise self.fail(f"{field}.{key}", "must be a whole number or null")


def critiques_from_json(value: Any, path: Path | None, where: str) -> tuple[list[Critique], list[ExplanationRating]]:
    """The extension's critiques (``cot_pk`` 0, positions in order) and explanation ratings."""
    r = _Reader(path, where)
    data = r.obj(value, "")
    critiques = []
    for i, item in enumerate(r.items(data, "critiques", "")):
        at = f"critiques[{i}]"
        c = r.obj(item, at)
        parsed_json = r.obj(c.get("parsed", {}), f"{at}.parsed")
        outcomes_json = r.obj(parsed_json.get("outcomes", {}), f"{at}.parsed.outcomes")
        try:
            outcomes = {k: ElementOutcome.from_json(v) for k, v in outcomes_json.items()}
        except (KeyError, TypeError, AttributeError):
            raise r.fail(f"{at}.parsed.outcomes", "each outcome must be an object with a status") from None
        score = parsed_json.get("explanation_score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise r.fail(f"{at}.parsed.explanation_score", "must be a number or null")
        parsed = ParsedCritique(
            main_flaw=r.text(parsed_json, "main_flaw", f"{at}.parsed", nullable=True),
            dimension=r.text(parsed_json, "dimension", f"{at}.parsed", nullable=True),
            general_feedback=r.text(parsed_json, "general_feedback", f"{at}.parsed", nullable=True),
            specific_feedback=r.text(parsed_json, "specific_feedback", f"{at}.parsed", nullable=True),
            explanation_score=None if score is None else float(score),
            outcomes=outcomes,
        )
        ratings = []
        for j, rating in enumerate(r.items(c, "ratings", at)):
            rat = r.obj(rating, f"{at}.ratings[{j}]")
            ratings.append(
                CritiqueRating(
                    author=r.text(rat, "author", f"{at}.ratings[{j}]"),
                    score=r.score(rat, "score", f"{at}.ratings[{j}]"),
                    created=r.text(rat, "created", f"{at}.ratings[{j}]", nullable=True) or "",
                    extra=r.obj(rat.get("extra") or {}, f"{at}.ratings[{j}].extra"),
                )
            )
        source = c.get("source", "import")
        critiques.append(
            Critique(
                cot_pk=0,
                critique_model=r.text(c, "critique_model", at),
                raw_text=r.text(c, "raw_text", at),
                parsed=parsed,
                llm_options=r.obj(c.get("llm_options") or {}, f"{at}.llm_options"),
                fragment_key=r.text(c, "fragment_key", at, nullable=True),
                prompt_text=r.text(c, "prompt_text", at, nullable=True),
                elements=None if c.get("elements") is None else r.obj(c["elements"], f"{at}.elements"),
                source="run" if source == "run" else "import",
                created=r.text(c, "created", at, nullable=True) or "",
                extra=r.obj(c.get("extra") or {}, f"{at}.extra"),
                ratings=ratings,
                position=i,
            )
        )
    ratings_out = []
    for j, item in enumerate(r.items(data, "explanation_ratings", "")):
        at = f"explanation_ratings[{j}]"
        rat = r.obj(item, at)
        dimensions = r.items(rat, "dimensions", at)
        if not all(isinstance(d, str) for d in dimensions):
            raise r.fail(f"{at}.dimensions", "must be a list of text")
        ratings_out.append(
            ExplanationRating(
                author=r.text(rat, "author", at),
                score=r.score(rat, "score", at),
                dimensions=tuple(dimensions),
                created=r.text(rat, "created", at, nullable=True) or "",
                extra=r.obj(rat.get("extra") or {}, f"{at}.extra"),
            )
        )
    return critiques, ratings_out


class CritiqueRestore:
    """An import hook (:class:`thoughtdesk.core.importing.importer.ImportHook`) that takes the
    extension field out of each sample's CoTs and stores their critiques and ratings."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._current: tuple[Sample, list[tuple[list[Critique], list[ExplanationRating]]]] | None = None
        self.critiques: list[Critique] = []
        self.ratings: list[tuple[int, ExplanationRating]] = []

    def take(self, sample: Sample, where: str) -> Sample:
        """Remove the extension field from ``sample``'s CoTs, remembering what it held."""
        found = False
        payload: list[tuple[list[Critique], list[ExplanationRating]]] = []
        for index, cot in enumerate(sample.generated_cot):
            value = cot.extra.pop(EXTENSION, None) if cot.extra else None
            if value is None:
                payload.append(([], []))
                continue
            found = True
            payload.append(critiques_from_json(value, self.path, f"{where}, generated_cot {index}"))
        self._current = (sample, payload) if found else None
        return sample

    def samples(self, records: Iterable[tuple[str, str, Sample, str]]) -> Iterator[tuple[str, str, Sample, str]]:
        """``records`` with the extension taken out of each sample (see :meth:`take`)."""
        for dataset, split, sample, where in records:
            yield dataset, split, self.take(sample, where), where

    def queued(self, first_cot_pk: int, sample: Sample) -> None:
        if self._current is None or self._current[0] is not sample:
            return
        for offset, (critiques, ratings) in enumerate(self._current[1]):
            for critique in critiques:
                critique.cot_pk = first_cot_pk + offset
                self.critiques.append(critique)
            self.ratings.extend((first_cot_pk + offset, rating) for rating in ratings)
        self._current = None

    def finish(self, conn: sqlite3.Connection) -> None:
        if self.critiques or self.ratings:
            add_imported(conn, self.critiques, self.ratings)
