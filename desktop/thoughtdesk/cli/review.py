"""``thoughtdesk annotations export|import`` and ``thoughtdesk agreement COLLECTION``.

Reviewers exchange annotation files from the command line as they do in the GUI (the files carry
their explanation and critique ratings too); a failed or partial import prints what matched,
what did not and why, and exits 1 when nothing was merged.
"""

from __future__ import annotations

import argparse
import json
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_FAIL, EXIT_OK, ProgressLine, open_library, whole
from thoughtdesk.core.errors import ThoughtDeskError


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "annotations")
    actions = p.add_subparsers(dest="annotations_action", required=True)
    exp = actions.add_parser("export", help="write annotations and ratings to a thoughtdesk-annotations file")
    exp.add_argument("path", help="the file to write (JSON)")
    exp.add_argument("--author", help="only this author's annotations and ratings (default: everyone's)")
    exp.add_argument("--collection", help="only this collection")
    exp.add_argument("--json", action="store_true", help="print what was written as JSON")
    exp.add_argument("--force", action="store_true", help="overwrite a file that is not an earlier export")
    exp.set_defaults(func=cmd_export)
    imp = actions.add_parser("import", help="merge a thoughtdesk-annotations or ThoughtSource collection file")
    imp.add_argument("path", help="the file to read")
    imp.add_argument("--collection", help="match samples of this collection only")
    imp.add_argument(
        "--strict", action="store_true", help="merge nothing unless every annotation and rating matches the library"
    )
    imp.add_argument("--dry-run", action="store_true", help="report only; change nothing")
    imp.add_argument("--json", action="store_true", help="print what was merged and what was not as JSON")
    imp.add_argument(
        "--show-unmatched", type=whole(0), default=10, metavar="N", help="list up to N unmatched records (default: 10)"
    )
    imp.set_defaults(func=cmd_import)
    agr = add_command(sub, "agreement")
    agr.add_argument("collection", help="the collection's name")
    agr.add_argument(
        "--label",
        action="append",
        dest="labels",
        metavar="KEY",
        help="a label key (repeatable; default: every label used)",
    )
    agr.add_argument(
        "--author",
        action="append",
        dest="authors",
        metavar="NAME",
        help="a reviewer (repeatable; default: everyone who annotated)",
    )
    agr.add_argument(
        "--steps",
        action="store_true",
        help="agreement on step labels instead: Krippendorff's alpha on step ratings, agreement on the "
        "first-error index (docs/steps.md)",
    )
    agr.add_argument(
        "--models",
        action="store_true",
        help="with --steps: model labels (step judges, rollout labels) count as raters beside the reviewers",
    )
    agr.add_argument("--json", action="store_true", help="print JSON")
    agr.set_defaults(func=cmd_agreement)


def cmd_export(args: argparse.Namespace) -> int:
    from thoughtdesk.core.review.exchange import export_review

    with open_library(args, create=False) as lib:
        counts = export_review(lib, args.author, args.path, collection=args.collection, force=args.force)
    if args.json:
        print(
            json.dumps(
                {
                    "path": args.path,
                    "annotations": counts.annotations,
                    "explanation_ratings": counts.explanation_ratings,
                    "critique_ratings": counts.critique_ratings,
                }
            )
        )
        return EXIT_OK
    print(
        f"{counts.annotations} annotation(s) written to {args.path}, with {counts.explanation_ratings} "
        f"explanation rating(s) and {counts.critique_ratings} critique rating(s)"
    )
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from thoughtdesk.core.review import import_annotations

    with open_library(args, create=False) as lib:
        bar = ProgressLine("merging annotations", unit="records")
        report = import_annotations(
            lib, args.path, collection=args.collection, strict=args.strict, dry_run=args.dry_run, progress=bar
        )
        bar.finish()
    merged = report.merged + report.ratings.merged + report.steps.merged
    records = report.records + report.ratings.records + report.steps.records
    status = EXIT_OK if report.ok and (merged or not records) else EXIT_FAIL
    if args.json:
        print(
            json.dumps(
                {
                    "summary": report.summary,
                    "records": records,
                    "merged": merged,
                    "unmatched": [{"where": item.where, "reason": item.reason} for item in report.unmatched],
                    "dry_run": args.dry_run,
                },
                ensure_ascii=False,
            )
        )
        return status
    print(report.summary)
    for item in report.unmatched[: max(0, args.show_unmatched)]:
        print(f"  not matched: {item.where}: {item.reason}")
    if len(report.unmatched) > args.show_unmatched:
        print(f"  ... and {len(report.unmatched) - args.show_unmatched} more")
    return status


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def cmd_agreement(args: argparse.Namespace) -> int:
    if args.steps:
        return _step_agreement(args)
    from thoughtdesk.core.review import agreement_table

    with open_library(args, create=False) as lib:
        rows = agreement_table(lib, args.collection, args.labels, args.authors)
    if args.json:
        payload = [
            {
                "label": r.label,
                "n_items": r.n_items,
                "n_complete": r.n_complete,
                "raters": list(r.raters),
                "cohen_kappa": r.cohen,
                "fleiss_kappa": r.fleiss,
                "krippendorff_alpha": r.alpha,
                "percent_agreement": r.percent_agreement,
            }
            for r in rows
        ]
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    width = max([len("label")] + [len(r.label) for r in rows])
    print(f"{'label':<{width}}  items  raters  cohen   fleiss  alpha   agree%")
    for r in rows:
        agree = "n/a" if r.percent_agreement is None else f"{r.percent_agreement:.1f}"
        print(
            f"{r.label:<{width}}  {r.n_items:>5}  {len(r.raters):>6}  {_fmt(r.cohen):<6}  "
            f"{_fmt(r.fleiss):<6}  {_fmt(r.alpha):<6}  {agree}"
        )
    return EXIT_OK


def _step_agreement(args: argparse.Namespace) -> int:
    from thoughtdesk.core.review.step_agreement import step_agreement

    if args.labels:
        raise ThoughtDeskError("--label does not apply to --steps (step labels are ratings, not label keys)")
    with open_library(args, create=False) as lib:
        result = step_agreement(lib, args.collection, args.authors, models=args.models)
    if args.json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    agree = "n/a" if result.step_agreement is None else f"{result.step_agreement:.1f}%"
    first = "n/a" if result.first_error_agreement is None else f"{result.first_error_agreement:.1f}%"
    print(f"reviewers: {', '.join(result.raters) or '(none)'}")
    print(
        f"step ratings: {result.steps} step(s) rated by 2+, alpha ordinal {_fmt(result.alpha_ordinal)}, "
        f"nominal {_fmt(result.alpha_nominal)}, agreement {agree}"
    )
    print(
        f"first error: {result.lists} list(s) marked by 2+, agreement {first}, alpha {_fmt(result.first_error_alpha)}"
    )
    return EXIT_OK
