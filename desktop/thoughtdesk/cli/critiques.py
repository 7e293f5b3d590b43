"""``thoughtdesk critiques COLLECTION [--json|--csv|--markdown]``: the critique analysis.

Per critique model: critiques, mean explanation score with its 95 % interval, dimensions, mean
human rating of its critiques. Per student condition: mean score, dimension shares, AUROC of
the score for correct answers. Agreement between critique models and with the human scores
(Spearman, Kendall, dimension match), Krippendorff's alpha among human raters
(docs/critiques-analysis.md). Read-only. A collection without critiques prints a note on stderr
(and valid, empty JSON/CSV on stdout) and exits 0; an unknown collection exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, open_library


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "critiques",
        description="Critique analysis: mean explanation scores with 95 % intervals, flaw dimensions, "
        "human ratings, AUROC for correct answers, Spearman/Kendall agreement between critique models "
        "and with human scores, Krippendorff's alpha among human raters.",
    )
    p.add_argument("collection", help="the collection's name")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print JSON (every table, full precision)")
    form.add_argument("--csv", action="store_true", help="print the per-critique-model table as CSV")
    form.add_argument("--markdown", action="store_true", help="print Markdown tables")
    p.set_defaults(func=cmd_critiques)


def cmd_critiques(args: argparse.Namespace) -> int:
    from thoughtdesk.core.critiques.analysis import analyse_collection
    from thoughtdesk.core.critiques.analysis_report import empty_message, to_csv, to_json_dict, to_markdown, to_text

    with open_library(args, create=False) as lib:
        analysis = analyse_collection(lib, args.collection)
    if not analysis.n_critiques and (args.json or args.csv):
        print(f"thoughtdesk: {empty_message(args.collection)}", file=sys.stderr)
    if args.json:
        text = json.dumps(to_json_dict(analysis), indent=2, ensure_ascii=False) + "\n"
    elif args.csv:
        text = to_csv(analysis)
    elif args.markdown:
        text = to_markdown(analysis)
    else:
        text = to_text(analysis)
    sys.stdout.write(text)
    return EXIT_OK
