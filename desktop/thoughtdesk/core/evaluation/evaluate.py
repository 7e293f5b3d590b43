"""Evaluating a stored collection: accuracy by dataset x split x model x prompt condition.

:func:`evaluate` reads every answer's correctness, either ThoughtDesk's own (the ``td_*``
columns written by :func:`~thoughtdesk.core.evaluation.rescoring.rescore`, run first with
``rescore=True``) or, where an answer was never re-scored, the ``correct_answer`` stored in the
imported file (True correct, False incorrect). An answer with neither (``correct_answer: null``:
ThoughtSource's "never evaluated") is scored now with ThoughtDesk's extraction, in memory, not
written (counted in :attr:`EvaluationResult.scored_now`; not extractable counts as not correct),
so that no answer silently leaves the denominator; only answers of samples without a gold answer
are left out (:attr:`EvaluationResult.unscored`), as ThoughtSource's own evaluation skips such
samples. It then builds the accuracy table
(:func:`~thoughtdesk.core.evaluation.metrics.accuracy_table`: n, accuracy, Wilson 95 % interval, share not
extractable, majority-vote accuracy) and, for conditions answered on the same samples of one
dataset split, McNemar's exact test and a paired bootstrap interval of the difference.

A prompt *condition* is the instruction key, the CoT trigger key and the answer-extraction key
(:func:`condition_label`); the *model* is the name in the CoT's ``model`` field. Token counts
and costs are optional: read from columns of ``generated_cot`` when a later schema has them
(``completion_tokens``/``output_tokens``, ``cost_usd``/``cost``), else from the extra keys a
generation run writes (``thoughtdesk.completion_tokens``, ``thoughtdesk.cost`` of the CoT plus
that of the answer-extraction call) or other tools do (``usage.completion_tokens``,
``completion_tokens``, ``tokens``; ``cost_usd``, ``cost``).

Reasoning traces (issue 24): an answer whose CoT stopped at the token limit
(``generated_cot.finish_reason`` "length", or Anthropic's "max_tokens") has the outcome
``truncated`` whatever was extracted from it (its thinking or its answer was cut). Truncated
answers are counted apart and left out of the accuracy's denominator and of the paired
comparisons unless ``truncated_as_wrong``. Each row also says which share of its CoTs carry a
reasoning model's thinking and the median of their reasoning tokens.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from thoughtdesk.core.evaluation.answers import extract_answer
from thoughtdesk.core.evaluation.metrics import (
    AccuracyRow,
    ScoredAnswer,
    accuracy_table,
    bootstrap_difference,
    mcnemar_exact,
)
from thoughtdesk.core.evaluation.rescoring import RescoreOutcome
from thoughtdesk.core.evaluation.rescoring import rescore as rescore_collection
from thoughtdesk.core.library.records import THOUGHTSOURCE_UNEXTRACTABLE_SQL
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.trace_marks import TRUNCATED_FINISH_REASONS

Key = tuple[str, str, str, str]  # dataset, split, model, condition (AccuracyRow.key)
UNKNOWN_MODEL = "(unknown model)"
#: Conditions of one dataset split compared pairwise by default (n*(n-1)/2 pairs, each with a
#: bootstrap); above this only chosen pairs are compared (:func:`compare_conditions`).
MAX_COMPARED_CONDITIONS = 12


_TRUNCATED_SQL = "g.finish_reason IN ({})".format(", ".join(f"'{r}'" for r in TRUNCATED_FINISH_REASONS))

#: SQL for a generated CoT ``g``'s guide label (NULL for an ordinary, one-shot CoT).
GUIDE_SQL = (
    "CASE WHEN g.extra IS NOT NULL AND json_valid(g.extra) THEN coalesce(json_extract(g.extra, "
    "'$.thoughtdesk.guide.label'), json_extract(g.extra, '$.thoughtdesk.revision.label')) END"
)


def condition_label(
    instruction: str | None, cot_trigger: str | None, extraction: str | None, guide: str | None = None
) -> str:
    """The prompt condition's name: instruction / CoT trigger / answer extraction keys, "-" for none.

    A guided CoT (written one step at a time) names its guide first, ``rationalyst-implicit: ...``
    or ``stepwise: ...`` (the plain step-by-step baseline), so guided, step-by-step and one-shot
    CoTs of the same prompt are separate conditions that compare directly. A revised CoT
    (``thoughtdesk revise``) names its revision the same way, ``revised after MODEL: ...``, with
    the revised CoT's keys.
    """
    keys = " / ".join(part.strip() if part and part.strip() else "-" for part in (instruction, cot_trigger, extraction))
    return f"{guide}: {keys}" if guide else keys


def sample_label(dataset: str, split: str, sample_id: str) -> str:
    """The id the evaluation gives a question: unique across the datasets of a collection."""
    return f"{dataset}/{split}/{sample_id}"


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two conditions (model + prompt condition) on the questions of one dataset split both answered.

    ``n`` paired questions (first sample of each); ``accuracy_a``/``accuracy_b`` on those, as
    proportions; ``only_a``/``only_b`` discordant pairs; ``p_value`` exact McNemar (two-sided);
    ``difference`` = accuracy_a - accuracy_b with its 95 % paired-bootstrap percentile interval
    ``difference_low``..``difference_high`` (proportions: 0.05 = 5 percentage points).
    """

    dataset: str
    split: str
    model_a: str
    condition_a: str
    model_b: str
    condition_b: str
    n: int
    accuracy_a: float
    accuracy_b: float
    only_a: int
    only_b: int
    p_value: float
    difference: float
    difference_low: float
    difference_high: float


@dataclass
class EvaluationResult:
    """The evaluation of one collection.

    ``answers`` are the scored answers the table was built from (``sample_id`` is
    :func:`sample_label`; ``sample_pks`` maps it to the sample's primary key).
    ``scored_by_thoughtdesk``/``scored_from_file``/``scored_now``/``unscored`` count answers by
    where their correctness came from: stored by ThoughtDesk, stored in the imported file, neither
    and scored by this evaluation (not written), none at all (no gold answer: left out). ``mean_cot_chars`` is the mean CoT length in characters per row key
    (to estimate tokens when none are stored). ``comparisons_skipped`` names dataset splits with
    more than ``MAX_COMPARED_CONDITIONS`` conditions, whose pairs were not all compared.
    ``truncated_as_wrong``: truncated answers were counted as not correct (else left out of the
    accuracies' denominators and the comparisons).
    """

    collection: str
    rows: list[AccuracyRow]
    comparisons: list[Comparison]
    answers: list[ScoredAnswer]
    sample_pks: dict[str, int]
    mean_cot_chars: dict[Key, float]
    scored_by_thoughtdesk: int = 0
    scored_from_file: int = 0
    scored_now: int = 0
    unscored: int = 0
    comparisons_skipped: list[tuple[str, str]] = field(default_factory=list)
    rescore_outcome: RescoreOutcome | None = None
    truncated_as_wrong: bool = False

    @property
    def truncated(self) -> int:
        """Answers whose CoT was cut by the token limit (outcome ``truncated``)."""
        return sum(row.truncated for row in self.rows)

    @property
    def source(self) -> str:
        """Where correctness came from: "thoughtdesk", "file", "mixed" or "none"."""
        by_thoughtdesk = self.scored_by_thoughtdesk + self.scored_now
        if by_thoughtdesk and self.scored_from_file:
            return "mixed"
        if by_thoughtdesk:
            return "thoughtdesk"
        return "file" if self.scored_from_file else "none"

    def row(self, key: Key) -> AccuracyRow | None:
        return next((r for r in self.rows if r.key == key), None)


def _generated_cot_columns(lib: Library) -> set[str]:
    return {row[1] for row in lib.conn.execute("PRAGMA table_info(generated_cot)")}


def _usage_expressions(lib: Library) -> tuple[str, str]:
    """SQL expressions for completion tokens and cost of a CoT ``g`` and its answer ``a``
    (NULL when not stored). Generation runs keep both in ``extra["thoughtdesk"]``; the cost of an
    answer is its CoT's call plus its own answer-extraction call."""
    columns = _generated_cot_columns(lib)
    g_extra = "CASE WHEN g.extra IS NOT NULL AND json_valid(g.extra) THEN json_extract(g.extra, '{}') END"
    a_extra = "CASE WHEN a.extra IS NOT NULL AND json_valid(a.extra) THEN json_extract(a.extra, '{}') END"
    tokens = [f"g.{c}" for c in ("completion_tokens", "output_tokens") if c in columns]
    tokens += [
        g_extra.format(p)
        for p in ("$.thoughtdesk.completion_tokens", "$.usage.completion_tokens", "$.completion_tokens", "$.tokens")
    ]
    cot_cost = [f"g.{c}" for c in ("cost_usd", "cost") if c in columns]
    cot_cost += [g_extra.format(p) for p in ("$.thoughtdesk.cost", "$.cost_usd", "$.cost")]
    cot_cost_sql = f"coalesce({', '.join(cot_cost)})"
    answer_cost_sql = a_extra.format("$.thoughtdesk.cost")
    cost = (
        f"CASE WHEN {cot_cost_sql} IS NULL AND {answer_cost_sql} IS NULL THEN NULL "
        f"ELSE coalesce({cot_cost_sql}, 0) + coalesce({answer_cost_sql}, 0) END"
    )
    return f"coalesce({', '.join(tokens)})", cost


def _number(value: object) -> float | None:
    # SQLite hands back int, float, str or bytes; anything else (and bool) is not a number here.
    if isinstance(value, bool) or not isinstance(value, (int, float, str, bytes)):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


#: SQL: the answer ``a`` holds no correctness at all (never scored by ThoughtDesk or in the file;
#: not graded by ThoughtSource's evaluate either, see ``records.thoughtsource_unextractable``).
_NEVER_SCORED = f"a.td_outcome IS NULL AND a.correct_answer IS NULL AND NOT {THOUGHTSOURCE_UNEXTRACTABLE_SQL}"


def _json_list(text: str | None) -> list:
    if not text:
        return []
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return []
    return value if isinstance(value, list) else [value]


def load_scored_answers(lib: Library, collection_id: int, result: EvaluationResult) -> None:
    """Fill ``result.answers``, ``sample_pks``, ``mean_cot_chars`` and the source counts."""
    tokens_sql, cost_sql = _usage_expressions(lib)
    cursor = lib.conn.execute(
        f"""SELECT s.id, s.dataset, s.split, s.sample_id, g.model_name, g.model, g.instruction,
                   g.cot_trigger, a.answer_extraction, a.td_outcome, a.td_value, a.correct_answer,
                   {tokens_sql}, {cost_sql}, length(g.cot),
                   CASE WHEN a.extra IS NOT NULL AND json_valid(a.extra)
                        THEN json_extract(a.extra, '$.answer_from_choices') END,
                   {THOUGHTSOURCE_UNEXTRACTABLE_SQL},
                   {GUIDE_SQL},
                   -- what scoring an answer needs, read only for answers never scored
                   CASE WHEN {_NEVER_SCORED} THEN s.type END, CASE WHEN {_NEVER_SCORED} THEN s.choices END,
                   CASE WHEN {_NEVER_SCORED} THEN s.answer END, CASE WHEN {_NEVER_SCORED} THEN a.answer END,
                   CASE WHEN {_NEVER_SCORED} THEN g.cot END,
                   {_TRUNCATED_SQL}, coalesce(length(g.reasoning), 0) > 0, g.reasoning_tokens
            FROM sample s JOIN generated_cot g ON g.sample_pk = s.id JOIN answer a ON a.cot_pk = g.id
            WHERE s.collection_id = ? ORDER BY s.id, g.position, a.position""",
        (collection_id,),
    )
    answers = result.answers
    labels: dict[int, str] = {}
    conditions: dict[tuple, str] = {}
    index_of: dict[tuple[int, str, str], int] = {}
    chars: dict[Key, list[int]] = {}
    for (
        pk,
        dataset,
        split,
        sid,
        model_name,
        model,
        instruction,
        trigger,
        extraction,
        td_outcome,
        td_value,
        stored,
        tokens,
        cost,
        cot_chars,
        from_choices,
        graded_unextractable,
        guide,
        kind,
        choices_json,
        gold_json,
        output,
        cot,
        truncated,
        has_reasoning,
        reasoning_tokens,
    ) in cursor:
        if td_outcome is not None:
            outcome, value = td_outcome, td_value
            result.scored_by_thoughtdesk += 1
        elif stored is not None:
            outcome = "correct" if stored else "incorrect"
            value = from_choices or None
            result.scored_from_file += 1
        elif graded_unextractable:  # ThoughtSource's evaluate graded it and found nothing
            outcome, value = "unextractable", None
            result.scored_from_file += 1
        else:
            gold = _json_list(gold_json)
            if not gold or gold[0] is None:
                result.unscored += 1
                continue
            scored = extract_answer(
                kind or "", extraction_output=output, cot=cot, choices=_json_list(choices_json), gold=gold
            )
            outcome = scored.outcome
            value = None if scored.value is None else str(scored.value)
            result.scored_now += 1
        if truncated:
            outcome = "truncated"
        label = labels.get(pk)
        if label is None:
            label = labels[pk] = sample_label(dataset, split, sid)
            result.sample_pks[label] = pk
        parts = (instruction, trigger, extraction, guide)
        condition = conditions.get(parts)
        if condition is None:
            condition = conditions[parts] = condition_label(*parts)
        model = model_name or model or UNKNOWN_MODEL
        slot = (pk, model, condition)
        repeat = index_of.get(slot, 0)
        index_of[slot] = repeat + 1
        token_count = _number(tokens)
        answers.append(
            ScoredAnswer(
                dataset,
                split,
                model,
                condition,
                label,
                outcome,
                tokens=None if token_count is None else int(token_count),
                cost=_number(cost),
                sample_index=repeat,
                value=value,
                reasoning=bool(has_reasoning),
                reasoning_tokens=reasoning_tokens if isinstance(reasoning_tokens, int) else None,
            )
        )
        key = (dataset, split, model, condition)
        bucket = chars.get(key)
        if bucket is None:
            bucket = chars[key] = [0, 0]
        bucket[0] += cot_chars or 0
        bucket[1] += 1
    result.mean_cot_chars = {key: total / count for key, (total, count) in chars.items() if count}


class PairedOutcomes:
    """Per row key, whether the first sample of each question was correct (unextractable: not).

    A question whose first sample was truncated is left out of that key's questions, so it is
    not paired, unless ``truncated_as_wrong`` (then it counts as not correct).
    """

    def __init__(self, answers: Iterable[ScoredAnswer], *, truncated_as_wrong: bool = False) -> None:
        first: dict[Key, dict[str, tuple[int, bool | None]]] = {}
        for a in answers:
            per_key = first.setdefault((a.dataset, a.split, a.model, a.condition), {})
            seen = per_key.get(a.sample_id)
            if seen is None or a.sample_index < seen[0]:
                ok = None if a.outcome == "truncated" and not truncated_as_wrong else a.outcome == "correct"
                per_key[a.sample_id] = (a.sample_index, ok)
        self.by_key = {key: {sid: ok for sid, (_, ok) in per.items() if ok is not None} for key, per in first.items()}

    def paired(self, a: Key, b: Key) -> tuple[list[str], list[bool], list[bool]]:
        """(question ids both answered, A correct, B correct), ids sorted."""
        left, right = self.by_key.get(a, {}), self.by_key.get(b, {})
        ids = sorted(left.keys() & right.keys())
        return ids, [left[i] for i in ids], [right[i] for i in ids]


def compare_conditions(
    paired: PairedOutcomes, a: Key, b: Key, *, n_resamples: int = 9999, seed: int | None = 0
) -> Comparison | None:
    """McNemar and bootstrap for two row keys; None when they share no question."""
    ids, a_ok, b_ok = paired.paired(a, b)
    if not ids:
        return None
    test = mcnemar_exact(a_ok, b_ok)
    difference, low, high = bootstrap_difference(a_ok, b_ok, n_resamples=n_resamples, seed=seed)
    n = len(ids)
    return Comparison(
        a[0],
        a[1],
        a[2],
        a[3],
        b[2],
        b[3],
        n,
        sum(a_ok) / n,
        sum(b_ok) / n,
        test.only_a,
        test.only_b,
        test.p_value,
        difference,
        low,
        high,
    )


def evaluate(
    lib: Library,
    collection: str,
    rescore: bool = False,
    *,
    comparisons: bool = True,
    n_resamples: int = 9999,
    max_compared_conditions: int = MAX_COMPARED_CONDITIONS,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    comparison_progress: Callable[[int, int], None] | None = None,
    truncated_as_wrong: bool = False,
) -> EvaluationResult:
    """Evaluate ``collection``; with ``rescore`` first re-score every answer (writes the library).

    ``comparisons`` compares every pair of conditions within each dataset split (up to
    ``max_compared_conditions`` conditions per split), with ``n_resamples`` bootstrap resamples.
    ``progress``/``cancel`` are passed to the re-score; ``comparison_progress(done, total)`` is
    told after each compared pair (the bootstrap takes seconds on large collections).
    ``truncated_as_wrong`` counts truncated answers as not correct (in the denominator) instead of
    leaving them out.
    """
    cid = lib.require_collection(collection)
    report = rescore_collection(lib, collection, progress=progress, cancel=cancel) if rescore else None
    result = EvaluationResult(
        collection, [], [], [], {}, {}, rescore_outcome=report, truncated_as_wrong=truncated_as_wrong
    )
    load_scored_answers(lib, cid, result)
    result.rows = accuracy_table(result.answers, truncated_as_wrong=truncated_as_wrong)
    if comparisons:
        paired = PairedOutcomes(result.answers, truncated_as_wrong=truncated_as_wrong)
        pairs: list[tuple[Any, Any]] = []
        for (dataset, split), group in itertools.groupby(result.rows, key=lambda r: (r.dataset, r.split)):
            keys = [r.key for r in group]
            if len(keys) > max_compared_conditions:
                result.comparisons_skipped.append((dataset, split))
                continue
            pairs.extend(itertools.combinations(keys, 2))
        for done, (a, b) in enumerate(pairs, 1):
            compared = compare_conditions(paired, a, b, n_resamples=n_resamples)
            if compared is not None:
                result.comparisons.append(compared)
            if comparison_progress is not None:
                comparison_progress(done, len(pairs))
    return result
