"""Judges against human reviewers (issue 26, point 3): per judge version, Cohen's kappa and
accuracy against the human verdicts with 95 % intervals, the confusion matrix and the list of
disagreements, and versions of one judge compared on the same human labels.

The comparison works on one input type, whatever the judge: per judge version a list of
verdicts on items (:class:`ItemVerdict`: an item key, its sample, a label). Two measures exist:

* ``pairwise``: an item is a pair of CoTs of one sample (stored order: smaller key first), the
  label ``first``, ``second`` or ``tie``. The human label of a pair is the majority of the
  reviewers' verdicts (``pairwise_preference``; a reviewer counts once, with their verdict); a
  pair whose reviewers split evenly between two labels is left out (``split_pairs``). A
  pairwise judge's verdicts come in as :class:`~thoughtdesk.core.review.preferences.PairPreference`
  lists (:func:`pair_items`); a critique model becomes a pairwise judge through its explanation
  scores (:func:`critique_pair_verdicts`: the CoT it scored higher is preferred, equal scores a tie).
* ``explanation score``: an item is a CoT, the label its explanation score 0-5 (rounded):
  a critique model's (mean of its critiques of that version) against the human raters' mean,
  the same figures the critique analysis correlates (``core.critiques.analysis``, whose readers
  and per-CoT means are used here).

A *judge version* is the judge (a critique model's name) and what it was asked with: for a
critique model the template key and a hash of the template's texts as its run stored them
(``td-critique-v1@1a2b3c4d``), ``imported`` for critiques read from a file. Editing a template
makes a new version; :attr:`HumanAgreementReport.versions` compares a judge's versions on the
human-labelled items every one of them judged.

Intervals: accuracy, Wilson; kappa, the large-sample standard error
``sqrt(p_o (1 - p_o) / (n (1 - p_e)^2))`` (Cohen 1960), clipped to [-1, 1].
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from thoughtdesk.core.agreement.kappa import cohen_kappa
from thoughtdesk.core.agreement.statistics import normal_quantile
from thoughtdesk.core.critiques.analysis import (
    human_explanation_means,
    last_per_author,
    load_critique_data,
    per_cot_scores,
    score_bin,
)
from thoughtdesk.core.evaluation.metrics import wilson_interval
from thoughtdesk.core.judges.analysis import JudgeKey, pairwise_judge_pairs
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.preferences import PAIR_LABELS, TIE, PairPreference, collection_preferences, pair_key

PAIRWISE, EXPLANATION_SCORE = "pairwise", "explanation score"
SCORE_LABELS = tuple(str(s) for s in range(6))
#: Disagreements listed per judge at most (the count is always whole).
MAX_DISAGREEMENTS = 500


@dataclass(frozen=True, slots=True)
class JudgeVersion:
    """A judge (``name``) as asked one way (``version``); ``kind`` ``critique`` or ``pairwise``."""

    name: str
    version: str = ""
    kind: str = "pairwise"

    @property
    def label(self) -> str:
        return f"{self.name} [{self.version}]" if self.version else self.name


@dataclass(frozen=True, slots=True)
class ItemVerdict:
    """A verdict on one item: ``item`` (a pair of CoT keys, or one CoT key), its sample, the label."""

    item: Hashable
    sample_pk: int
    label: str


@dataclass(frozen=True, slots=True)
class Disagreement:
    """An item where a judge and the humans differ (``item`` as in :class:`ItemVerdict`)."""

    item: Hashable
    sample_pk: int
    human: str
    judge: str


@dataclass
class JudgeAgreement:
    """One judge version against the humans on one measure. ``n`` items both labelled;
    ``accuracy`` the share equal (Wilson 95 % interval); ``kappa`` Cohen's (None when undefined,
    e.g. every label the same); ``confusion[h][j]`` counts items the humans labelled
    ``categories[h]`` and the judge ``categories[j]``; ``not_judged`` human-labelled items the
    judge gave no verdict on."""

    judge: JudgeVersion
    measure: str
    categories: tuple[str, ...]
    n: int = 0
    accuracy: float | None = None
    accuracy_low: float | None = None
    accuracy_high: float | None = None
    kappa: float | None = None
    kappa_low: float | None = None
    kappa_high: float | None = None
    confusion: list[list[int]] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)
    n_disagreements: int = 0
    not_judged: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge.name,
            "version": self.judge.version,
            "kind": self.judge.kind,
            "measure": self.measure,
            "n": self.n,
            "accuracy": self.accuracy,
            "accuracy_interval": None if self.accuracy_low is None else [self.accuracy_low, self.accuracy_high],
            "kappa": self.kappa,
            "kappa_interval": None if self.kappa_low is None else [self.kappa_low, self.kappa_high],
            "categories": list(self.categories),
            "confusion": self.confusion,
            "not_judged": self.not_judged,
            "n_disagreements": self.n_disagreements,
            "disagreements": [
                {"sample_pk": d.sample_pk, "cots": _cots(d.item), "human": d.human, "judge": d.judge}
                for d in self.disagreements
            ],
        }


@dataclass
class VersionComparison:
    """A judge's versions on one measure, each scored on the ``n`` human-labelled items all of
    them judged: (version, accuracy, kappa) in version order."""

    judge: str
    measure: str
    n: int
    versions: list[tuple[str, float | None, float | None]]

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "measure": self.measure,
            "n": self.n,
            "versions": [{"version": v, "accuracy": a, "kappa": k} for v, a, k in self.versions],
        }


@dataclass
class HumanAgreementReport:
    """Every judge version against the humans in one collection (see the module doc)."""

    collection: str
    human_pairs: int = 0
    split_pairs: int = 0
    reviewers: list[str] = field(default_factory=list)
    human_scored_cots: int = 0
    judges: list[JudgeAgreement] = field(default_factory=list)
    versions: list[VersionComparison] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "human_pairs": self.human_pairs,
            "split_pairs": self.split_pairs,
            "reviewers": self.reviewers,
            "human_scored_cots": self.human_scored_cots,
            "judges": [j.to_json() for j in self.judges],
            "versions": [v.to_json() for v in self.versions],
        }


def _cots(item: Hashable) -> list[int]:
    return list(item) if isinstance(item, tuple) else [int(item)]  # type: ignore[call-overload]


# --- the comparison -------------------------------------------------------------------------


def kappa_interval(first: Sequence[Hashable], second: Sequence[Hashable], confidence: float = 0.95):
    """Cohen's kappa of paired labels and its large-sample interval: (kappa, low, high), each
    None when undefined."""
    kappa = cohen_kappa(first, second)
    n = len(first)
    if kappa is None or n == 0:
        return None, None, None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    a_counts, b_counts = Counter(first), Counter(second)
    chance = sum(a_counts[c] * b_counts[c] for c in a_counts) / (n * n)
    se = math.sqrt(max(observed * (1 - observed), 0.0) / (n * (1 - chance) ** 2))
    z = normal_quantile(confidence)
    return kappa, max(-1.0, kappa - z * se), min(1.0, kappa + z * se)


def compare_with_humans(
    judge: JudgeVersion,
    measure: str,
    verdicts: Iterable[ItemVerdict],
    human: Mapping[Any, ItemVerdict],
    categories: Sequence[str],
) -> JudgeAgreement:
    """``judge``'s verdicts against the human labels ``human`` (by item) on the items both
    labelled. A judge's second verdict on an item replaces its first."""
    mine = {v.item: v for v in verdicts}
    shared = [item for item in human if item in mine]
    seen = {mine[i].label for i in shared} | {human[i].label for i in shared}
    cats = tuple(categories) + tuple(sorted(seen - set(categories)))
    out = JudgeAgreement(judge, measure, cats, not_judged=len(human) - len(shared))
    out.confusion = [[0] * len(cats) for _ in cats]
    if not shared:
        return out
    h_labels = [human[i].label for i in shared]
    j_labels = [mine[i].label for i in shared]
    index = {c: k for k, c in enumerate(cats)}
    for h, j in zip(h_labels, j_labels, strict=True):
        out.confusion[index[h]][index[j]] += 1
    n = len(shared)
    agree = sum(h == j for h, j in zip(h_labels, j_labels, strict=True))
    out.n, out.accuracy = n, agree / n
    out.accuracy_low, out.accuracy_high = wilson_interval(agree, n)
    out.kappa, out.kappa_low, out.kappa_high = kappa_interval(h_labels, j_labels)
    wrong = [
        Disagreement(i, human[i].sample_pk, human[i].label, mine[i].label)
        for i in shared
        if human[i].label != mine[i].label
    ]
    out.n_disagreements = len(wrong)
    out.disagreements = wrong[:MAX_DISAGREEMENTS]
    return out


def compare_versions(
    name: str, measure: str, by_version: Mapping[str, Sequence[ItemVerdict]], human: Mapping[Any, ItemVerdict]
) -> VersionComparison:
    """A judge's versions on the human-labelled items that every version judged."""
    items = set(human)
    for verdicts in by_version.values():
        items &= {v.item for v in verdicts}
    common = {i: human[i] for i in human if i in items}
    rows = []
    for version, verdicts in by_version.items():
        result = compare_with_humans(JudgeVersion(name, version), measure, verdicts, common, ())
        rows.append((version, result.accuracy, result.kappa))
    return VersionComparison(name, measure, len(common), rows)


# --- the inputs -----------------------------------------------------------------------------


def pair_items(verdicts: Iterable[PairPreference]) -> list[ItemVerdict]:
    """Pairwise verdicts as items (the adapter any pairwise judge's verdicts go through)."""
    return [ItemVerdict(v.pair, v.sample_pk, v.label) for v in verdicts]


def human_pair_labels(preferences: Iterable[PairPreference]) -> tuple[dict[Hashable, ItemVerdict], int]:
    """The humans' label of each pair (the majority of its reviewers' verdicts) and the number
    of pairs left out because their reviewers split evenly."""
    by_pair: dict[tuple[int, int], list[PairPreference]] = defaultdict(list)
    for p in preferences:
        by_pair[p.pair].append(p)
    out: dict[Hashable, ItemVerdict] = {}
    split = 0
    for pair, verdicts in by_pair.items():
        ranked = Counter(v.label for v in verdicts).most_common()
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            split += 1
            continue
        out[pair] = ItemVerdict(pair, verdicts[0].sample_pk, ranked[0][0])
    return out, split


def critique_versions(lib: Library, collection: str) -> dict[int, str]:
    """The version of each critique of ``collection`` (see the module doc), by critique key."""
    cid = lib.require_collection(collection)
    rows = lib.conn.execute(
        "SELECT c.id, c.fragment_key, c.source, c.run_id FROM critique c JOIN generated_cot g ON g.id = c.cot_pk "
        "JOIN sample s ON s.id = g.sample_pk WHERE s.collection_id = ?",
        (cid,),
    ).fetchall()
    templates: dict[int, str] = {}
    runs = sorted({r[3] for r in rows if r[3] is not None})
    for start in range(0, len(runs), 500):
        chunk = runs[start : start + 500]
        for run_id, spec in lib.conn.execute(
            f"SELECT id, spec FROM run WHERE id IN ({','.join('?' * len(chunk))})", chunk
        ):
            try:
                template = json.loads(spec).get("template") or {}
            except ValueError:
                continue
            if template:
                text = f"{template.get('system', '')}\0{template.get('main', '')}"
                templates[run_id] = f"{template.get('key', '')}@{hashlib.sha1(text.encode()).hexdigest()[:8]}"
    out = {}
    for pk, key, source, run_id in rows:
        if source == "import":
            out[pk] = "imported"
        else:
            out[pk] = templates.get(run_id) or key or "-"
    return out


def human_agreement(
    lib: Library,
    collection: str,
    *,
    pairwise_judges: Mapping[JudgeVersion, Sequence[PairPreference]] | None = None,
    authors: Iterable[str] | None = None,
) -> HumanAgreementReport:
    """Every judge version of ``collection`` against its human reviewers (see the module doc):
    its critique models (explanation scores, and the pairs they rank), and the pairwise judges
    given in ``pairwise_judges`` (per judge version, its verdicts on pairs; a judge that saw each
    pair in both orders gives its consistent verdict, an inconsistent one as a tie; None: the
    library's own, :func:`stored_pairwise_judges`). ``authors``
    keeps only those reviewers' pairwise verdicts."""
    report = HumanAgreementReport(collection)
    if pairwise_judges is None:  # the library's pairwise judges (judge runs' verdicts, both orders)
        pairwise_judges = stored_pairwise_judges(lib, collection)
    preferences = collection_preferences(lib, collection, authors)
    report.reviewers = sorted({p.author for p in preferences})
    human_pairs, report.split_pairs = human_pair_labels(preferences)
    report.human_pairs = len(human_pairs)

    data = load_critique_data(lib, collection)
    versions = critique_versions(lib, collection) if data.critiques else {}
    facts_by_judge: dict[JudgeVersion, list] = defaultdict(list)
    for fact in data.critiques:
        facts_by_judge[JudgeVersion(fact.critique_model, versions.get(fact.critique_pk, "-"), "critique")].append(fact)
    human_scores = human_explanation_means(last_per_author(data.explanation_ratings))
    report.human_scored_cots = len(human_scores)
    sample_of = _samples_of(lib, set(human_scores))
    human_score_items: dict[Hashable, ItemVerdict] = {
        cot: ItemVerdict(cot, sample_of.get(cot, 0), str(score_bin(score))) for cot, score in human_scores.items()
    }

    pair_verdicts: dict[JudgeVersion, list[ItemVerdict]] = {}
    score_verdicts: dict[JudgeVersion, list[ItemVerdict]] = {}
    for judge in sorted(facts_by_judge, key=lambda j: (j.name, j.version)):
        scores, _dimensions = per_cot_scores(facts_by_judge[judge])
        score_verdicts[judge] = [
            ItemVerdict(cot, human_score_items[cot].sample_pk, str(score_bin(s)))
            for cot, s in scores.items()
            if cot in human_score_items
        ]
        pair_verdicts[judge] = pair_items(critique_pair_verdicts(scores, human_pairs.values()))
    for judge, verdicts in (pairwise_judges or {}).items():
        pair_verdicts[judge] = pair_items(verdicts)

    for judge, items in pair_verdicts.items():
        if human_pairs:
            report.judges.append(compare_with_humans(judge, PAIRWISE, items, human_pairs, PAIR_LABELS))
    for judge, items in score_verdicts.items():
        if human_score_items:
            report.judges.append(compare_with_humans(judge, EXPLANATION_SCORE, items, human_score_items, SCORE_LABELS))
    for measure, table, human in (
        (PAIRWISE, pair_verdicts, human_pairs),
        (EXPLANATION_SCORE, score_verdicts, human_score_items),
    ):
        by_name: dict[str, dict[str, list[ItemVerdict]]] = defaultdict(dict)
        for judge, items in table.items():
            by_name[judge.name][judge.version] = items
        for name, by_version in sorted(by_name.items()):
            if len(by_version) > 1 and human:
                report.versions.append(compare_versions(name, measure, by_version, human))
    return report


def stored_pairwise_judges(lib: Library, collection: str) -> dict[JudgeVersion, list[PairPreference]]:
    """The pairwise judges whose verdicts ``collection`` holds (issue 26, point 1), as
    :func:`human_agreement` takes them: per judge model and template version, its decided pairs
    (a verdict that flipped with the order is a tie; an unparseable one gives no verdict)."""
    return pairwise_judges_of(pairwise_judge_pairs(lib, collection))


def pairwise_judges_of(
    pairs: Mapping[JudgeKey, Sequence[tuple[int, int, int, int | None]]],
) -> dict[JudgeVersion, list[PairPreference]]:
    """Judge analysis' decided pairs (``JudgementAnalysis.pairs``) as :func:`human_agreement`'s
    ``pairwise_judges``: one judge version per model and template version."""
    return {
        JudgeVersion(judge.model, f"{judge.template}@{judge.template_version}", "pairwise"): [
            PairPreference(sample, low, high, preferred) for sample, low, high, preferred in decided
        ]
        for judge, decided in pairs.items()
    }


def critique_pair_verdicts(scores: Mapping[int, float], pairs: Iterable[ItemVerdict]) -> list[PairPreference]:
    """A critique model as a pairwise judge of ``pairs``: of the two CoTs it scored
    (``scores``, by CoT), the higher is preferred, equal scores are a tie; pairs with a CoT it
    did not score get no verdict."""
    out = []
    for item in pairs:
        pair: tuple[int, int] = item.item  # type: ignore[assignment]
        first, second = pair
        if first in scores and second in scores:
            a, b = scores[first], scores[second]
            preferred = None if a == b else (first if a > b else second)
            out.append(PairPreference(item.sample_pk, first, second, preferred))
    return out


def _samples_of(lib: Library, cot_pks: set[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    pks = sorted(cot_pks)
    for start in range(0, len(pks), 500):
        chunk = pks[start : start + 500]
        out.update(
            lib.conn.execute(
                f"SELECT id, sample_pk FROM generated_cot WHERE id IN ({','.join('?' * len(chunk))})", chunk
            ).fetchall()
        )
    return out


def human_agreement_json(
    lib: Library,
    collection: str,
    *,
    pairwise_judges: Mapping[JudgeVersion, Sequence[PairPreference]] | None = None,
) -> dict[str, Any]:
    """The ``human_agreement`` key of ``thoughtdesk judgements COLLECTION --json``:
    :func:`human_agreement` as JSON (proportions 0..1; a disagreement names its sample and CoTs)."""
    return human_agreement(lib, collection, pairwise_judges=pairwise_judges).to_json()


__all__ = [
    "EXPLANATION_SCORE",
    "PAIRWISE",
    "TIE",
    "Disagreement",
    "HumanAgreementReport",
    "ItemVerdict",
    "JudgeAgreement",
    "JudgeVersion",
    "VersionComparison",
    "compare_versions",
    "compare_with_humans",
    "critique_pair_verdicts",
    "critique_versions",
    "human_agreement",
    "human_agreement_json",
    "human_pair_labels",
    "kappa_interval",
    "pair_items",
    "pair_key",
    "pairwise_judges_of",
    "stored_pairwise_judges",
]
