"""Statistics of a stored collection, per dataset and split, in one streaming pass.

Rows are read a chunk at a time with keyset paging on the row id (``CHUNK`` samples of the
collection, then their generated CoTs), so memory holds one chunk of text, the token lengths
(4 bytes per text) and, with overlap, each unit's distinct n-gram hashes (8 bytes each). What a token is, and the n-grams: see
:mod:`thoughtdesk.core.stats.tokens`; the overlap measures: :mod:`thoughtdesk.core.stats.overlap`.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from thoughtdesk.core.errors import Cancelled
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.stats.overlap import NgramSet, OverlapMatrix, overlap_matrix
from thoughtdesk.core.stats.tokens import NgramHasher, token_count, tokens

CHUNK = 2000
#: The texts whose token lengths are counted, in the order tables and plots show them.
LENGTH_FIELDS = ("question", "context", "reference_cot", "generated_cot")
#: The texts whose n-gram overlap can be computed: questions and reference CoTs (the dataset's
#: own text; generated CoTs share a model's phrasing across datasets, which is not leakage).
OVERLAP_FIELDS = ("question", "reference_cot")
DEFAULT_N = 8
#: Percentiles of each length summary.
PERCENTILES = (5, 25, 50, 75, 95)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class LengthSummary:
    """Token lengths of the non-empty texts of one field (empty or missing texts not counted)."""

    count: int
    mean: float
    minimum: int
    maximum: int
    percentiles: dict[int, float]

    @staticmethod
    def of(lengths: np.ndarray) -> LengthSummary:
        if len(lengths) == 0:
            return LengthSummary(0, 0.0, 0, 0, {p: 0.0 for p in PERCENTILES})
        values = np.percentile(lengths, PERCENTILES)  # linear interpolation, numpy's default
        return LengthSummary(
            int(len(lengths)),
            float(lengths.mean()),
            int(lengths.min()),
            int(lengths.max()),
            {p: float(v) for p, v in zip(PERCENTILES, values, strict=True)},
        )

    def to_json(self) -> dict:
        return {
            "count": self.count,
            "mean": round(self.mean, 3),
            "min": self.minimum,
            "max": self.maximum,
            **{f"p{p}": round(v, 3) for p, v in self.percentiles.items()},
        }


@dataclass
class SplitStatistics:
    """Counts and distributions of one dataset split."""

    dataset: str
    split: str
    samples: int = 0
    generated_cots: int = 0
    answers: int = 0
    annotations: int = 0
    with_context: int = 0
    with_reference_cot: int = 0
    with_generated_cot: int = 0
    #: answer type ("multiplechoice", "number", ...; "" when none is stored) -> samples
    answer_types: dict[str, int] = field(default_factory=dict)
    #: number of choices (0: none) -> samples
    choice_counts: dict[int, int] = field(default_factory=dict)
    lengths: dict[str, LengthSummary] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "dataset": self.dataset,
            "split": self.split,
            "samples": self.samples,
            "generated_cots": self.generated_cots,
            "answers": self.answers,
            "annotations": self.annotations,
            "with_context": self.with_context,
            "with_reference_cot": self.with_reference_cot,
            "with_generated_cot": self.with_generated_cot,
            "answer_types": dict(sorted(self.answer_types.items())),
            "choice_counts": {str(k): v for k, v in sorted(self.choice_counts.items())},
            "token_lengths": {name: self.lengths[name].to_json() for name in LENGTH_FIELDS},
        }


@dataclass
class CollectionStatistics:
    """The statistics of a collection; ``overlap`` empty unless asked for."""

    collection: str
    splits: list[SplitStatistics]
    overlap: list[OverlapMatrix] = field(default_factory=list)
    overlap_by: str = "dataset"

    def to_json(self) -> dict:
        """Everything as plain JSON data (what ``thoughtdesk stats --json`` prints)."""
        out: dict = {
            "collection": self.collection,
            "tokens": "words: maximal runs of Unicode letters, digits and _ (see docs/stats.md)",
            "splits": [s.to_json() for s in self.splits],
        }
        if self.overlap:
            out["overlap"] = {
                "by": self.overlap_by,
                "normalisation": "case-folded; punctuation and whitespace dropped (word tokens)",
                "fields": [m.to_json() for m in self.overlap],
            }
        return out


def _reference_text(stored: str | None) -> str | None:
    """The reference CoT column (JSON: a list of steps, or a string) as one text."""
    if not stored:
        return None
    value = json.loads(stored)
    if isinstance(value, list):
        return " ".join(str(step) for step in value if step) or None
    return str(value) if value else None


class _Lengths:
    """Token lengths gathered a chunk at a time (int32)."""

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []

    def add(self, lengths: list[int]) -> None:
        if lengths:
            self.parts.append(np.array(lengths, dtype=np.int32))

    def summary(self) -> LengthSummary:
        return LengthSummary.of(np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.int32))


def collection_statistics(
    lib: Library,
    collection: str,
    *,
    overlap: bool = False,
    n: int = DEFAULT_N,
    overlap_by: str = "dataset",
    overlap_fields: tuple[str, ...] = OVERLAP_FIELDS,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> CollectionStatistics:
    """Counts, answer types, choice counts and token lengths per dataset split of ``collection``;
    with ``overlap``, the n-gram overlap of questions and of reference CoTs between datasets
    (``overlap_by="dataset"``) or between dataset splits (``"split"``); ``overlap_fields`` chooses
    among the two.

    ``progress(done, total)`` counts samples read; ``cancel()`` is checked after every chunk and
    stops with :class:`Cancelled` (nothing is written either way).
    """
    started = time.monotonic()
    if not set(overlap_fields) <= set(OVERLAP_FIELDS):
        raise ValueError(f"overlap_fields must be among {OVERLAP_FIELDS}, not {overlap_fields!r}")
    if overlap_by not in ("dataset", "split"):
        raise ValueError(f"overlap_by must be 'dataset' or 'split', not {overlap_by!r}")
    cid = lib.require_collection(collection)
    counts = lib.split_stats(cid)
    total = sum(c.samples for c in counts)
    hasher = NgramHasher(n) if overlap else None
    sets: dict[str, dict[str, NgramSet]] = {f: {} for f in overlap_fields}
    parts: dict[tuple[str, str], _Split] = {}

    def part(dataset: str, split: str) -> _Split:
        key = (dataset, split)
        if key not in parts:
            unit = dataset if overlap_by == "dataset" else f"{dataset}/{split}"
            parts[key] = _Split(
                SplitStatistics(dataset, split), {f: sets[f].setdefault(unit, NgramSet()) for f in overlap_fields}
            )
        return parts[key]

    for c in counts:  # in first-stored order: the order of the tables and of the overlap units
        stats = part(c.dataset, c.split).stats
        stats.generated_cots, stats.answers, stats.annotations = c.generated_cots, c.answers, c.annotations
    done = 0
    last = -1
    while True:
        # Keyset paging over the whole collection by row id (the sample_collection index holds
        # (collection_id, rowid)): every chunk a range scan, whatever the collection's size.
        rows = lib.conn.execute(
            "SELECT id, dataset, split, question, type, "
            # The choices counted by SQLite (JSON1): no Python parse of every list.
            "CASE json_type(choices) WHEN 'array' THEN json_array_length(choices) "
            "WHEN 'object' THEN (SELECT count(*) FROM json_each(choices)) ELSE 0 END, "
            "context, cot FROM sample WHERE collection_id = ? AND id > ? ORDER BY id LIMIT ?",
            (cid, last, CHUNK),
        ).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        groups: dict[tuple[str, str], list[tuple]] = {}
        for row in rows:
            groups.setdefault((row[1], row[2]), []).append(row)
        pks = [r[0] for r in rows]
        marks = ",".join("?" * len(pks))
        generated = lib.conn.execute(
            f"SELECT sample_pk, cot FROM generated_cot WHERE sample_pk IN ({marks})", pks
        ).fetchall()
        split_of = {r[0]: (r[1], r[2]) for r in rows}
        cots: dict[tuple[str, str], list[tuple[int, str | None]]] = {}
        for pk, cot in generated:
            cots.setdefault(split_of[pk], []).append((pk, cot))
        for key, group in groups.items():
            # part(): a split another process stored since the counts were read is added at the end.
            part(*key).add(group, cots.get(key, []), hasher)
        done += len(rows)
        if progress is not None:
            progress(done, total)
        if cancel is not None and cancel():
            raise Cancelled("statistics")
    splits = [part.finish() for part in parts.values()]
    matrices = [overlap_matrix(f, n, sets[f]) for f in overlap_fields] if overlap else []
    logging.getLogger(__name__).info(
        "statistics of %r: %d sample(s) in %d dataset split(s)%s in %.2f s",
        collection,
        done,
        len(splits),
        f", {n}-gram overlap by {overlap_by}" if overlap else "",
        time.monotonic() - started,
    )
    return CollectionStatistics(collection, splits, matrices, overlap_by)


class _Split:
    """What one dataset split gathers while the chunks go by."""

    def __init__(self, stats: SplitStatistics, unit_sets: dict[str, NgramSet]) -> None:
        self.stats = stats
        self.unit_sets = unit_sets
        self.lengths = {name: _Lengths() for name in LENGTH_FIELDS}
        self.types: Counter[str] = Counter()
        self.choices: Counter[int] = Counter()

    def add(self, rows: list[tuple], generated: list[tuple[int, str | None]], hasher: NgramHasher | None) -> None:
        """One chunk's rows of this split (id, dataset, split, question, type, choices, context,
        cot) and their generated CoTs (sample_pk, cot)."""
        stats, lengths = self.stats, self.lengths
        stats.samples += len(rows)  # counted as read: consistent with the distributions
        questions = [r[3] for r in rows]
        references = [_reference_text(r[7]) for r in rows]
        contexts = [r[6] for r in rows]
        self.types.update(r[4] or "" for r in rows)
        self.choices.update(r[5] for r in rows)
        stats.with_context += sum(1 for t in contexts if t)
        stats.with_reference_cot += sum(1 for t in references if t)
        lengths["context"].add([token_count(t) for t in contexts if t])
        if hasher is None:
            lengths["question"].add([token_count(t) for t in questions if t])
            lengths["reference_cot"].add([token_count(t) for t in references if t])
        else:  # split once, for both the lengths and the n-grams
            for name, texts in (("question", questions), ("reference_cot", references)):
                if name not in self.unit_sets:
                    lengths[name].add([token_count(t) for t in texts if t])
                    continue
                split = [tokens(t) for t in texts]
                lengths[name].add([len(toks) for t, toks in zip(texts, split, strict=True) if t])
                self.unit_sets[name].add(hasher.hashes_of_tokens(split))
        lengths["generated_cot"].add([token_count(t) for _, t in generated if t])
        stats.with_generated_cot += len({pk for pk, _ in generated})

    def finish(self) -> SplitStatistics:
        self.stats.answer_types = dict(self.types)
        self.stats.choice_counts = dict(self.choices)
        self.stats.lengths = {name: self.lengths[name].summary() for name in LENGTH_FIELDS}
        return self.stats
