"""Critiques analysed: per critique model, per student condition, agreement (docs/critiques-analysis.md).

:func:`load_critique_data` reads a collection's critiques, the correctness of the CoTs they judge,
and the human ratings in four queries; :func:`analyse` turns them into a
:class:`CritiqueAnalysis` without touching the library (pure, fast for 10,000+ critiques).

The student *condition* is the evaluation's (``core.evaluation.evaluate``): dataset, split, the
CoT's model name and the prompt condition (instruction / CoT trigger / answer extraction of the
CoT's first answer). A CoT is *correct* when its first answer is (ThoughtDesk's re-scored outcome
where there is one, else the imported ``correct_answer``); an unextractable answer counts as
not correct, as in the evaluation's comparisons; a CoT without a scored answer is left out of
the AUROC.

Where a critique model judged one CoT several times, agreement uses the mean of its scores on
that CoT and its first critique's dimension. A human rater who rated a CoT (or a critique)
several times counts with their last rating; the human explanation score of a CoT is the mean
over its raters.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from thoughtdesk.core.agreement.statistics import Level, auroc, kendall, krippendorff_alpha, spearman
from thoughtdesk.core.critiques.records import DIMENSIONS
from thoughtdesk.core.evaluation.evaluate import GUIDE_SQL, UNKNOWN_MODEL, condition_label
from thoughtdesk.core.evaluation.metrics import mean_interval
from thoughtdesk.core.library.records import THOUGHTSOURCE_UNEXTRACTABLE_SQL
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.judge import ProcessScore, process_scores

#: The name under which the human explanation scores are compared with each critique model.
HUMAN = "human raters (mean)"
#: Scores are counted in these bins (a score is rounded to the nearest whole number).
SCORE_BINS = tuple(range(0, 6))

StudentKey = tuple[str, str, str, str]  # dataset, split, model, condition (as AccuracyRow.key)


@dataclass(frozen=True, slots=True)
class CritiqueFact:
    """One stored critique, as the analysis needs it.

    ``score`` is the parsed explanation score (None when missing or unparseable); ``correct`` is
    the judged CoT's correctness (None when its answer is not scored).
    """

    critique_pk: int
    cot_pk: int
    critique_model: str
    dimension: str | None
    score: float | None
    student: StudentKey
    correct: bool | None


@dataclass
class CritiqueData:
    """What :func:`analyse` reads: critiques, and the human ratings as (item, author, score)."""

    collection: str
    critiques: list[CritiqueFact] = field(default_factory=list)
    #: (critique pk, author, score 0-3) of every human critique rating with a score.
    critique_ratings: list[tuple[int, str, int]] = field(default_factory=list)
    #: (CoT pk, author, score 0-5) of every human explanation rating with a score, in stored order.
    explanation_ratings: list[tuple[int, str, int]] = field(default_factory=list)
    #: Step judges (ProcessBench preset) against the reference first errors, by judge model.
    process: dict[str, ProcessScore] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CritiqueModelRow:
    """One critique model's critiques.

    ``n`` critiques, ``n_scored`` of them with a parsed explanation score; the mean score with
    its Student-t 95 % interval (``score_low``..``score_high``, clipped to the 0-5 scale); ``dimensions`` counts critiques
    per flaw dimension (the 8 DS names in order, then any other name stored), ``no_dimension``
    those naming none; ``score_counts`` the scores 0..5 (rounded); ``mean_critique_score`` the
    mean of the human ratings (0-3) of its critiques, each rater's last rating of a critique
    counting once, over ``n_critique_ratings`` such ratings (None when there are none).
    """

    model: str
    n: int
    n_scored: int
    mean_explanation_score: float | None
    score_low: float | None
    score_high: float | None
    dimensions: dict[str, int]
    no_dimension: int
    score_counts: tuple[int, ...]
    mean_critique_score: float | None
    n_critique_ratings: int
    #: As a step judge (docs/steps.md): n, error_accuracy, correct_accuracy, f1, unparseable and
    #: the confusion of true vs judged first error; None when it judged no step list with a reference.
    process: ProcessScore | None = None


@dataclass(frozen=True, slots=True)
class StudentRow:
    """One critique model's critiques of one student condition (dataset, split, model, condition).

    ``dimension_shares``: share of the ``n`` critiques per dimension (``no_dimension`` the rest,
    so they add up to 1). ``auroc`` (with its Hanley-McNeil interval): how well the explanation
    score separates correct CoTs (``correct`` of them) from not correct ones (``incorrect``),
    over the critiques with both a score and a scored answer; 0.5 = no better than chance.
    """

    dataset: str
    split: str
    model: str
    condition: str
    critique_model: str
    n: int
    n_scored: int
    mean_explanation_score: float | None
    score_low: float | None
    score_high: float | None
    dimension_shares: dict[str, float]
    no_dimension: float
    correct: int
    incorrect: int
    auroc: float | None
    auroc_low: float | None
    auroc_high: float | None

    @property
    def student(self) -> StudentKey:
        return (self.dataset, self.split, self.model, self.condition)


@dataclass(frozen=True, slots=True)
class AgreementRow:
    """Agreement of two scorers on the CoTs both scored: ``first`` is a critique model, ``second``
    another one or :data:`HUMAN`.

    Spearman's rho and Kendall's tau-b on ``n`` paired scores, each with its Fisher-z 95 %
    interval; ``dimension_match``: share of the ``n_dimension`` CoTs both gave a dimension on
    where they gave the same one (None for humans, whose dimensions are a set per rater).
    """

    first: str
    second: str
    n: int
    spearman: float | None
    spearman_low: float | None
    spearman_high: float | None
    kendall: float | None
    kendall_low: float | None
    kendall_high: float | None
    n_dimension: int
    dimension_match: float | None


@dataclass(frozen=True, slots=True)
class HumanAgreement:
    """Krippendorff's alpha among human raters.

    Explanation scores (0-5) at the interval and ordinal levels over ``explanation_items`` CoTs
    rated by at least two of the ``explanation_raters``; critique scores (0-3) at the ordinal
    level over ``critique_items`` critiques. None where undefined (fewer than two ratings of any
    item, or no spread).
    """

    explanation_raters: int
    explanation_items: int
    explanation_alpha_interval: float | None
    explanation_alpha_ordinal: float | None
    critique_raters: int
    critique_items: int
    critique_alpha_ordinal: float | None


@dataclass(frozen=True, slots=True)
class ScorePoint:
    """A critique model's score of a CoT next to the mean human explanation score (the scatter)."""

    critique_model: str
    cot_pk: int
    critique_score: float
    human_score: float


@dataclass
class CritiqueAnalysis:
    """Everything the CLI and the Critiques view show for one collection."""

    collection: str
    n_critiques: int
    critique_models: list[CritiqueModelRow]
    students: list[StudentRow]
    agreement: list[AgreementRow]
    human: HumanAgreement
    points: list[ScorePoint]
    #: Student model -> dimension -> critiques (all critique models), "" for no dimension.
    dimensions_by_student_model: dict[str, dict[str, int]]
    #: The dimension names in display order: the 8 DS names, then others found.
    dimension_names: tuple[str, ...] = DIMENSIONS


# Reading ----------------------------------------------------------------------------------------


def _outcome(td_outcome: str | None, stored: int | None, graded_unextractable: int | None = None) -> bool | None:
    if td_outcome is not None:
        return td_outcome == "correct"
    if stored is not None:
        return bool(stored)
    if graded_unextractable:  # ThoughtSource's evaluate found nothing in it: not correct
        return False
    return None


def load_critique_data(lib: Library, collection: str) -> CritiqueData:
    """Read ``collection``'s critiques, their CoTs' conditions and correctness, and the human
    ratings (four queries). Raises :class:`~thoughtdesk.core.errors.ThoughtDeskError` naming an
    unknown collection."""
    cid = lib.require_collection(collection)
    conn = lib.conn
    first_answer: dict[int, tuple[str | None, bool | None]] = {}
    for cot_pk, extraction, td_outcome, stored, graded_unextractable in conn.execute(
        f"""SELECT a.cot_pk, a.answer_extraction, a.td_outcome, a.correct_answer, {THOUGHTSOURCE_UNEXTRACTABLE_SQL}
           FROM answer a WHERE a.cot_pk IN (
               SELECT c.cot_pk FROM critique c JOIN generated_cot g ON g.id = c.cot_pk
               JOIN sample s ON s.id = g.sample_pk WHERE s.collection_id = ?)
           ORDER BY a.cot_pk, a.position""",
        (cid,),
    ):
        if cot_pk not in first_answer:
            first_answer[cot_pk] = (extraction, _outcome(td_outcome, stored, graded_unextractable))
    data = CritiqueData(collection)
    conditions: dict[tuple, str] = {}
    for (
        pk,
        cot_pk,
        critique_model,
        dimension,
        score,
        dataset,
        split,
        model_name,
        model,
        instruction,
        trigger,
        guide,
    ) in conn.execute(
        f"""SELECT c.id, c.cot_pk, c.critique_model, c.dimension, c.explanation_score, s.dataset, s.split,
                      g.model_name, g.model, g.instruction, g.cot_trigger, {GUIDE_SQL}
               FROM critique c JOIN generated_cot g ON g.id = c.cot_pk JOIN sample s ON s.id = g.sample_pk
               WHERE s.collection_id = ? ORDER BY c.cot_pk, c.position""",
        (cid,),
    ):
        extraction, correct = first_answer.get(cot_pk, (None, None))
        parts = (instruction, trigger, extraction, guide)
        condition = conditions.get(parts)
        if condition is None:
            condition = conditions[parts] = condition_label(*parts)
        student = (dataset, split, model_name or model or UNKNOWN_MODEL, condition)
        value = None if score is None or (isinstance(score, float) and math.isnan(score)) else float(score)
        data.critiques.append(CritiqueFact(pk, cot_pk, critique_model, dimension or None, value, student, correct))
    data.critique_ratings = [
        (critique_pk, author, score)
        for critique_pk, author, score in conn.execute(
            """SELECT r.critique_pk, r.author, r.score FROM critique_rating r JOIN critique c ON c.id = r.critique_pk
               JOIN generated_cot g ON g.id = c.cot_pk JOIN sample s ON s.id = g.sample_pk
               WHERE s.collection_id = ? AND r.score IS NOT NULL ORDER BY r.critique_pk, r.position""",
            (cid,),
        )
    ]
    data.explanation_ratings = [
        (cot_pk, author, score)
        for cot_pk, author, score in conn.execute(
            """SELECT e.cot_pk, e.author, e.score FROM explanation_rating e JOIN generated_cot g ON g.id = e.cot_pk
               JOIN sample s ON s.id = g.sample_pk
               WHERE s.collection_id = ? AND e.score IS NOT NULL ORDER BY e.cot_pk, e.position""",
            (cid,),
        )
    ]
    data.process = process_scores(lib, cid)
    return data


def analyse_collection(lib: Library, collection: str) -> CritiqueAnalysis:
    """:func:`load_critique_data` then :func:`analyse`."""
    return analyse(load_critique_data(lib, collection))


# Analysis ---------------------------------------------------------------------------------------


def _clipped(value: float | None) -> float | None:
    """An interval end kept on the 0-5 scale (a t interval of few scores can run past it)."""
    return None if value is None else min(max(value, float(SCORE_BINS[0])), float(SCORE_BINS[-1]))


def score_bin(score: float) -> int:
    """A 0-5 score rounded to its whole bin (halves up), kept on the scale."""
    return min(max(int(math.floor(score + 0.5)), SCORE_BINS[0]), SCORE_BINS[-1])


def _dimension_names(critiques: Iterable[CritiqueFact]) -> tuple[str, ...]:
    others = sorted({c.dimension for c in critiques if c.dimension and c.dimension not in DIMENSIONS})
    return DIMENSIONS + tuple(others)


def last_per_author(ratings: Iterable[tuple[int, str, int]]) -> dict[int, dict[str, int]]:
    """Item -> author -> score, a later rating of the same author replacing an earlier one."""
    out: dict[int, dict[str, int]] = {}
    for item, author, score in ratings:
        out.setdefault(item, {})[author] = score
    return out


def _alpha(by_item: dict[int, dict[str, int]], level: Level) -> tuple[int, int, float | None]:
    raters = sorted({a for scores in by_item.values() for a in scores})
    items = [item for item, scores in by_item.items() if len(scores) >= 2]
    if len(raters) < 2 or not items:
        return len(raters), len(items), None
    matrix = [[by_item[item].get(rater) for item in items] for rater in raters]
    return len(raters), len(items), krippendorff_alpha(matrix, level)


def _model_row(model: str, facts: list[CritiqueFact], names: tuple[str, ...], ratings: dict[int, list[int]]):
    scores = [f.score for f in facts if f.score is not None]
    interval = mean_interval(scores)
    counts = Counter(f.dimension for f in facts)
    bins = Counter(score_bin(s) for s in scores)
    human = [score for f in facts for score in ratings.get(f.critique_pk, ())]
    return CritiqueModelRow(
        model=model,
        n=len(facts),
        n_scored=len(scores),
        mean_explanation_score=interval.mean,
        score_low=_clipped(interval.low),
        score_high=_clipped(interval.high),
        dimensions={name: counts.get(name, 0) for name in names},
        no_dimension=counts.get(None, 0),
        score_counts=tuple(bins.get(b, 0) for b in SCORE_BINS),
        mean_critique_score=math.fsum(human) / len(human) if human else None,
        n_critique_ratings=len(human),
    )


def _student_row(key: tuple[StudentKey, str], facts: list[CritiqueFact], names: tuple[str, ...]) -> StudentRow:
    (dataset, split, model, condition), critique_model = key
    scores = [f.score for f in facts if f.score is not None]
    interval = mean_interval(scores)
    counts = Counter(f.dimension for f in facts)
    n = len(facts)
    judged = [f for f in facts if f.score is not None and f.correct is not None]
    separation = auroc([f.score for f in judged if f.score is not None], [bool(f.correct) for f in judged])
    return StudentRow(
        dataset,
        split,
        model,
        condition,
        critique_model,
        n=n,
        n_scored=len(scores),
        mean_explanation_score=interval.mean,
        score_low=_clipped(interval.low),
        score_high=_clipped(interval.high),
        dimension_shares={name: counts.get(name, 0) / n for name in names},
        no_dimension=counts.get(None, 0) / n,
        correct=separation.positives,
        incorrect=separation.negatives,
        auroc=separation.value,
        auroc_low=separation.low,
        auroc_high=separation.high,
    )


def human_explanation_means(by_cot: dict[int, dict[str, int]]) -> dict[int, float]:
    """The human explanation score of each CoT: the mean over its raters (each rater's last
    rating, as :func:`last_per_author` gives them)."""
    return {cot: math.fsum(s.values()) / len(s) for cot, s in by_cot.items() if s}


def per_cot_scores(facts: Sequence[CritiqueFact]) -> tuple[dict[int, float], dict[int, str]]:
    """A critique model's mean score per CoT, and its first critique's dimension per CoT."""
    sums: dict[int, list[float]] = defaultdict(list)
    dimensions: dict[int, str] = {}
    seen: set[int] = set()
    for fact in facts:  # in stored order: by CoT, then position
        if fact.score is not None:
            sums[fact.cot_pk].append(fact.score)
        if fact.cot_pk not in seen:
            seen.add(fact.cot_pk)
            if fact.dimension:
                dimensions[fact.cot_pk] = fact.dimension
    return {cot: math.fsum(v) / len(v) for cot, v in sums.items()}, dimensions


def _agreement(
    first: str,
    second: str,
    a: dict[int, float],
    b: dict[int, float],
    dims_a: dict[int, str] | None,
    dims_b: dict[int, str] | None,
) -> AgreementRow:
    shared = sorted(a.keys() & b.keys())
    x = [a[c] for c in shared]
    y = [b[c] for c in shared]
    rho, tau = spearman(x, y), kendall(x, y)
    n_dimension, match = 0, None
    if dims_a is not None and dims_b is not None:
        both = dims_a.keys() & dims_b.keys()
        n_dimension = len(both)
        if both:
            match = sum(dims_a[c] == dims_b[c] for c in both) / n_dimension
    return AgreementRow(
        first,
        second,
        len(shared),
        rho.value,
        rho.low,
        rho.high,
        tau.value,
        tau.low,
        tau.high,
        n_dimension,
        match,
    )


def analyse(data: CritiqueData) -> CritiqueAnalysis:
    """Every figure of the critique analysis (docs/critiques-analysis.md), from ``data``."""
    names = _dimension_names(data.critiques)
    by_model: dict[str, list[CritiqueFact]] = defaultdict(list)
    by_student: dict[tuple[StudentKey, str], list[CritiqueFact]] = defaultdict(list)
    by_student_model: dict[str, Counter[str]] = defaultdict(Counter)
    for fact in data.critiques:
        by_model[fact.critique_model].append(fact)
        by_student[(fact.student, fact.critique_model)].append(fact)
        by_student_model[fact.student[2]][fact.dimension or ""] += 1
    last_critique_ratings = last_per_author(data.critique_ratings)
    critique_ratings = {pk: list(by_author.values()) for pk, by_author in last_critique_ratings.items()}
    models = sorted(by_model)
    model_rows = [
        dataclasses.replace(_model_row(m, by_model[m], names, critique_ratings), process=data.process.get(m))
        for m in models
    ]
    students = [_student_row(key, by_student[key], names) for key in sorted(by_student)]

    explanation = last_per_author(data.explanation_ratings)
    human_mean = human_explanation_means(explanation)
    per_cot = {m: per_cot_scores(by_model[m]) for m in models}
    agreement = []
    for i, first in enumerate(models):
        for second in models[i + 1 :]:
            agreement.append(
                _agreement(first, second, per_cot[first][0], per_cot[second][0], per_cot[first][1], per_cot[second][1])
            )
    points = []
    for model in models:
        scores = per_cot[model][0]
        if human_mean:
            agreement.append(_agreement(model, HUMAN, scores, human_mean, None, None))
        points += [ScorePoint(model, cot, scores[cot], human_mean[cot]) for cot in sorted(scores) if cot in human_mean]

    e_raters, e_items, alpha_interval = _alpha(explanation, "interval")
    _, _, alpha_ordinal = _alpha(explanation, "ordinal")
    c_raters, c_items, critique_alpha = _alpha(last_critique_ratings, "ordinal")
    human = HumanAgreement(e_raters, e_items, alpha_interval, alpha_ordinal, c_raters, c_items, critique_alpha)
    return CritiqueAnalysis(
        collection=data.collection,
        n_critiques=len(data.critiques),
        critique_models=model_rows,
        students=students,
        agreement=agreement,
        human=human,
        points=points,
        dimensions_by_student_model={m: dict(c) for m, c in sorted(by_student_model.items())},
        dimension_names=names,
    )
