"""``thoughtdesk stats COLLECTION [--overlap] [--json]``: dataset statistics as text tables or
JSON (docs/stats.md)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, ProgressLine, open_library, whole

if TYPE_CHECKING:
    from thoughtdesk.core.stats import CollectionStatistics


def cmd_stats(args: argparse.Namespace) -> int:
    from thoughtdesk.core.stats import collection_statistics

    with open_library(args, create=False) as lib:
        bar = ProgressLine("reading")
        stats = collection_statistics(
            lib, args.collection, overlap=args.overlap, n=args.ngram, overlap_by=args.overlap_by, progress=bar
        )
        bar.finish()
    if args.json:
        print(json.dumps(stats.to_json(), indent=2, ensure_ascii=False))
        return EXIT_OK
    print("\n\n".join(_stats_tables(stats)))
    return EXIT_OK


def _table(headers: list[str], rows: list[list[str]], left: int = 2) -> str:
    """Columns padded to their widest cell; the first ``left`` columns left-aligned."""
    table = [headers, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i < left else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in table
    )


def _stats_tables(stats: CollectionStatistics) -> list[str]:
    """The text form of ``thoughtdesk stats``: counts, token lengths, answer types and choices,
    and each overlap matrix (containment, in percent)."""
    from thoughtdesk.core.stats import LENGTH_FIELDS

    splits = stats.splits
    count_names = ["samples", "generated_cots", "answers", "annotations", "with_context", "with_reference_cot"]
    rows = [[s.dataset, s.split, *(str(getattr(s, h)) for h in count_names)] for s in splits]
    rows.append(["total", "", *(str(sum(getattr(s, h) for s in splits)) for h in count_names)])
    out = [_table(["dataset", "split", *count_names], rows)]
    rows = []
    for s in splits:
        for name in LENGTH_FIELDS:
            summary = s.lengths[name]
            if summary.count:
                p = summary.percentiles
                rows.append(
                    [s.dataset, s.split, name, str(summary.count), f"{summary.mean:.1f}", str(summary.minimum),
                     f"{p[25]:g}", f"{p[50]:g}", f"{p[75]:g}", f"{p[95]:g}", str(summary.maximum)]
                )  # fmt: skip
    headers = ["dataset", "split", "tokens of", "texts", "mean", "min", "p25", "median", "p75", "p95", "max"]
    out.append("token lengths (words)\n" + _table(headers, rows, left=3))
    rows = [
        [
            s.dataset,
            s.split,
            ", ".join(f"{t or '(none)'} {n}" for t, n in sorted(s.answer_types.items())),
            ", ".join(f"{k}: {n}" for k, n in sorted(s.choice_counts.items())),
        ]
        for s in splits
    ]
    out.append(_table(["dataset", "split", "answer types", "choices: samples"], rows, left=4))
    for matrix in stats.overlap:
        values = matrix.containment
        rows = [
            [unit, str(size), *(f"{100 * v:.1f}" for v in row)]
            for unit, size, row in zip(matrix.units, matrix.sizes, values, strict=True)
        ]
        headers = ["", "distinct", *(str(i + 1) for i in range(len(matrix.units)))]
        rows = [[f"{i + 1} {r[0]}", *r[1:]] for i, r in enumerate(rows)]
        out.append(
            f"{matrix.field} {matrix.n}-gram overlap: % of the row's distinct n-grams also in the column's\n"
            + _table(headers, rows, left=1)
        )
    return out


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "stats")
    p.add_argument("collection", help="the collection's name")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--overlap", action="store_true", help="also the n-gram overlap of questions and of reference CoTs")
    p.add_argument(
        "--ngram",
        type=whole(1, 64),
        default=8,  # core.stats.DEFAULT_N (not imported: numpy stays out of the start-up)
        metavar="N",
        help="n-gram length in words for --overlap (default 8)",
    )
    p.add_argument(
        "--overlap-by",
        choices=("dataset", "split"),
        default="dataset",
        help="compare whole datasets (default) or every dataset split with every other",
    )
    p.set_defaults(func=cmd_stats)
