"""``thoughtdesk evaluate COLLECTION [--rescore] [--json|--csv|--markdown]`` and ``thoughtdesk
revisions COLLECTION [--json]`` (accuracy before and after revision).

Prints the accuracy table (dataset x split x model x prompt condition) and the pairwise
comparisons of conditions. With ``--rescore`` every answer is first re-scored by ThoughtDesk and
the library is updated (a later ``thoughtdesk export`` carries ThoughtDesk's
``correct_answer`` and ``answer_from_choices``); without it the stored correctness is used.
"""

from __future__ import annotations

import argparse
import json
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, ProgressLine, open_library, whole


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "evaluate",
        description="Accuracy with Wilson 95 % intervals, share not extractable, majority vote, and "
        "McNemar / bootstrap comparisons of conditions on the same questions.",
    )
    p.add_argument("collection", help="the collection's name")
    scoring = p.add_mutually_exclusive_group()
    scoring.add_argument(
        "--rescore",
        action="store_true",
        help="re-score every answer with ThoughtDesk first (updates the library; the "
        "imported correctness is kept and can be restored with --restore-original)",
    )
    scoring.add_argument(
        "--restore-original",
        action="store_true",
        help="undo re-scoring first: put back the correctness the imported file "
        "came with and clear ThoughtDesk's verdicts",
    )
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print JSON (proportions 0..1)")
    form.add_argument("--csv", action="store_true", help="print the accuracy table as CSV")
    form.add_argument("--markdown", action="store_true", help="print Markdown tables")
    p.add_argument(
        "--resamples",
        type=whole(100, 1_000_000),
        default=9999,
        metavar="N",
        help="bootstrap resamples for the difference intervals (default: 9999)",
    )
    p.add_argument("--no-comparisons", action="store_true", help="skip the pairwise comparisons")
    p.add_argument(
        "--truncated-as-wrong",
        action="store_true",
        help="count answers cut by the token limit (outcome truncated) as not correct; by default they "
        "are left out of the accuracy's denominator and the comparisons",
    )
    p.set_defaults(func=cmd_evaluate)

    p = add_command(
        sub,
        "revisions",
        description="Accuracy before and after revision (`thoughtdesk revise`) per condition: the revised CoTs' "
        "model and prompt condition, the critique model and the revising model; Wilson 95 % intervals and "
        "McNemar's test (exact binomial below 25 discordant pairs, else chi-square with continuity correction).",
    )
    p.add_argument("collection", help="the collection's name")
    p.add_argument("--json", action="store_true", help="print JSON (proportions 0..1)")
    p.set_defaults(func=cmd_revisions)


def cmd_revisions(args: argparse.Namespace) -> int:
    from thoughtdesk.core.evaluation.revisions import revision_outcomes, revisions_table

    with open_library(args, create=False) as lib:
        groups = revision_outcomes(lib, args.collection)
    if args.json:
        sys.stdout.write(json.dumps({"revisions": [g.to_json() for g in groups]}, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(revisions_table(groups) + "\n")
    return EXIT_OK


def cmd_evaluate(args: argparse.Namespace) -> int:
    from thoughtdesk.core.evaluation.evaluate import evaluate
    from thoughtdesk.core.evaluation.tables import to_csv, to_json_dict, to_markdown, to_text

    with open_library(args, create=False) as lib:
        if args.restore_original:
            from thoughtdesk.core.evaluation.rescoring import restore_original_scoring

            restored = restore_original_scoring(lib, args.collection)
            print(f"{restored} answer(s) of {args.collection!r} restored to the imported correctness", file=sys.stderr)
        bar = ProgressLine("re-scoring", unit="answers") if args.rescore else None
        comparing = ProgressLine("comparing conditions (bootstrap)", unit="pairs")
        try:
            result = evaluate(
                lib,
                args.collection,
                rescore=args.rescore,
                progress=bar,
                comparisons=not (args.no_comparisons or args.csv),
                n_resamples=max(1, args.resamples),
                comparison_progress=comparing,
                truncated_as_wrong=args.truncated_as_wrong,
            )
        finally:
            if bar is not None:
                bar.finish()
            comparing.finish()
    if args.json:
        text = json.dumps(to_json_dict(result), indent=2, ensure_ascii=False) + "\n"
    elif args.csv:
        text = to_csv(result)
    elif args.markdown:
        text = to_markdown(result)
    else:
        text = to_text(result)
    sys.stdout.write(text)
    return EXIT_OK
