"""Reading samples back out of a library as typed records, in stored order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from thoughtdesk.core.library.prompt_refs import expand_prompt_with, is_prompt_ref
from thoughtdesk.core.library.records import Annotation, Answer, GeneratedCot, Sample, Scoring
from thoughtdesk.core.library.store import Library

CHUNK = 1000

_SAMPLE_COLS = (
    "id, dataset, split, sample_id, ref_id, question, type, choices, context, cot, answer, feedback, extra, missing"
)
_COT_COLS = (
    "id, sample_pk, cot_id, fragments_version, instruction, cot_trigger, cot_trigger_template, "
    "prompt_text, cot, author, date, api_service, model, comment, extra, missing, "
    "reasoning, finish_reason, reasoning_tokens"
)
_ANSWER_COLS = (
    "cot_pk, answer_id, answer_extraction, answer_extraction_template, answer_extraction_text, "
    "answer, correct_answer, extra, missing, td_outcome, td_value, td_method, td_reason, td_span_source, "
    "td_span_start, td_span_end, original_scoring"
)
_ANNOTATION_COLS = "cot_pk, author, date, key, value, value_is_json, extra, missing"


def _extra(text: str | None) -> dict:
    return json.loads(text) if text else {}


def _answer_extra(text: str | None, cot_text: str | None) -> dict:
    """An answer's extras, with the extraction prompt of its provenance whole: stored with a
    reference to the CoT it quotes (this answer's own CoT), rebuilt here (see prompt_refs)."""
    extra = _extra(text)
    provenance = extra.get("thoughtdesk")
    if isinstance(provenance, dict) and is_prompt_ref(provenance.get("prompt")):
        provenance["prompt"] = expand_prompt_with(provenance["prompt"], cot_text)
    return extra


def _missing(text: str | None) -> tuple[str, ...]:
    return tuple(json.loads(text)) if text else ()


def _loads(text: str | None):
    return None if text is None else json.loads(text)


def _scoring(row: tuple) -> Scoring | None:
    """ThoughtDesk's scoring of an answer row (columns 9.. of ``_ANSWER_COLS``), None if unscored."""
    outcome, value, method, reason, source, start, end, original = row[9:17]
    if outcome is None:
        return None
    span = None if source is None and start is None and end is None else (source, start, end)
    return Scoring(outcome, value, method, reason, span, json.loads(original) if original else None)


@dataclass
class StoredSample:
    """A sample as stored, with the row keys the GUI needs to address its parts.
    ``annotations_cut``: CoT key -> characters of its annotations' text values not read (see
    :func:`load_sample`'s ``annotation_chars``); :func:`cot_annotations` reads them whole."""

    pk: int
    dataset: str
    split: str
    sample: Sample
    cot_pks: list[int] = field(default_factory=list)
    annotations_cut: dict[int, int] = field(default_factory=dict)


def _annotation(r: tuple) -> Annotation:
    """An annotation from ``cot_pk, `` + :data:`_ANNOTATION_COLS`."""
    return Annotation(
        key=r[3],
        value=json.loads(r[4]) if r[5] else r[4],
        author=r[1],
        date=r[2],
        extra=_extra(r[6]),
        missing=_missing(r[7]),
    )


def cot_annotations(lib: Library, cot_pk: int) -> list[Annotation]:
    """The annotations of one generated CoT, whole, in stored order."""
    return [
        _annotation(r)
        for r in lib.conn.execute(
            f"SELECT {_ANNOTATION_COLS} FROM annotation WHERE cot_pk = ? ORDER BY position", (cot_pk,)
        )
    ]


def _build(
    lib: Library, rows: list[tuple], *, annotations: bool = True, annotation_chars: int | None = None
) -> list[StoredSample]:
    if not rows:
        return []
    pks = [r[0] for r in rows]
    marks = ",".join("?" * len(pks))
    cots_by_sample: dict[int, list[tuple[int, GeneratedCot]]] = {pk: [] for pk in pks}
    cot_rows = lib.conn.execute(
        f"SELECT {_COT_COLS} FROM generated_cot WHERE sample_pk IN ({marks}) ORDER BY sample_pk, position",
        pks,
    ).fetchall()
    cots: dict[int, GeneratedCot] = {}
    cut: dict[int, int] = {}
    for r in cot_rows:
        cot = GeneratedCot(
            id=r[2],
            fragments_version=r[3],
            instruction=r[4],
            cot_trigger=r[5],
            cot_trigger_template=r[6],
            prompt_text=r[7],
            cot=r[8],
            author=r[9],
            date=r[10],
            api_service=r[11],
            model=r[12],
            comment=r[13],
            extra=_extra(r[14]),
            missing=_missing(r[15]),
            reasoning=r[16],
            finish_reason=r[17],
            reasoning_tokens=r[18],
        )
        cots[r[0]] = cot
        cots_by_sample[r[1]].append((r[0], cot))
    if cots:
        cot_marks = ",".join("?" * len(cots))
        for r in lib.conn.execute(
            f"SELECT {_ANSWER_COLS} FROM answer WHERE cot_pk IN ({cot_marks}) ORDER BY cot_pk, position",
            list(cots),
        ):
            cots[r[0]].answers.append(
                Answer(
                    id=r[1],
                    answer_extraction=r[2],
                    answer_extraction_template=r[3],
                    answer_extraction_text=r[4],
                    answer=r[5],
                    correct_answer=None if r[6] is None else bool(r[6]),
                    extra=_answer_extra(r[7], cots[r[0]].cot),
                    missing=_missing(r[8]),
                    scoring=_scoring(r),
                )
            )
        columns, params = _ANNOTATION_COLS + ", 0", list(cots)
        if annotation_chars is not None:  # text values cut (JSON ones whole: cut, they would not decode)
            columns = _ANNOTATION_COLS.replace(
                "value,", "CASE WHEN value_is_json THEN value ELSE substr(value, 1, ?) END,"
            )
            columns += ", CASE WHEN value_is_json THEN 0 ELSE max(0, length(value) - ?) END"
            params = [annotation_chars, annotation_chars, *params]
        for r in (
            lib.conn.execute(
                f"SELECT {columns} FROM annotation WHERE cot_pk IN ({cot_marks}) ORDER BY cot_pk, position", params
            )
            if annotations
            else ()
        ):
            cots[r[0]].annotations.append(_annotation(r))
            if r[8]:
                cut[r[0]] = cut.get(r[0], 0) + r[8]
    out = []
    for r in rows:
        pairs = cots_by_sample[r[0]]
        sample = Sample(
            id=r[3],
            ref_id=r[4],
            question=r[5],
            type=r[6],
            choices=_loads(r[7]),
            context=r[8],
            cot=_loads(r[9]),
            answer=_loads(r[10]),
            feedback=_loads(r[11]),
            generated_cot=[c for _, c in pairs],
            extra=_extra(r[12]),
            missing=_missing(r[13]),
        )
        pks_of = [pk for pk, _ in pairs]
        out.append(StoredSample(r[0], r[1], r[2], sample, pks_of, {pk: cut[pk] for pk in pks_of if pk in cut}))
    return out


def load_sample(
    lib: Library, pk: int, *, annotations: bool = True, annotation_chars: int | None = None
) -> StoredSample | None:
    """One sample with its generated CoTs, answers and annotations (none without
    ``annotations``: the Review tab reads them its own way, once), or None if it is gone.
    ``annotation_chars``: text values are read cut to that many characters, what was left out
    counted in ``annotations_cut`` (a view's read: a 10 MB comment is not read to show 20,000)."""
    rows = lib.conn.execute(f"SELECT {_SAMPLE_COLS} FROM sample WHERE id = ?", (pk,)).fetchall()
    built = _build(lib, rows, annotations=annotations, annotation_chars=annotation_chars)
    return built[0] if built else None


def iter_split(lib: Library, collection_id: int, dataset: str, split: str) -> Iterator[Sample]:
    """The samples of one dataset split, in stored order, a chunk at a time."""
    for stored in iter_stored_split(lib, collection_id, dataset, split):
        yield stored.sample


def iter_stored_split(lib: Library, collection_id: int, dataset: str, split: str) -> Iterator[StoredSample]:
    """:func:`iter_split` with the row keys (the sample's and its CoTs'), for exports that add
    rows of other tables (critiques) to each CoT."""
    last = -1
    while True:
        rows = lib.conn.execute(
            f"SELECT {_SAMPLE_COLS}, position FROM sample WHERE collection_id = ? AND dataset = ? "
            "AND split = ? AND position > ? ORDER BY position LIMIT ?",
            (collection_id, dataset, split, last, CHUNK),
        ).fetchall()
        if not rows:
            return
        last = rows[-1][-1]
        yield from _build(lib, [r[:-1] for r in rows])


def iter_collection(lib: Library, collection_id: int) -> Iterator[tuple[str, str, Iterator[Sample]]]:
    """(dataset, split, samples) for every split, grouped by dataset in first-stored order."""
    order: dict[str, list[str]] = {}
    for dataset, split in lib.splits(collection_id):
        order.setdefault(dataset, []).append(split)
    for dataset, splits in order.items():
        for split in splits:
            yield dataset, split, iter_split(lib, collection_id, dataset, split)
