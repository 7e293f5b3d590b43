"""Pairwise judges measured (docs/judges.md): per judge, how often its verdict survives swapping
the order (position consistency) and how often it picks the CoT shown first; per condition,
wins, losses and ties over consistent pair outcomes and a Bradley-Terry strength with a
bootstrap interval.

A *judge* is a judge model with one template version. A *pair* is two CoTs of one sample judged
in both orders (g1: the smaller CoT key shown first; g2: swapped). Its outcome, as MT-bench
counts it: both verdicts parsed and naming the same CoT, a win for it; both ties, a tie; naming
different CoTs (or one a tie), a tie, counted as ``inconsistent`` too, never a win; a verdict
unparseable, no outcome (counted in ``unparseable``); one order still missing, ``incomplete``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from thoughtdesk.core.judges.conditions import collection_cot_conditions
from thoughtdesk.core.judges.store import VerdictRow, collection_verdicts
from thoughtdesk.core.library.store import Library

#: Bootstrap resamples of the pairs behind each strength's interval.
N_RESAMPLES = 200
TIE = 0  # a pair outcome that is a tie (else the winning CoT's key; None: no outcome)


@dataclass(frozen=True, slots=True)
class JudgeKey:
    model: str
    template: str
    template_version: str

    @property
    def label(self) -> str:
        return f"{self.model} ({self.template} {self.template_version})"


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """A pair judged in both orders by one judge: ``winner`` a CoT key, :data:`TIE`, or None
    (a verdict unparseable); ``consistent``: both orders gave the same outcome."""

    judge: JudgeKey
    sample_pk: int
    low_cot_pk: int
    high_cot_pk: int
    winner: int | None
    consistent: bool
    created: str  # when the later of its two verdicts was given


@dataclass(frozen=True, slots=True)
class JudgeFigures:
    """One judge's figures. Rates are shares 0..1 (None without data)."""

    model: str
    template: str
    template_version: str
    pairs: int  # judged in both orders
    position_consistency: float | None  # of pairs with both verdicts parsed: same outcome both orders
    first_position_rate: float | None  # of parsed single verdicts: chose the CoT shown first
    ties: int  # pairs whose outcome is a tie (consistent ties + inconsistent pairs)
    inconsistent: int  # pairs whose verdict flipped with the order (counted as ties)
    unparseable: int  # single verdicts that could not be read
    incomplete: int  # pairs judged in one order only so far
    verdicts: int  # single verdicts


@dataclass(frozen=True, slots=True)
class ConditionFigures:
    """One condition under one judge: its pairs against other conditions and its Bradley-Terry
    strength (log scale, mean 0 over the judge's conditions) with a 95 % bootstrap interval."""

    judge: str
    template_version: str
    condition: str
    wins: int
    losses: int
    ties: int
    strength: float
    low: float
    high: float


@dataclass
class JudgementAnalysis:
    collection: str
    judges: list[JudgeFigures] = field(default_factory=list)
    conditions: list[ConditionFigures] = field(default_factory=list)
    #: Per judge its decided pairs (:func:`decided_pairs`), for the comparison with humans; not in the JSON.
    pairs: dict[JudgeKey, list[tuple[int, int, int, int | None]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "judges": [asdict(j) for j in self.judges],
            "conditions": [asdict(c) for c in self.conditions],
        }


def _winner(verdict: str, first: int, second: int) -> int | None:
    if verdict == "A":
        return first
    if verdict == "B":
        return second
    return TIE if verdict == "tie" else None


def pair_outcomes(rows: list[VerdictRow]) -> tuple[list[PairOutcome], dict[JudgeKey, Counter[str]]]:
    """Pairs judged in both orders, and per judge the counts of single verdicts (``A``: chose
    the CoT shown first, ``B``, ``tie``, ``unparseable``) and of ``incomplete`` pairs (judged in
    one order so far). ``rows`` are :func:`~thoughtdesk.core.judges.store.collection_verdicts`'
    plain tuples, read by position (this loop is most of the figures' time: a SQL window and
    GROUP BY doing the same pairing took twice as long)."""
    orders: dict[tuple[str, str, str, int, int], list[Any]] = {}
    for row in rows:  # oldest first: a later verdict of the same ordered pair replaces an earlier one
        first, second, model, template, version = row[2], row[3], row[4], row[5], row[6]
        if first < second:
            key = (model, template, version, first, second)
            slot = orders.get(key)
            if slot is None:
                orders[key] = [row, None]
            else:
                slot[0] = row
        else:
            key = (model, template, version, second, first)
            slot = orders.get(key)
            if slot is None:
                orders[key] = [None, row]
            else:
                slot[1] = row
    judges: dict[tuple[str, str, str], JudgeKey] = {}
    counts: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    out: list[PairOutcome] = []
    for (model, template, version, low, high), (g1, g2) in orders.items():
        ident = (model, template, version)
        judge = judges.get(ident)
        if judge is None:
            judge = judges[ident] = JudgeKey(*ident)
        tally = counts[ident]
        if g1 is None or g2 is None:
            tally[(g1 or g2)[7]] += 1
            tally["incomplete"] += 1
            continue
        tally[g1[7]] += 1
        tally[g2[7]] += 1
        w1, w2 = _winner(g1[7], low, high), _winner(g2[7], high, low)
        if w1 is None or w2 is None:
            winner, consistent = None, False
        else:
            consistent = w1 == w2
            winner = w1 if consistent else TIE
        out.append(PairOutcome(judge, g1[1], low, high, winner, consistent, max(g1[8], g2[8])))
    return out, {judges[ident]: counter for ident, counter in counts.items()}


def _judge_figures(judge: JudgeKey, outcomes: list[PairOutcome], counts: Counter[str]) -> JudgeFigures:
    decided = [o for o in outcomes if o.winner is not None]
    parsed = counts["A"] + counts["B"] + counts["tie"]
    inconsistent = sum(1 for o in decided if not o.consistent)
    return JudgeFigures(
        model=judge.model,
        template=judge.template,
        template_version=judge.template_version,
        pairs=len(outcomes),
        position_consistency=(len(decided) - inconsistent) / len(decided) if decided else None,
        first_position_rate=counts["A"] / parsed if parsed else None,
        ties=sum(1 for o in decided if o.winner == TIE),
        inconsistent=inconsistent,
        unparseable=counts["unparseable"],
        incomplete=counts["incomplete"],
        verdicts=sum(counts[v] for v in ("A", "B", "tie", "unparseable")),
    )


def bradley_terry(wins: Any, *, iterations: int = 1000, tolerance: float = 1e-8) -> Any:
    """Bradley-Terry log-strengths from ``wins[i, j]``, the wins of i over j (a tie counted half
    to each), by Hunter's MM algorithm; mean 0 over the items that played, NaN for an item
    without games. Every pair of items that met gets one virtual tie (half a win each way) so
    an item that won or lost everything stays finite."""
    import numpy as np

    wins = np.asarray(wins, dtype=float)
    met = (wins + wins.T) > 0
    wins = wins + 0.5 * met
    games = wins + wins.T
    total = wins.sum(axis=1)
    played = games.sum(axis=1) > 0
    p = np.ones(len(wins))
    for _ in range(iterations):
        denominator = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(played, total / np.where(played, denominator, 1.0), 1.0)
        new = np.maximum(new, 1e-12)
        if played.any():
            new /= np.exp(np.mean(np.log(new[played])))
        if np.max(np.abs(new - p)) < tolerance:
            p = new
            break
        p = new
    return np.where(played, np.log(p), np.nan)


def condition_figures(
    judge: JudgeKey, outcomes: list[PairOutcome], conditions: dict[int, str], *, n_resamples: int, seed: int
) -> list[ConditionFigures]:
    import numpy as np

    record: dict[str, Counter[str]] = defaultdict(Counter)
    cells: Counter[tuple[str, str, int]] = Counter()  # (condition i, condition j, 1: i won, 0: tie)
    for o in outcomes:
        if o.winner is None:
            continue
        a, b = conditions.get(o.low_cot_pk), conditions.get(o.high_cot_pk)
        if a is None or b is None or a == b:
            continue
        if o.winner == TIE:
            record[a]["ties"] += 1
            record[b]["ties"] += 1
            cells[(a, b, 0)] += 1
        else:
            winner, loser = (a, b) if o.winner == o.low_cot_pk else (b, a)
            record[winner]["wins"] += 1
            record[loser]["losses"] += 1
            cells[(winner, loser, 1)] += 1
    names = sorted(record)
    if len(names) < 2:
        return []
    index = {name: i for i, name in enumerate(names)}
    cell_list = list(cells)
    rows_i = np.array([index[c[0]] for c in cell_list])
    rows_j = np.array([index[c[1]] for c in cell_list])
    decisive = np.array([c[2] for c in cell_list], dtype=float)
    counts = np.array([cells[c] for c in cell_list], dtype=float)

    def fit(weights: Any) -> Any:
        wins = np.zeros((len(names), len(names)))
        np.add.at(wins, (rows_i, rows_j), weights * np.where(decisive == 1, 1.0, 0.5))
        np.add.at(wins, (rows_j, rows_i), weights * np.where(decisive == 1, 0.0, 0.5))
        return bradley_terry(wins)

    strength = fit(counts)
    total = int(counts.sum())
    rng = np.random.default_rng(seed)
    draws = np.array([fit(rng.multinomial(total, counts / total)) for _ in range(n_resamples)]) if n_resamples else None
    out = []
    for name, i in index.items():
        # A resample in which the condition played no pair says nothing of it (NaN, left out).
        column = draws[:, i] if draws is not None else np.array([np.nan])
        column = column[~np.isnan(column)]
        low, high = (
            (float(np.percentile(column, 2.5)), float(np.percentile(column, 97.5)))
            if len(column)
            else (float(strength[i]), float(strength[i]))
        )
        out.append(
            ConditionFigures(
                judge=judge.model,
                template_version=judge.template_version,
                condition=name,
                wins=record[name]["wins"],
                losses=record[name]["losses"],
                ties=record[name]["ties"],
                strength=round(float(strength[i]), 6),
                low=round(low, 6),
                high=round(high, 6),
            )
        )
    return sorted(out, key=lambda c: -c.strength)


def analyse_judgements(
    lib: Library, collection: str, *, judge: str | None = None, n_resamples: int = N_RESAMPLES, seed: int = 0
) -> JudgementAnalysis:
    """The figures of every judge of ``collection`` (``judge``: only that judge model)."""
    cid = lib.require_collection(collection)
    rows = collection_verdicts(lib.conn, cid, latest_only=False)  # pair_outcomes keeps the latest
    if judge is not None:
        rows = [r for r in rows if r[4] == judge]
    outcomes, counts = pair_outcomes(rows)
    pairs = decided_pairs(outcomes)
    by_judge: dict[JudgeKey, list[PairOutcome]] = defaultdict(list)
    for outcome in outcomes:
        by_judge[outcome.judge].append(outcome)
    conditions = collection_cot_conditions(lib, cid) if outcomes else {}
    analysis = JudgementAnalysis(collection, pairs=pairs)
    for key in sorted(counts, key=lambda k: (k.model, k.template, k.template_version)):
        analysis.judges.append(_judge_figures(key, by_judge.get(key, []), counts[key]))
        analysis.conditions.extend(
            condition_figures(key, by_judge.get(key, []), conditions, n_resamples=n_resamples, seed=seed)
        )
    return analysis


def judge_names(lib: Library, collection: str) -> list[str]:
    """The judge models with verdicts in ``collection``."""
    cid = lib.require_collection(collection)
    return [
        row[0]
        for row in lib.conn.execute(
            "SELECT DISTINCT v.judge_model FROM judge_verdict v JOIN sample s ON s.id = v.sample_pk "
            "WHERE s.collection_id = ? ORDER BY 1",
            (cid,),
        )
    ]


def consistent_pairs(lib: Library, collection_id: int, *, judge: str | None = None) -> Iterator[PairOutcome]:
    """The pairs a judge decided the same way in both orders (a tie or a flip is no pair)."""
    rows = collection_verdicts(lib.conn, collection_id, latest_only=False)
    if judge is not None:
        rows = [r for r in rows if r[4] == judge]
    outcomes, _ = pair_outcomes(rows)
    for outcome in outcomes:
        if outcome.consistent and outcome.winner not in (None, TIE):
            yield outcome


def decided_pairs(outcomes: list[PairOutcome]) -> dict[JudgeKey, list[tuple[int, int, int, int | None]]]:
    """Per judge, its decided pairs: ``(sample, smaller CoT key, larger, preferred CoT or None
    for a tie)``; a flip is a tie, an unparseable verdict gives no pair."""
    out: dict[JudgeKey, list[tuple[int, int, int, int | None]]] = defaultdict(list)
    for o in outcomes:
        if o.winner is not None:
            out[o.judge].append((o.sample_pk, o.low_cot_pk, o.high_cot_pk, None if o.winner == TIE else o.winner))
    return dict(out)


def pairwise_judge_pairs(lib: Library, collection: str) -> dict[JudgeKey, list[tuple[int, int, int, int | None]]]:
    """Each pairwise judge's decided pairs of ``collection`` (see :func:`decided_pairs`), for
    comparing with human reviewers."""
    cid = lib.require_collection(collection)
    outcomes, _ = pair_outcomes(collection_verdicts(lib.conn, cid, latest_only=False))
    return decided_pairs(outcomes)
