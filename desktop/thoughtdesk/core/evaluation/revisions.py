"""Accuracy before and after revision (issue 26, point 5): each revised CoT (``revision_of``)
paired with the CoT it revises, grouped by the revised CoT's condition (its model and prompt
condition), the critique model whose feedback was used and the revising model, with McNemar's
test on the pairs.

A pair counts when both CoTs' first answers are scored (an unextractable answer counts as not
correct, as in accuracy). McNemar's test compares the discordant pairs: ``fixed`` (wrong before,
right after) against ``broken`` (right before, wrong after). With fewer than
:data:`EXACT_BELOW` discordant pairs it is the exact binomial test (two-sided, at 1/2), else the
chi-square test with continuity correction, ``(|b - c| - 1)^2 / (b + c)`` on one degree of freedom.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from thoughtdesk.core.evaluation.evaluate import GUIDE_SQL, UNKNOWN_MODEL, condition_label
from thoughtdesk.core.evaluation.metrics import mcnemar_exact, wilson_interval
from thoughtdesk.core.library.store import Library

#: Discordant pairs below which McNemar's test is the exact binomial test.
EXACT_BELOW = 25


@dataclass(frozen=True, slots=True)
class McNemar:
    """McNemar's test of paired before/after correctness: ``fixed`` = wrong -> right, ``broken`` =
    right -> wrong; ``method`` ``exact`` (binomial) or ``chi2`` (continuity-corrected)."""

    p_value: float
    fixed: int
    broken: int
    method: str


def mcnemar(before: Sequence[bool], after: Sequence[bool]) -> McNemar:
    """McNemar's test for paired correctness (see the module doc for which form)."""
    exact = mcnemar_exact(after, before)  # only_a: right after only (fixed); only_b: broken
    fixed, broken = exact.only_a, exact.only_b
    if fixed + broken < EXACT_BELOW:
        return McNemar(exact.p_value, fixed, broken, "exact")
    from scipy.stats import chi2  # over a second to import: on first use only

    statistic = (abs(fixed - broken) - 1) ** 2 / (fixed + broken)
    return McNemar(float(chi2.sf(statistic, 1)), fixed, broken, "chi2")


@dataclass(frozen=True, slots=True)
class RevisionPair:
    """One revised CoT and the CoT it revises (primary keys), their sample, and correctness."""

    sample_pk: int
    before_cot_pk: int
    after_cot_pk: int
    before: bool
    after: bool


@dataclass
class RevisionGroup:
    """The revisions of one condition: the revised CoTs' ``model`` and prompt ``condition``, the
    ``critique_model`` whose feedback was used and the ``reviser`` model. Accuracies are 0..1
    with Wilson 95 % intervals; ``unscored`` revisions lack a scored answer (before or after)."""

    model: str
    condition: str
    critique_model: str
    reviser: str
    pairs: list[RevisionPair] = field(default_factory=list)
    unscored: int = 0

    @property
    def n(self) -> int:
        return len(self.pairs)

    @property
    def before_correct(self) -> int:
        return sum(p.before for p in self.pairs)

    @property
    def after_correct(self) -> int:
        return sum(p.after for p in self.pairs)

    @property
    def before_accuracy(self) -> float | None:
        return self.before_correct / self.n if self.n else None

    @property
    def after_accuracy(self) -> float | None:
        return self.after_correct / self.n if self.n else None

    def test(self) -> McNemar:
        return mcnemar([p.before for p in self.pairs], [p.after for p in self.pairs])

    def to_json(self) -> dict[str, Any]:
        test = self.test()
        return {
            "model": self.model,
            "condition": self.condition,
            "critique_model": self.critique_model,
            "reviser": self.reviser,
            "pairs": self.n,
            "unscored": self.unscored,
            "before_correct": self.before_correct,
            "after_correct": self.after_correct,
            "before_accuracy": self.before_accuracy,
            "after_accuracy": self.after_accuracy,
            "before_interval": list(wilson_interval(self.before_correct, self.n)) if self.n else None,
            "after_interval": list(wilson_interval(self.after_correct, self.n)) if self.n else None,
            "fixed": test.fixed,
            "broken": test.broken,
            "mcnemar_p": test.p_value,
            "mcnemar_method": test.method,
        }


_FIRST_ANSWER = "(SELECT correct_answer FROM answer WHERE cot_pk = {0}.id ORDER BY position LIMIT 1)"
_FIRST_EXTRACTION = "(SELECT answer_extraction FROM answer WHERE cot_pk = {0}.id ORDER BY position LIMIT 1)"


def revision_outcomes(lib: Library, collection: str) -> list[RevisionGroup]:
    """Accuracy before and after revision per condition of collection ``collection`` (see the
    module doc), ordered by model, condition, critique model and reviser. Empty: no revisions."""
    cid = lib.require_collection(collection)
    rows = lib.conn.execute(
        f"""SELECT r.sample_pk, g.id, r.id, coalesce(g.model_name, g.model), g.instruction, g.cot_trigger,
                   {_FIRST_EXTRACTION.format("g")}, {GUIDE_SQL},
                   coalesce(c.critique_model, CASE WHEN json_valid(r.extra)
                            THEN json_extract(r.extra, '$.thoughtdesk.revision.critique_model') END),
                   coalesce(r.model_name, r.model), {_FIRST_ANSWER.format("g")}, {_FIRST_ANSWER.format("r")}
            FROM generated_cot r JOIN sample s ON s.id = r.sample_pk
            JOIN generated_cot g ON g.id = r.revision_of
            LEFT JOIN critique c ON c.id = r.revision_critique
            WHERE s.collection_id = ? ORDER BY r.sample_pk, r.id""",
        (cid,),
    ).fetchall()
    groups: dict[tuple[str, str, str, str], RevisionGroup] = {}
    for sample_pk, before_pk, after_pk, model, instruction, trigger, extraction, guide, critic, reviser, b, a in rows:
        key = (
            model or UNKNOWN_MODEL,
            condition_label(instruction, trigger, extraction, guide),
            critic or "-",
            reviser or UNKNOWN_MODEL,
        )
        group = groups.get(key)
        if group is None:
            group = groups[key] = RevisionGroup(*key)
        if a is None or b is None:
            group.unscored += 1
            continue
        group.pairs.append(RevisionPair(sample_pk, before_pk, after_pk, bool(b), bool(a)))
    return [groups[k] for k in sorted(groups)]


def revisions_table(groups: Sequence[RevisionGroup]) -> str:
    """A plain-text table of :func:`revision_outcomes` for the terminal."""
    if not groups:
        return "no revised CoTs in this collection (make some with `thoughtdesk revise`)"
    header = (
        "model",
        "condition",
        "critique model",
        "reviser",
        "pairs",
        "before",
        "after",
        "fixed",
        "broken",
        "McNemar p",
    )
    lines = [header]
    for g in groups:
        test = g.test()
        lines.append(
            (
                g.model,
                g.condition,
                g.critique_model,
                g.reviser,
                str(g.n) + (f" (+{g.unscored} unscored)" if g.unscored else ""),
                "-" if g.before_accuracy is None else f"{100 * g.before_accuracy:.1f}%",
                "-" if g.after_accuracy is None else f"{100 * g.after_accuracy:.1f}%",
                str(test.fixed),
                str(test.broken),
                f"{test.p_value:.3g} ({test.method})",
            )
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in lines)
