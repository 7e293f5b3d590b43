"""Analysis tables: a :class:`~thoughtdesk.core.critiques.analysis.CritiqueAnalysis` as JSON, CSV, Markdown or text.

As ``core.evaluation.tables``: JSON and CSV carry full precision (shares as 0..1), Markdown and
text round for reading. Model and condition names are data: Markdown escapes what would break a
table cell. CSV is the per-critique-model table (one row per model, one column per dimension);
the other tables are in the JSON and Markdown output.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from typing import Any

from thoughtdesk.core.critiques.analysis import (
    HUMAN,
    AgreementRow,
    CritiqueAnalysis,
    CritiqueModelRow,
    StudentRow,
)

EMPTY_HINT = (
    "import a DS Critique Bank file (File > Import) or run critiques (Generate > Critique… or `thoughtdesk critique`)"
)


def empty_message(collection: str) -> str:
    """What to say about a collection without critiques."""
    return f"Collection {collection!r} has no critiques: {EMPTY_HINT}."


def to_json_dict(analysis: CritiqueAnalysis) -> dict[str, Any]:
    """A JSON-ready dict; ``critique_models`` has ``model``, ``n``, ``mean_explanation_score``,
    ``mean_critique_score`` (null without ratings) and ``dimensions`` (name -> count) and more."""
    models = []
    for row in analysis.critique_models:
        item = asdict(row)
        item["score_counts"] = {str(i): c for i, c in enumerate(row.score_counts)}
        models.append(item)
    return {
        "collection": analysis.collection,
        "n_critiques": analysis.n_critiques,
        "dimension_names": list(analysis.dimension_names),
        "critique_models": models,
        "student_conditions": [asdict(r) for r in analysis.students],
        "agreement": [asdict(r) for r in analysis.agreement],
        "human_agreement": asdict(analysis.human),
    }


CSV_FIELDS = (
    "model",
    "n",
    "n_scored",
    "mean_explanation_score",
    "score_low",
    "score_high",
    "mean_critique_score",
    "n_critique_ratings",
    "no_dimension",
)


def to_csv(analysis: CritiqueAnalysis) -> str:
    """The per-critique-model table as CSV: the fields above, then one count column per dimension."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*CSV_FIELDS, *analysis.dimension_names])
    for row in analysis.critique_models:
        values = [getattr(row, f) for f in CSV_FIELDS] + [row.dimensions.get(d, 0) for d in analysis.dimension_names]
        writer.writerow(["" if v is None else v for v in values])
    return out.getvalue()


# Cells for people -------------------------------------------------------------------------------


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _interval(low: float | None, high: float | None, digits: int = 2) -> str:
    return "" if low is None or high is None else f"[{low:.{digits}f}, {high:.{digits}f}]"


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.0f}%"


def top_dimensions(counts: dict[str, float], limit: int = 3) -> str:
    """The most frequent dimensions as "name 40%, name 25%" (counts or shares)."""
    total = sum(counts.values())
    if not total:
        return ""
    ranked = sorted(((v, k) for k, v in counts.items() if v), key=lambda p: (-p[0], p[1]))[:limit]
    return ", ".join(f"{k} {100 * v / total:.0f}%" for v, k in ranked)


MODEL_HEADERS = ["critique model", "n", "scored", "mean score", "95% CI (t)", "top dimensions", "human rating", "n"]
STUDENT_HEADERS = [
    "dataset",
    "split",
    "student model",
    "condition",
    "critique model",
    "n",
    "mean score",
    "95% CI (t)",
    "top dimensions",
    "correct/not",
    "AUROC",
    "95% CI",
]
AGREEMENT_HEADERS = ["A", "B", "n", "Spearman", "95% CI", "Kendall", "95% CI", "dimension match", "n"]


def model_cells(row: CritiqueModelRow) -> list[str]:
    """A critique model's row for tables (text, Markdown, the GUI)."""
    return [
        row.model,
        str(row.n),
        str(row.n_scored),
        _num(row.mean_explanation_score),
        _interval(row.score_low, row.score_high),
        top_dimensions({k: float(v) for k, v in row.dimensions.items()}),
        _num(row.mean_critique_score),
        str(row.n_critique_ratings),
    ]


def student_cells(row: StudentRow) -> list[str]:
    """A student condition's row for tables."""
    return [
        row.dataset,
        row.split,
        row.model,
        row.condition,
        row.critique_model,
        str(row.n),
        _num(row.mean_explanation_score),
        _interval(row.score_low, row.score_high),
        top_dimensions(row.dimension_shares),
        f"{row.correct}/{row.incorrect}",
        _num(row.auroc),
        _interval(row.auroc_low, row.auroc_high),
    ]


def agreement_cells(row: AgreementRow) -> list[str]:
    """An agreement row for tables."""
    return [
        row.first,
        row.second,
        str(row.n),
        _num(row.spearman),
        _interval(row.spearman_low, row.spearman_high),
        _num(row.kendall),
        _interval(row.kendall_low, row.kendall_high),
        _pct(row.dimension_match) if row.dimension_match is not None else "",
        str(row.n_dimension) if row.second != HUMAN else "",
    ]


def human_lines(analysis: CritiqueAnalysis) -> list[str]:
    """Krippendorff's alpha among human raters, in words."""
    h = analysis.human
    lines = []
    if h.explanation_raters:
        lines.append(
            f"Human explanation scores: {h.explanation_raters} rater(s), {h.explanation_items} CoT(s) rated by 2+; "
            f"Krippendorff's alpha interval {_num(h.explanation_alpha_interval)}, "
            f"ordinal {_num(h.explanation_alpha_ordinal)}."
        )
    else:
        lines.append("No human explanation scores.")
    if h.critique_raters:
        lines.append(
            f"Human critique ratings: {h.critique_raters} rater(s), {h.critique_items} critique(s) rated by 2+; "
            f"Krippendorff's alpha ordinal {_num(h.critique_alpha_ordinal)}."
        )
    return lines


def _header(analysis: CritiqueAnalysis) -> list[str]:
    return [
        f"Collection {analysis.collection!r}: {analysis.n_critiques:,} critique(s) by "
        f"{len(analysis.critique_models)} critique model(s)."
    ]


def _aligned(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    return ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in [headers, *rows]]


def to_text(analysis: CritiqueAnalysis) -> str:
    """Aligned plain-text tables for a terminal."""
    if not analysis.n_critiques:
        return empty_message(analysis.collection) + "\n"
    lines = _header(analysis) + ["", "Per critique model (explanation score 0-5; human rating of critiques 0-3):"]
    lines += _aligned(MODEL_HEADERS, [model_cells(r) for r in analysis.critique_models])
    lines += ["", "Per student condition (AUROC: explanation score separating correct from not correct):"]
    lines += _aligned(STUDENT_HEADERS, [student_cells(r) for r in analysis.students])
    if analysis.agreement:
        lines += ["", "Agreement on explanation scores (Fisher-z 95% intervals):"]
        lines += _aligned(AGREEMENT_HEADERS, [agreement_cells(r) for r in analysis.agreement])
    lines += [""] + human_lines(analysis)
    return "\n".join(lines) + "\n"


def md_cell(text: str) -> str:
    """``text`` safe in a Markdown table cell (backslashes, pipes and newlines)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(md_cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return lines + ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]


def to_markdown(analysis: CritiqueAnalysis) -> str:
    """Markdown tables (GitHub style)."""
    if not analysis.n_critiques:
        return md_cell(empty_message(analysis.collection)) + "\n"
    lines = [md_cell(line) for line in _header(analysis)]
    lines += ["", "### Critique models", ""]
    lines += _md_table(MODEL_HEADERS, [model_cells(r) for r in analysis.critique_models])
    lines += ["", "### Student conditions", ""]
    lines += _md_table(STUDENT_HEADERS, [student_cells(r) for r in analysis.students])
    if analysis.agreement:
        lines += ["", "### Agreement", ""]
        lines += _md_table(AGREEMENT_HEADERS, [agreement_cells(r) for r in analysis.agreement])
    lines += ["", *(md_cell(line) for line in human_lines(analysis))]
    return "\n".join(lines) + "\n"
