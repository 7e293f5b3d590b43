"""``thoughtdesk critique`` and ``thoughtdesk revise`` (critique and revision runs: planned,
resumable runs of the run engine, docs/critiques-runs.md and docs/judges.md) and ``thoughtdesk
critiques COLLECTION [--json|--csv|--markdown]``: the critique analysis.

Per critique model: critiques, mean explanation score with its 95 % interval, dimensions, mean
human rating of its critiques. Per student condition: mean score, dimension shares, AUROC of
the score for correct answers. Agreement between critique models and with the human scores
(Spearman, Kendall, dimension match), Krippendorff's alpha among human raters
(docs/critiques-analysis.md). Read-only. A collection without critiques prints a note on stderr
(and valid, empty JSON/CSV on stdout) and exits 0; an unknown collection exits 1.

The run commands import the run engine when they run, not when ``--help`` is built.
"""

from __future__ import annotations

import argparse
import json
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, base_url_options, open_library, server_urls, whole
from thoughtdesk.cli.models import temperature
from thoughtdesk.cli.run_options import call_options, execution_options, selection_options
from thoughtdesk.core.critiques.prompts import WRAPPERS
from thoughtdesk.core.generation.runs.kind_specs import JUDGED_CHOICES, ONLY_CHOICES


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "critique",
        description="Critique stored CoTs (all of them by default, bare answers included) in the Digital "
        "Socrates layout; each critique is parsed and stored with the CoT. A run like `generate`: "
        "planned, resumable with `thoughtdesk resume N`, identical requests answered from the store.",
    )
    p.add_argument("collection", help="the collection's name")
    p.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="PROVIDER:MODEL",
        help="openai:NAME, anthropic:NAME or llamacpp:PATH.gguf (repeatable: a judge panel)",
    )
    p.add_argument(
        "--base-url",
        type=server_urls,
        action="append",
        metavar="URL",
        help="OpenAI-compatible or Anthropic server address; repeat it (or separate with commas) for a pool of OpenAI-compatible servers serving the same model",
    )
    p.add_argument(
        "--template",
        default=None,
        metavar="KEY",
        help="critique template (default td-critique-v1, built in; others from `thoughtdesk fragments import`)",
    )
    p.add_argument(
        "--preset",
        choices=["ds", "processbench"],
        help="ds: the Digital Socrates models' exact input wrapper, greedy decoding, 512 new tokens; "
        "processbench: ProcessBench's step-judge template (the earliest wrong paragraph in \\boxed{}, "
        "stored as the judge's first error: docs/steps.md), greedy decoding, 4096 new tokens",
    )
    p.add_argument("--wrapper", choices=list(WRAPPERS), help="how the prompt reaches the model (default chat)")
    p.add_argument("--only", choices=list(ONLY_CHOICES), default="all", help="CoTs by correctness (default all)")
    p.add_argument(
        "--judge",
        choices=list(JUDGED_CHOICES),
        default="explanation",
        help="what the critique reads: the CoT's visible explanation (default, as Digital Socrates) or a "
        "reasoning model's thinking (CoTs without thinking are left out)",
    )
    selection_options(p, "CoTs")
    p.add_argument("--temperature", type=temperature, metavar="T", help="sampling temperature (default 0)")
    p.add_argument("--max-tokens", type=whole(1, 1_000_000), metavar="M", help="tokens per critique (default 512)")
    call_options(p)
    p.add_argument(
        "--preview", type=whole(0), default=1, metavar="K", help="with --plan-only: CoTs whose prompts are shown"
    )
    execution_options(p)
    p.set_defaults(func=cmd_critique)

    p = add_command(
        sub,
        "revise",
        description="Give each critiqued CoT and its critique's feedback (main flaw, general and specific "
        "feedback; never the answer key or the score) to a model that writes a revised CoT, stored as a "
        "generated CoT linked to the CoT and critique it revises and scored like any other. A run like "
        "`generate`: planned, resumable with `thoughtdesk resume N`. Results: `thoughtdesk revisions`.",
    )
    p.add_argument("collection", help="the collection's name")
    p.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="PROVIDER:MODEL",
        help="the revising model: openai:NAME, anthropic:NAME or llamacpp:PATH.gguf (repeatable)",
    )
    p.add_argument(
        "--critique-model",
        action="append",
        metavar="NAME",
        help="use the critiques of this critique model (repeatable; default: each CoT's latest critique)",
    )
    p.add_argument(
        "--base-url",
        type=server_urls,
        action="append",
        metavar="URL",
        help="OpenAI-compatible or Anthropic server address (repeat for a pool of servers)",
    )
    p.add_argument("--only", choices=list(ONLY_CHOICES), default="all", help="CoTs by correctness (default all)")
    selection_options(p, "CoTs")
    p.add_argument("--temperature", type=temperature, default=0.0, metavar="T", help="sampling temperature (default 0)")
    p.add_argument(
        "--max-tokens", type=whole(1, 1_000_000), default=512, metavar="M", help="tokens per revision (default 512)"
    )
    call_options(p)
    p.add_argument("--preview", type=whole(0), default=1, metavar="K", help="with --plan-only: prompts shown")
    execution_options(p)
    p.set_defaults(func=cmd_revise)

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
    from thoughtdesk.core.critiques.analysis_tables import empty_message, to_csv, to_json_dict, to_markdown, to_text

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


def cmd_critique(args: argparse.Namespace) -> int:
    from thoughtdesk.cli.fragments import user_critique_templates
    from thoughtdesk.cli.models import model_spec
    from thoughtdesk.cli.run_execution import execute_and_report, print_previews, user_prices, warn_offline_pools
    from thoughtdesk.core.critiques.prompts import BUILTIN_KEY, DS_PRESET, PROCESSBENCH_PRESET
    from thoughtdesk.core.generation.defaults import model_defaults
    from thoughtdesk.core.generation.runs import (
        CotSelection,
        CritiqueSpec,
        check_models_exist,
        check_models_ready,
        create_critique_run,
        plan_critique_run,
    )

    preset = DS_PRESET if args.preset == "ds" else PROCESSBENCH_PRESET if args.preset == "processbench" else {}
    options: dict[str, object] = {
        "temperature": args.temperature if args.temperature is not None else preset.get("temperature", 0.0),
        "max_tokens": args.max_tokens if args.max_tokens is not None else preset.get("max_tokens", 512),
        "timeout": args.timeout,
        "seed": args.model_seed,
        "n_ctx": args.n_ctx,  # llamacpp only (the default is ModelSpec's)
    }
    options.update(base_url_options(args.base_url))
    wrapper = args.wrapper or str(preset.get("wrapper", "chat"))
    defaults = model_defaults()  # `llamacpp` alone and the providers' addresses, as set in the app
    models = tuple(model_spec(text, options, defaults) for text in args.model)
    spec = CritiqueSpec(
        cots=CotSelection(
            args.collection,
            datasets=tuple(args.dataset or ()),
            splits=tuple(args.split or ()),
            only=args.only,
            limit=args.limit,
            seed=args.seed,
        ),
        models=models,
        template=args.template or str(preset.get("template", BUILTIN_KEY)),
        wrappers=(wrapper,),  # type: ignore[arg-type]  # argparse checked it against WRAPPERS
        force=args.force,
        name=args.name or "",
        judge=args.judge,
    )
    if not args.plan_only:
        check_models_ready(models)
        warn_offline_pools(models)
        check_models_exist(models)
    with open_library(args) as lib:
        args.prices = user_prices()
        plan = plan_critique_run(lib, spec, templates=user_critique_templates(), prices=args.prices)
        print(plan.summary(), file=sys.stderr)
        if args.plan_only:
            print_previews(plan.previews(args.preview))
            return EXIT_OK
        run_id = create_critique_run(lib, plan)
    print(f"run {run_id} created ({plan.total} critique requests)", file=sys.stderr)
    return execute_and_report(args, run_id)


def cmd_revise(args: argparse.Namespace) -> int:
    from thoughtdesk.cli.models import model_spec
    from thoughtdesk.cli.run_execution import execute_and_report, print_previews, user_prices, warn_offline_pools
    from thoughtdesk.core.generation.defaults import model_defaults
    from thoughtdesk.core.generation.runs import CotSelection, check_models_exist, check_models_ready
    from thoughtdesk.core.generation.runs.kind_specs import RevisionSpec
    from thoughtdesk.core.generation.runs.revision import create_revision_run, plan_revision_run

    options: dict[str, object] = {
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "timeout": args.timeout,
        "seed": args.model_seed,
        "n_ctx": args.n_ctx,
    }
    options.update(base_url_options(args.base_url))
    defaults = model_defaults()
    models = tuple(model_spec(text, options, defaults) for text in args.model)
    spec = RevisionSpec(
        cots=CotSelection(
            args.collection,
            datasets=tuple(args.dataset or ()),
            splits=tuple(args.split or ()),
            only=args.only,
            limit=args.limit,
            seed=args.seed,
        ),
        models=models,
        critique_models=tuple(args.critique_model or ()),
        force=args.force,
        name=args.name or "",
    )
    if not args.plan_only:
        check_models_ready(models)
        warn_offline_pools(models)
        check_models_exist(models)
    with open_library(args) as lib:
        args.prices = user_prices()
        plan = plan_revision_run(lib, spec, prices=args.prices)
        print(plan.summary(), file=sys.stderr)
        if args.plan_only:
            print_previews(plan.previews(args.preview))
            return EXIT_OK
        run_id = create_revision_run(lib, plan)
    print(f"run {run_id} created ({plan.total} revision requests)", file=sys.stderr)
    code = execute_and_report(args, run_id)
    if not args.json:
        print(f"accuracy before and after revision: `thoughtdesk revisions {args.collection!r}`", file=sys.stderr)
    return code
