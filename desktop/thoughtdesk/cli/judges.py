"""``thoughtdesk judge COLLECTION --pairwise --model M``: pairwise judge runs (planned, resumable
runs of the run engine, every pair in both orders), and ``thoughtdesk judgements COLLECTION
[--json] [--judge M]``: pairwise judges' figures.

Per judge (model + template version): pairs judged in both orders, position consistency, the
first-position rate, ties (inconsistent pairs among them), unparseable verdicts. Per condition:
wins, losses, ties and a Bradley-Terry strength with a 95 % bootstrap interval (docs/judges.md).
Read-only. A collection without verdicts prints a note on stderr and exits 0. The run command
imports the run engine when it runs, not when ``--help`` is built.
"""

from __future__ import annotations

import argparse
import json
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, base_url_options, open_library, server_urls, whole
from thoughtdesk.cli.models import temperature
from thoughtdesk.cli.run_options import call_options, execution_options, selection_options
from thoughtdesk.core.generation.runs.kind_specs import ONLY_CHOICES


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "judge",
        description="Compare the CoTs of each sample two at a time with judge models (MT-bench's pairwise "
        "judge: [[A]], [[B]] or [[C]] for a tie), every pair in both orders. A run like `generate`: planned, "
        "resumable with `thoughtdesk resume N`; figures with `thoughtdesk judgements` (docs/judges.md).",
    )
    p.add_argument("collection", help="the collection's name")
    p.add_argument("--pairwise", action="store_true", help="compare CoTs two at a time (required: the only mode)")
    p.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="PROVIDER:MODEL",
        help="openai:NAME, anthropic:NAME or llamacpp:PATH.gguf (repeatable: several judges)",
    )
    p.add_argument(
        "--base-url",
        type=server_urls,
        action="append",
        metavar="URL",
        help="OpenAI-compatible or Anthropic server address (repeat or separate with commas for a pool)",
    )
    p.add_argument(
        "--template",
        default="td-pairwise-v1",
        metavar="KEY",
        help="pairwise judge template (default td-pairwise-v1, built in; edit it as a fragment in the app)",
    )
    p.add_argument(
        "--conditions",
        action="append",
        metavar="A,B",
        help="only pairs between CoTs of these conditions (a condition 'model | prompt', a model or a prompt "
        "condition; `thoughtdesk evaluate` lists them); default: every pair of a sample's CoTs",
    )
    p.add_argument("--only", choices=list(ONLY_CHOICES), default="all", help="CoTs by correctness (default all)")
    selection_options(p, "pairs")
    p.add_argument("--temperature", type=temperature, metavar="T", help="sampling temperature (default 0)")
    p.add_argument("--max-tokens", type=whole(1, 1_000_000), metavar="M", help="tokens per verdict (default 512)")
    call_options(p)
    p.add_argument(
        "--preview", type=whole(0), default=1, metavar="K", help="with --plan-only: pairs whose prompts are shown"
    )
    execution_options(p)
    p.set_defaults(func=cmd_judge)

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


def cmd_judge(args: argparse.Namespace) -> int:
    from thoughtdesk.cli.fragments import user_judge_templates
    from thoughtdesk.cli.models import model_spec
    from thoughtdesk.cli.run_execution import execute_and_report, print_previews, user_prices, warn_offline_pools
    from thoughtdesk.core.errors import ThoughtDeskError
    from thoughtdesk.core.generation.defaults import model_defaults
    from thoughtdesk.core.generation.runs import (
        CotSelection,
        JudgeSpec,
        check_models_exist,
        check_models_ready,
        create_judge_run,
        plan_judge_run,
    )

    if not args.pairwise:
        raise ThoughtDeskError("thoughtdesk judge compares CoTs two at a time: add --pairwise (the only mode so far)")
    options: dict[str, object] = {
        "temperature": args.temperature if args.temperature is not None else 0.0,
        "max_tokens": args.max_tokens if args.max_tokens is not None else 512,
        "timeout": args.timeout,
        "seed": args.model_seed,
        "n_ctx": args.n_ctx,
    }
    options.update(base_url_options(args.base_url))
    defaults = model_defaults()
    models = tuple(model_spec(text, options, defaults) for text in args.model)
    conditions = tuple(c.strip() for c in ",".join(args.conditions or ()).split(",") if c.strip())
    spec = JudgeSpec(
        cots=CotSelection(
            args.collection, datasets=tuple(args.dataset or ()), splits=tuple(args.split or ()), only=args.only
        ),
        models=models,
        template=args.template,
        conditions=conditions,
        limit=args.limit,
        seed=args.seed,
        force=args.force,
        name=args.name or "",
    )
    if not args.plan_only:
        check_models_ready(spec.models)
        warn_offline_pools(spec.models)
        check_models_exist(spec.models)
    with open_library(args) as lib:
        args.prices = user_prices()
        plan = plan_judge_run(lib, spec, templates=user_judge_templates(), prices=args.prices)
        print(plan.summary(), file=sys.stderr)
        if args.plan_only:
            print_previews(plan.previews(args.preview))
            return EXIT_OK
        run_id = create_judge_run(lib, plan)
    print(
        f"run {run_id} created ({plan.total} judge requests, {len(plan.pairs)} pairs in both orders)", file=sys.stderr
    )
    return execute_and_report(args, run_id)
