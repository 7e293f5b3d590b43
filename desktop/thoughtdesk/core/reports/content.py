"""What a review report holds, read from the library: the scope's samples, each with its CoTs,
reviews, critiques and similarity groups, and the summary (counts, label frequencies,
agreement between reviewers, accuracy per model).

No HTML here: :mod:`thoughtdesk.core.reports.html` turns these records into the report.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from thoughtdesk.core.critiques import Critique, ExplanationRating, critiques_for_cots, explanation_ratings_for_cots
from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.evaluation.evaluate import condition_label, evaluate
from thoughtdesk.core.evaluation.metrics import AccuracyRow, accuracy_table
from thoughtdesk.core.library.queries import SampleFilter, sample_keys
from thoughtdesk.core.library.reader import StoredSample, load_sample
from thoughtdesk.core.library.records import model_name
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.reports.escape import DEFAULT_MAX_CHARS, cut
from thoughtdesk.core.review import CotReview, StoredAnnotation, label_sets, list_queues, review_from
from thoughtdesk.core.review.agreement import AgreementRow, agreement_rows, label_ratings
from thoughtdesk.core.review.annotations import row_to_annotation
from thoughtdesk.core.review.compare.similarity import DEFAULT_THRESHOLD, align_sentences
from thoughtdesk.core.sentences import Span as SentenceSpan

#: A check of the caller's Cancel button, and a progress report (done, total).
CancelCheck = Callable[[], bool]
Progress = Callable[[int, int], None]

_CHUNK = 900  # SQLite's default limit on bound parameters is 999


class ReportError(ThoughtDeskError):
    """A report cannot be made as asked (no such queue, a sample outside the collection...)."""


@dataclass(frozen=True, slots=True)
class ReportScope:
    """Which samples a report covers and whose reviews it shows.

    ``collection`` by name; ``queue`` a review queue's name (its samples, in its order);
    ``sample_pks`` a selection (sample primary keys, in this order); neither: the whole
    collection in the Samples tab's order. ``author`` shows only that reviewer's labels, spans,
    comments, marks, scores and ratings (agreement is always between every reviewer).
    """

    collection: str
    queue: str | None = None
    sample_pks: tuple[int, ...] | None = None
    author: str | None = None

    def describe(self) -> str:
        """The scope in words, for the report's first page."""
        if self.queue:
            what = f"review queue {self.queue!r} of collection {self.collection!r}"
        elif self.sample_pks is not None:
            what = f"{len(self.sample_pks)} selected sample(s) of collection {self.collection!r}"
        else:
            what = f"collection {self.collection!r}"
        return what + (f", reviews by {self.author!r} only" if self.author else ", reviews by every reviewer")


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """How a report is drawn: ``max_text_chars`` cuts every text (question, context, CoT,
    comment, critique) at that many characters, with a note (0: never); ``threshold`` is the
    similarity highlighting's threshold in percent, as the Review tab's slider."""

    max_text_chars: int = DEFAULT_MAX_CHARS
    threshold: float = DEFAULT_THRESHOLD


@dataclass(slots=True)
class CotEntry:
    """One CoT of a sample as the report shows it.

    ``text`` is the displayed text (cut at the limit; a reference CoT one step per line),
    ``full_length`` the length before cutting; ``sentences`` spans into ``text`` and
    ``group_of`` each sentence's similarity group (None: in no group). ``pk`` is None for the
    dataset's reference CoT, which has no reviews or critiques.
    """

    title: str
    pk: int | None
    text: str
    full_length: int
    sentences: tuple[SentenceSpan, ...] = ()
    group_of: tuple[int | None, ...] = ()
    model: str = ""
    condition: str = ""
    answer: str | None = None
    correct: bool | None = None
    reviews: list[CotReview] = field(default_factory=list)
    critiques: list[Critique] = field(default_factory=list)
    ratings: list[ExplanationRating] = field(default_factory=list)


@dataclass(slots=True)
class SampleEntry:
    """One sample of the report: where it is from, its question and gold answer, its CoTs."""

    index: int
    total: int
    pk: int
    dataset: str
    split: str
    sample_id: str
    question: str
    context: str
    answer_type: str
    choices: list[str]
    gold: list[str]
    cots: list[CotEntry]


@dataclass(frozen=True, slots=True)
class LabelCount:
    """How often a label was given in the scope: whole-CoT labels (CoTs, counted once per
    reviewer), span marks, and by how many reviewers."""

    label: str
    cots: int
    spans: int
    reviewers: int


@dataclass(slots=True)
class ReportSummary:
    """The report's first page."""

    collection: str
    scope: str
    created: str
    samples: int
    cots: int
    reference_cots: int
    annotations: int
    reviewed_cots: int
    reviewers: list[str]
    preferred: int
    quality_scores: int
    critiques: int
    labels: list[LabelCount]
    agreement: list[AgreementRow]
    accuracy_by_model: list[AccuracyRow]
    accuracy_rows: list[AccuracyRow]
    answers: int
    scored_answers: int
    label_colours: dict[str, str]
    #: Ratings of explanations (score or flaw dimensions) and critiques rated, in the scope.
    explanation_ratings: int = 0
    rated_critiques: int = 0


def now_text() -> str:
    """The report's time stamp (UTC, to the minute)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


# Scope ---------------------------------------------------------------------------------------


def resolve_samples(lib: Library, scope: ReportScope) -> list[int]:
    """The sample keys of ``scope`` in report order; :class:`ReportError` naming what is wrong."""
    collection_id = lib.require_collection(scope.collection)
    if scope.queue is not None and scope.sample_pks is not None:
        raise ReportError("a report covers a review queue or a selection of samples, not both")
    if scope.queue is not None:
        queues = [q for q in list_queues(lib, collection_id) if q.name == scope.queue]
        if not queues:
            names = ", ".join(repr(q.name) for q in list_queues(lib, collection_id)) or "none"
            raise ReportError(
                f"collection {scope.collection!r} has no review queue named {scope.queue!r} (queues: {names})"
            )
        return list(queues[0].sample_pks)
    if scope.sample_pks is not None:
        wanted = list(dict.fromkeys(scope.sample_pks))
        found: set[int] = set()
        for chunk in _chunks(wanted):
            marks = ",".join("?" * len(chunk))
            found.update(
                row[0]
                for row in lib.conn.execute(
                    f"SELECT id FROM sample WHERE collection_id = ? AND id IN ({marks})", [collection_id, *chunk]
                )
            )
        missing = [pk for pk in wanted if pk not in found]
        if missing:
            raise ReportError(
                f"{len(missing)} selected sample(s) are not in collection {scope.collection!r} "
                f"(first: sample key {missing[0]}); select the samples again"
            )
        return wanted
    return list(sample_keys(lib, SampleFilter(collection_id=collection_id)))


def _chunks(values: Sequence[int]) -> Iterator[Sequence[int]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start : start + _CHUNK]


def _annotations(lib: Library, cot_pks: Sequence[int]) -> dict[int, list[StoredAnnotation]]:
    out: dict[int, list[StoredAnnotation]] = {}
    for chunk in _chunks(cot_pks):
        marks = ",".join("?" * len(chunk))
        for row in lib.conn.execute(
            "SELECT id, cot_pk, author, date, key, value, value_is_json, extra FROM annotation "
            f"WHERE cot_pk IN ({marks}) ORDER BY cot_pk, position, id",
            list(chunk),
        ):
            out.setdefault(row[1], []).append(row_to_annotation(row))
    return out


def _reviews(cot_pk: int, notes: list[StoredAnnotation], author: str | None) -> list[CotReview]:
    """Every reviewer's (or ``author``'s) review of a CoT that says something, by author name."""
    authors = sorted({note.author for note in notes if author is None or note.author == author})
    reviews = [review_from(cot_pk, who, notes) for who in authors]
    return [review for review in reviews if review.touched]


def _cot_pks(lib: Library, sample_pks: Sequence[int]) -> tuple[list[int], int]:
    """The generated CoT keys of the samples, and how many samples have a reference CoT."""
    cots: list[int] = []
    references = 0
    for chunk in _chunks(sample_pks):
        marks = ",".join("?" * len(chunk))
        cots.extend(
            row[0]
            for row in lib.conn.execute(f"SELECT id FROM generated_cot WHERE sample_pk IN ({marks})", list(chunk))
        )
        references += lib.conn.execute(
            f"SELECT count(*) FROM sample WHERE id IN ({marks}) AND cot IS NOT NULL AND cot NOT IN ('', '[]', 'null')",
            list(chunk),
        ).fetchone()[0]
    return cots, references


# Summary -------------------------------------------------------------------------------------


def label_colours(lib: Library) -> dict[str, str]:
    """Label key -> its colour in the library's label sets (the first set naming it wins)."""
    colours: dict[str, str] = {}
    for label_set in label_sets(lib):
        for label in label_set.labels:
            colours.setdefault(label.key, label.colour)
    return colours


def build_summary(lib: Library, scope: ReportScope, sample_pks: Sequence[int]) -> ReportSummary:
    """Counts, label frequencies, agreement and accuracy per model over ``sample_pks``."""
    cot_pks, references = _cot_pks(lib, sample_pks)
    notes = _annotations(lib, cot_pks)
    everyone = sorted({note.author for found in notes.values() for note in found})
    shown_notes = sum(
        1 for found in notes.values() for note in found if not scope.author or note.author == scope.author
    )
    label_cots: Counter[str] = Counter()
    label_spans: Counter[str] = Counter()
    label_people: dict[str, set[str]] = {}
    reviewed: set[int] = set()
    preferred = quality = 0
    for cot_pk, found in notes.items():
        for review in _reviews(cot_pk, found, scope.author):
            reviewed.add(cot_pk)
            preferred += review.preferred
            quality += review.quality is not None
            for label, on in review.labels.items():
                if on:
                    label_cots[label] += 1
                    label_people.setdefault(label, set()).add(review.author)
            for label, _span in review.spans:
                label_spans[label] += 1
                label_people.setdefault(label, set()).add(review.author)
    labels = [
        LabelCount(label, label_cots[label], label_spans[label], len(label_people.get(label, ())))
        for label in sorted(set(label_cots) | set(label_spans), key=lambda k: (-label_cots[k] - label_spans[k], k))
    ]
    # Agreement is between reviewers: everyone's annotations whatever the author filter, read
    # as Review > Agreement reads them (agreement_table: a span label counts for its CoT).
    ratings = label_ratings(
        (note.author, str(cot_pk), note.key, note.value) for cot_pk, found in notes.items() for note in found
    )
    agreement = [row for row in agreement_rows(ratings) if len(row.raters) >= 2 and row.n_items > 0]
    critiques = critiques_for_cots(lib, cot_pks, for_view=True)
    n_critiques = sum(len(found) for found in critiques.values())
    # A review is any of a reviewer's kinds of judgement, not only annotations: a rating of the
    # explanation (score, flaw dimensions) and a rating of a critique of it count too (page 1
    # said "Reviewed CoTs 0, Reviewers: none" above pages of ratings).
    raters: set[str] = set(everyone)
    explanation_ratings = rated_critiques = 0
    for cot_pk, found_ratings in explanation_ratings_for_cots(lib, cot_pks).items():
        for rating in found_ratings:
            if (rating.score is not None or rating.dimensions) and (not scope.author or rating.author == scope.author):
                explanation_ratings += 1
                reviewed.add(cot_pk)
                raters.add(rating.author)
    for cot_pk, found_critiques in critiques.items():
        for critique in found_critiques:
            mine = [
                r for r in critique.ratings if r.score is not None and (not scope.author or r.author == scope.author)
            ]
            if mine:
                rated_critiques += 1
                reviewed.add(cot_pk)
                raters.update(r.author for r in mine)
    by_model, rows, scored = _accuracy(lib, scope.collection, set(sample_pks))
    return ReportSummary(
        collection=scope.collection,
        scope=scope.describe(),
        created=now_text(),
        samples=len(sample_pks),
        cots=len(cot_pks),
        reference_cots=references,
        annotations=shown_notes,
        reviewed_cots=len(reviewed),
        reviewers=[scope.author] if scope.author else sorted(raters),
        explanation_ratings=explanation_ratings,
        rated_critiques=rated_critiques,
        preferred=preferred,
        quality_scores=quality,
        critiques=n_critiques,
        labels=labels,
        agreement=agreement,
        accuracy_by_model=by_model,
        accuracy_rows=rows,
        answers=_count_answers(lib, cot_pks),
        scored_answers=scored,
        label_colours=label_colours(lib),
    )


def _accuracy(lib: Library, collection: str, in_scope: set[int]) -> tuple[list[AccuracyRow], list[AccuracyRow], int]:
    """Accuracy per model (every condition and dataset pooled), per dataset x split x model x
    condition, and the number of scored answers, over the scope's samples, computed as the
    Results tab computes it (:func:`~thoughtdesk.core.evaluation.evaluate.evaluate`)."""
    result = evaluate(lib, collection, comparisons=False)
    answers = [a for a in result.answers if result.sample_pks.get(a.sample_id) in in_scope]
    rows = accuracy_table(answers)
    pooled = accuracy_table(replace(a, dataset="", split="", condition="") for a in answers)
    return pooled, rows, len(answers)


def _count_answers(lib: Library, cot_pks: Sequence[int]) -> int:
    total = 0
    for chunk in _chunks(cot_pks):
        marks = ",".join("?" * len(chunk))
        total += lib.conn.execute(f"SELECT count(*) FROM answer WHERE cot_pk IN ({marks})", list(chunk)).fetchone()[0]
    return total


# Samples -------------------------------------------------------------------------------------


def _text_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value]
    return [value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)]


def _cut_steps(steps: list[str], limit: int) -> tuple[list[str], int]:
    """Reference steps cut so that their joined text is at most ``limit`` characters."""
    total = sum(len(step) for step in steps) + max(0, len(steps) - 1)
    if limit <= 0 or total <= limit:
        return steps, total
    kept: list[str] = []
    used = 0
    for step in steps:
        room = limit - used - (1 if kept else 0)
        if room <= 0:
            break
        kept.append(step[:room])
        used += len(kept[-1]) + (1 if len(kept) > 1 else 0)
    return kept, total


def sample_entry(
    lib: Library, stored: StoredSample, index: int, total: int, scope: ReportScope, options: ReportOptions
) -> SampleEntry:
    """One sample's part of the report: texts cut at the limit, similarity groups of its CoTs
    (reference first, as in Review), every reviewer's (or the author's) review and critiques."""
    sample = stored.sample
    limit = options.max_text_chars
    pairs = list(zip(stored.cot_pks, sample.generated_cot, strict=False))
    inputs: list[str | list[str]] = []
    entries: list[CotEntry] = []
    steps = _text_list(sample.cot)
    if steps:
        kept, length = _cut_steps(steps, limit)
        inputs.append(kept)
        entries.append(CotEntry("Reference CoT (from the dataset)", None, "", length))
    notes = _annotations(lib, stored.cot_pks)
    critiques = critiques_for_cots(lib, stored.cot_pks)
    ratings = explanation_ratings_for_cots(lib, stored.cot_pks)
    for number, (cot_pk, cot) in enumerate(pairs, start=1):
        text = cot.cot or ""
        shown, _left_out = cut(text, limit)
        inputs.append(shown)
        answer = cot.answers[0] if cot.answers else None
        entries.append(
            CotEntry(
                title=f"CoT {number}",
                pk=cot_pk,
                text="",
                full_length=len(text),
                model=model_name(cot.model),
                condition=condition_label(
                    cot.instruction, cot.cot_trigger, answer.answer_extraction if answer is not None else None
                ),
                answer=answer.answer if answer is not None else None,
                correct=answer.correct_answer if answer is not None else None,
                reviews=_reviews(cot_pk, notes.get(cot_pk, []), scope.author),
                critiques=critiques.get(cot_pk, []),
                ratings=[r for r in ratings.get(cot_pk, []) if not scope.author or r.author == scope.author],
            )
        )
    alignment = align_sentences(inputs, options.threshold) if inputs else None
    for position, entry in enumerate(entries):
        if alignment is not None:
            entry.text = alignment.texts[position]
            entry.sentences = alignment.sentences[position]
            entry.group_of = alignment.group_of[position]
    return SampleEntry(
        index=index,
        total=total,
        pk=stored.pk,
        dataset=stored.dataset,
        split=stored.split,
        sample_id=sample.id,
        question=sample.question or "",
        context=sample.context or "",
        answer_type=sample.type or "",
        choices=_text_list(sample.choices),
        gold=_text_list(sample.answer),
        cots=entries,
    )


def iter_samples(
    lib: Library,
    scope: ReportScope,
    sample_pks: Sequence[int],
    options: ReportOptions,
    *,
    progress: Progress | None = None,
    cancel: CancelCheck | None = None,
) -> Iterator[SampleEntry]:
    """The scope's samples one by one (a sample deleted meanwhile is skipped); ``cancel()``
    is checked before each one (:class:`~thoughtdesk.core.errors.Cancelled`)."""
    total = len(sample_pks)
    for index, pk in enumerate(sample_pks, start=1):
        if cancel is not None and cancel():
            raise Cancelled("the report")
        stored = load_sample(lib, pk)
        if stored is not None:
            yield sample_entry(lib, stored, index, total, scope, options)
        if progress is not None:
            progress(index, total)
