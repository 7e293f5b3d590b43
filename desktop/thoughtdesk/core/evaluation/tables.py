"""Accuracy tables: an :class:`~thoughtdesk.core.evaluation.evaluate.EvaluationResult` as JSON, CSV, Markdown or text.

JSON and CSV carry raw proportions (0..1) and full precision; Markdown and text show
percentages rounded for reading. Dataset and model names are data: Markdown escapes the
characters that would break a table cell.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from typing import Any

from thoughtdesk.core.evaluation.evaluate import EvaluationResult
from thoughtdesk.core.evaluation.metrics import AccuracyRow

ROW_FIELDS = (
    "dataset",
    "split",
    "model",
    "condition",
    "n",
    "correct",
    "incorrect",
    "unextractable",
    "accuracy",
    "wilson_low",
    "wilson_high",
    "share_unextractable",
    "questions",
    "majority_accuracy",
    "mean_tokens",
    "mean_cost",
    "truncated",
    "share_truncated",
    "scored",
    "share_reasoning",
    "median_reasoning_tokens",
)
_SOURCE_TEXT = {
    "thoughtdesk": "ThoughtDesk's scoring",
    "file": "correctness stored in the imported file",
    "mixed": "ThoughtDesk's scoring where re-scored or never scored, else the stored correctness",
    "none": "no scored answers",
}


def to_json_dict(result: EvaluationResult) -> dict[str, Any]:
    """A JSON-ready dict: collection, answer counts, rows and comparisons (proportions 0..1)."""
    report = result.rescore_outcome
    return {
        "collection": result.collection,
        "correctness_source": result.source,
        "truncated_as_wrong": result.truncated_as_wrong,
        "answers": {
            "scored_by_thoughtdesk": result.scored_by_thoughtdesk,
            "scored_from_file": result.scored_from_file,
            "scored_now": result.scored_now,
            "unscored": result.unscored,
            "truncated": result.truncated,
        },
        "rescore": None
        if report is None
        else {
            "answers": report.answers,
            "correct": report.correct,
            "incorrect": report.incorrect,
            "unextractable": report.unextractable,
            "changed": report.changed,
            "reasons": report.reasons,
        },
        "rows": [{f: getattr(row, f) for f in ROW_FIELDS} for row in result.rows],
        "comparisons": [asdict(c) for c in result.comparisons],
        "comparisons_skipped": [{"dataset": d, "split": s} for d, s in result.comparisons_skipped],
    }


def to_csv(result: EvaluationResult) -> str:
    """The accuracy table as CSV, one row per dataset x split x model x condition."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ROW_FIELDS)
    for row in result.rows:
        writer.writerow(["" if getattr(row, f) is None else getattr(row, f) for f in ROW_FIELDS])
    return out.getvalue()


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def _row_cells(row: AccuracyRow) -> list[str]:
    return [
        row.dataset,
        row.split,
        row.model,
        row.condition,
        str(row.n),
        _pct(row.accuracy) if row.scored else "",
        f"{100 * row.wilson_low:.1f}-{100 * row.wilson_high:.1f}",
        _pct(row.share_unextractable),
        _pct(row.majority_accuracy),
        _num(row.mean_tokens),
        _num(row.mean_cost, 4),
        _pct(row.share_truncated),
        _pct(row.share_reasoning),
        _num(row.median_reasoning_tokens, 0),
    ]


ROW_HEADERS = [
    "dataset",
    "split",
    "model",
    "condition",
    "n",
    "accuracy",
    "95% CI (Wilson)",
    "not extractable",
    "majority vote",
    "mean tokens",
    "mean cost $",
    "truncated",
    "with reasoning",
    "median reasoning tokens",
]
COMPARISON_HEADERS = [
    "dataset",
    "split",
    "A",
    "B",
    "n",
    "acc A",
    "acc B",
    "only A",
    "only B",
    "McNemar p",
    "A - B (95% CI)",
]


def _comparison_cells(result: EvaluationResult) -> list[list[str]]:
    return [
        [
            c.dataset,
            c.split,
            f"{c.model_a}: {c.condition_a}",
            f"{c.model_b}: {c.condition_b}",
            str(c.n),
            _pct(c.accuracy_a),
            _pct(c.accuracy_b),
            str(c.only_a),
            str(c.only_b),
            f"{c.p_value:.4g}",
            f"{100 * c.difference:+.1f} ({100 * c.difference_low:+.1f} to {100 * c.difference_high:+.1f}) pp",
        ]
        for c in result.comparisons
    ]


def scored_now_text(result: EvaluationResult) -> str:
    """The note on answers the file left unscored (empty when there were none): they are in the
    table, scored by this evaluation, not extractable counted as not correct."""
    parts = []
    if result.scored_now:
        parts.append(
            f"{result.scored_now:,} answer(s) had no stored correctness (null: never evaluated) and were "
            "scored now by ThoughtDesk, not extractable counted as not correct (not saved; re-score to save)"
        )
    if result.unscored:
        parts.append(f"{result.unscored:,} answer(s) of samples without a gold answer are left out")
    return "; ".join(parts)


def _header_lines(result: EvaluationResult) -> list[str]:
    scored = result.scored_by_thoughtdesk + result.scored_from_file + result.scored_now
    lines = [
        f"Collection {result.collection!r}: {scored:,} scored answer(s); correctness from "
        f"{_SOURCE_TEXT[result.source]}."
    ]
    note = scored_now_text(result)
    if note:
        lines.append(note + ".")
    if result.rescore_outcome is not None:
        lines.append(result.rescore_outcome.summary + ".")
    truncated = truncated_text(result)
    if truncated:
        lines.append(truncated + ".")
    return lines


def truncated_text(result: EvaluationResult, switch: str = "--truncated-as-wrong") -> str:
    """The note on truncated answers (empty when there were none): how accuracy counted them,
    naming the ``switch`` that changes it."""
    if not result.truncated:
        return ""
    how = (
        "counted as not correct"
        if result.truncated_as_wrong
        else f"left out of the accuracy's denominator ({switch} counts them as not correct)"
    )
    return f"{result.truncated:,} answer(s) were cut by the token limit (truncated) and are {how}"


def _aligned(headers: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    return [
        "  ".join(
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=False))
        ).rstrip()
        for line in [headers, *rows]
    ]


def to_text(result: EvaluationResult) -> str:
    """Aligned plain-text tables for a terminal."""
    lines = _header_lines(result) + [""]
    lines += _aligned(ROW_HEADERS, [_row_cells(r) for r in result.rows], right=set(range(4, 14)))
    if result.comparisons:
        lines += ["", "Pairwise comparisons on the same questions (first sample; not extractable counts as wrong):"]
        lines += _aligned(COMPARISON_HEADERS, _comparison_cells(result), right=set(range(4, 11)))
    for dataset, split in result.comparisons_skipped:
        lines.append(
            f"{dataset}/{split}: too many conditions to compare every pair; compare chosen pairs in the Results view."
        )
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return lines


def to_markdown(result: EvaluationResult) -> str:
    """Markdown tables (GitHub style) for a report or a README."""
    lines = [_md_cell(line) for line in _header_lines(result)] + [""]
    lines += _md_table(ROW_HEADERS, [_row_cells(r) for r in result.rows])
    if result.comparisons:
        lines += ["", "Pairwise comparisons on the same questions (McNemar exact; paired bootstrap 95 % CI):", ""]
        lines += _md_table(COMPARISON_HEADERS, _comparison_cells(result))
    return "\n".join(lines) + "\n"
