"""``thoughtdesk autolabel COLLECTION --model P:M``: automatic step labels from rollouts
(Math-Shepherd; docs/steps.md), as a run of the run engine: planned with its counts and cost
(``--plan-only`` stops there), listed by ``thoughtdesk runs``, resumed by ``thoughtdesk resume``."""

from __future__ import annotations

import argparse
import json
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, base_url_options, open_library, whole
from thoughtdesk.cli.models import model_spec, temperature
from thoughtdesk.cli.run_execution import execute_and_report, print_previews, user_prices, warn_offline_pools
from thoughtdesk.cli.run_options import execution_options


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "autolabel")
    p.add_argument("collection", help="the collection's name")
    p.add_argument("--model", required=True, metavar="PROVIDER:MODEL", help="the completer that samples the rollouts")
    p.add_argument("--base-url", action="append", nargs="+", metavar="URL", help="the completer's server")
    p.add_argument("--k", type=whole(1, 64), default=4, help="rollouts per step (default 4)")
    p.add_argument("--limit", type=whole(1), metavar="N", help="only the first N CoTs")
    p.add_argument("--temperature", type=temperature, default=0.7, metavar="T", help="rollouts' temperature (0.7)")
    p.add_argument("--max-tokens", type=whole(1, 100_000), default=256, metavar="M", help="tokens per rollout (256)")
    p.add_argument("--seed", type=whole(0), metavar="K", help="the completer's seed, where it takes one")
    p.add_argument("--force", action="store_true", help="label again the CoTs the completer labelled before")
    p.add_argument("--name", help="the run's name")
    p.add_argument(
        "--plan-only", action="store_true", help="print the plan (requests, tokens, cost) and a prompt; send nothing"
    )
    p.add_argument("--preview", type=whole(0), default=1, metavar="N", help="prompts shown with --plan-only (1)")
    execution_options(p)  # --json, --concurrency, --rpm, ... as for every run
    p.set_defaults(func=cmd_autolabel)


def cmd_autolabel(args: argparse.Namespace) -> int:
    from thoughtdesk.core.generation.defaults import model_defaults
    from thoughtdesk.core.generation.runs import check_models_exist, check_models_ready
    from thoughtdesk.core.generation.runs.kind_specs import AutolabelSpec
    from thoughtdesk.core.generation.runs.rollouts import create_autolabel_run, plan_autolabel_run

    options: dict[str, object] = {"temperature": args.temperature, "max_tokens": args.max_tokens}
    options.update(base_url_options(args.base_url))
    model = model_spec(args.model, options, model_defaults())
    spec = AutolabelSpec(
        args.collection,
        (model,),
        k=args.k,
        limit=args.limit,
        seed=args.seed,
        force=args.force,
        name=args.name or "",
    )
    if not args.plan_only:
        check_models_ready(spec.models)
        warn_offline_pools(spec.models)
    with open_library(args, create=False) as lib:
        args.prices = user_prices()
        plan = plan_autolabel_run(lib, spec, prices=args.prices)
        print(plan.summary(), file=sys.stderr)
        if args.plan_only:
            print_previews(plan.previews(args.preview))
            return EXIT_OK
        if not plan.requests:  # every CoT labelled before (a resumed labelling): nothing to send
            figures = {
                "author": plan.author,
                "run": None,
                "labelled": 0,
                "skipped": plan.labelled_before + plan.without_steps,
                "steps": 0,
            }
            if args.json:
                print(json.dumps(figures, ensure_ascii=False))
            else:
                print(
                    f"nothing to label: {figures['skipped']} CoT(s) labelled before by {plan.author!r} or without steps"
                )
            return EXIT_OK
        check_models_exist(spec.models)
        run_id = create_autolabel_run(lib, plan)
    print(f"run {run_id} created ({plan.total} rollout requests for {plan.cots} CoTs)", file=sys.stderr)
    skipped = plan.labelled_before + plan.without_steps

    def outcome(run_id: int) -> dict[str, object]:
        from thoughtdesk.core.generation.runs.rollouts import labelled_by_run

        with open_library(args, create=False) as lib:
            cots, steps = labelled_by_run(lib, run_id)
        return {
            "author": plan.author,
            "labelled": cots,
            "skipped": skipped,
            "steps": steps,
            "text": f"{cots} CoT(s) labelled by {plan.author!r} ({steps} step(s), {spec.k} rollout(s) each), "
            f"{skipped} skipped (labelled before, or without steps)",
        }

    return execute_and_report(args, run_id, outcome)
