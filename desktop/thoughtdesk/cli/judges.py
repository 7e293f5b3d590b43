"""``thoughtdesk judgements COLLECTION [--json] [--judge M]``: pairwise judges' figures.

Per judge (model + template version): pairs judged in both orders, position consistency, the
first-position rate, ties (inconsistent pairs among them), unparseable verdicts. Per condition:
wins, losses, ties and a Bradley-Terry strength with a 95 % bootstrap interval (docs/judges.md).
Read-only. A collection without verdicts prints a note on stderr and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, open_library, whole


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "judgements",
        description="Pairwise judges measured: position consistency (same winner in both orders), first-position "
        "rate, ties, unparseable verdicts; per condition wins/losses/ties and a Bradley-Terry strength with a "
        "bootstrap interval. Verdicts that flip with the order count as ties.",
    )
    p.add_argument("collection", help="the collection's name")
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON (keys judges, conditions and human_agreement: every judge against human reviewers)",
    )
    p.add_argument("--judge", metavar="MODEL", help="only this judge model")
    p.add_argument(
        "--resamples", type=whole(0, 100_000), default=200, metavar="B", help="bootstrap resamples (default 200)"
    )
    p.set_defaults(func=cmd_judgements)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def cmd_judgements(args: argparse.Namespace) -> int:
    from thoughtdesk.core.judges.analysis import analyse_judgements
    from thoughtdesk.core.review.judge_agreement import human_agreement_json, pairwise_judges_of

    with open_library(args, create=False) as lib:
        analysis = analyse_judgements(lib, args.collection, judge=args.judge, n_resamples=args.resamples)
        humans = (
            human_agreement_json(lib, args.collection, pairwise_judges=pairwise_judges_of(analysis.pairs))
            if args.json
            else None
        )
    if not analysis.judges:
        which = f" by judge {args.judge!r}" if args.judge else ""
        print(
            f"thoughtdesk: collection {args.collection!r} has no pairwise verdicts{which}; "
            "`thoughtdesk judge COLLECTION --pairwise --model M` makes them",
            file=sys.stderr,
        )
    if args.json:
        document = {**analysis.to_json(), "human_agreement": humans}
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    lines = ["judge\ttemplate\tpairs\tposition_consistency\tfirst_position_rate\tties\tinconsistent\tunparseable"]
    for j in analysis.judges:
        lines.append(
            f"{j.model}\t{j.template} {j.template_version}\t{j.pairs}\t{_rate(j.position_consistency)}\t"
            f"{_rate(j.first_position_rate)}\t{j.ties}\t{j.inconsistent}\t{j.unparseable}"
        )
    if analysis.conditions:
        lines.append("")
        lines.append("judge\tcondition\twins\tlosses\tties\tstrength\t95% interval")
        for c in analysis.conditions:
            lines.append(
                f"{c.judge}\t{c.condition}\t{c.wins}\t{c.losses}\t{c.ties}\t{c.strength:+.3f}\t"
                f"[{c.low:+.3f}, {c.high:+.3f}]"
            )
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
