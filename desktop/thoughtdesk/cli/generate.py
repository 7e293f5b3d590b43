"""``thoughtdesk generate`` and ``thoughtdesk resume``: CoT generation runs from the command line,
over :mod:`thoughtdesk.core.generation.runs`, and resuming any run (a batch run: poll, fetch,
submit). Critique and revision runs: :mod:`thoughtdesk.cli.critiques`; pairwise judge runs:
:mod:`thoughtdesk.cli.judges`; what every run command shares: :mod:`thoughtdesk.cli.run_options`
and :mod:`thoughtdesk.cli.run_execution` (listing and changing runs: :mod:`thoughtdesk.cli.runs`;
fragments: :mod:`thoughtdesk.cli.fragments`)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import (
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    number,
    open_library,
    whole,
)
from thoughtdesk.cli.fragments import user_fragments
from thoughtdesk.cli.models import add_model_options, generation_models, model_spec, sampling_options, temperature
from thoughtdesk.cli.run_execution import (
    execute_and_report,
    open_library_path,
    print_previews,
    user_prices,
    warn_offline_pools,
)
from thoughtdesk.cli.run_options import execution_options, selection_options
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import BackendError
from thoughtdesk.core.generation.defaults import DEFAULT_FRAGMENTS, ModelDefaults, fragment_keys, model_defaults
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    GUIDE_METHODS,
    SUPERVISIONS,
    FewShotSpec,
    GuideSpec,
    ModelSpec,
    RunSpec,
    RunSpecError,
    SampleSelection,
    advance_batch_run,
    check_batch_spec,
    check_models_exist,
    check_models_ready,
    create_run,
    guide_scorer_report,
    is_batch_run,
    list_batches,
    parse_summary,
    plan_run,
    probe_scorer,
    reasoning_budget_warnings,
    resolve_run_id,
    run_info,
    verdict_summary,
)


def cmd_generate(args: argparse.Namespace) -> int:
    defaults = model_defaults()  # the local model and providers' addresses chosen in the app
    models = generation_models(args, defaults)
    guide = _guide(args, sampling_options(args), defaults)
    few_shot = FewShotSpec(args.few_shot, args.few_shot_split) if args.few_shot else None
    spec = RunSpec(
        samples=SampleSelection(
            args.collection,
            datasets=tuple(args.dataset or ()),
            splits=tuple(args.split or ()),
            limit=args.limit,
            seed=args.seed,
        ),
        models=models,
        instructions=fragment_keys(args.instruction, "instruction"),  # the planner's defaults when not given
        cot_triggers=fragment_keys(args.trigger, "cot_trigger"),
        answer_extractions=fragment_keys(args.extraction, "answer_extraction"),
        mode=PromptMode.ONE_STEP if args.one_step else PromptMode.TWO_STEP,
        n=args.n,
        few_shot=few_shot,
        force=args.force,
        name=args.name or "",
        guide=guide,
        batch=args.batch,
    )
    if args.batch:
        check_batch_spec(spec)  # a local model or a guided run: said now, nothing written
    if not args.plan_only:
        check_models_ready(spec.all_models())  # refused before a run is written, not left behind as "failed"
        warn_offline_pools(spec.all_models())
        check_models_exist(spec.all_models())  # a misspelled model too, where its server can tell
    _check_scorer(guide, probe=not args.plan_only)
    with open_library(args) as lib:
        args.prices = user_prices()  # read once: planning and execution price alike
        plan = plan_run(lib, spec, fragments=user_fragments(), prices=args.prices)
        print(plan.summary(), file=sys.stderr)
        for model in models:  # where each model runs and how prompts reach it
            print(f"model {model.describe()}", file=sys.stderr)
        for warning in reasoning_budget_warnings(models):
            print(f"thoughtdesk: warning: {warning}", file=sys.stderr)
        if args.plan_only:
            print_previews(plan.previews(args.preview))
            return EXIT_OK
        run_id = create_run(lib, plan)
    print(f"run {run_id} created ({plan.total} requests)", file=sys.stderr)
    if args.batch:
        return _advance_batches(args, run_id)
    return execute_and_report(args, run_id)


def _advance_batches(args: argparse.Namespace, run_id: int) -> int:
    """Poll, fetch and submit a batch run's batches (``--wait``: until it is done). A cancelled
    run's batches are fetched and nothing is sent, unless ``--resubmit``."""
    prices = getattr(args, "prices", None) or user_prices()
    path = open_library_path(args)
    wait = getattr(args, "wait", None)
    resubmit = bool(getattr(args, "resubmit", False))
    try:
        while True:
            progress = advance_batch_run(path, run_id, prices=prices, resubmit=resubmit)
            if wait is None or progress.status not in ("batched", "cancelled") or not progress.open_batches:
                break
            print(
                f"run {run_id}: {progress.open_batches} batch(es) open, {progress.remaining} request(s) "
                f"without a result; next check in {wait:g} s",
                file=sys.stderr,
            )
            time.sleep(wait)
    except BackendError as error:
        raise ThoughtDeskError(
            f"{error} (run {run_id}'s batches are kept; `thoughtdesk resume {run_id}` polls them again)"
        ) from None
    except KeyboardInterrupt:
        print(f"thoughtdesk: stopped; `thoughtdesk resume {run_id}` polls the run's batches", file=sys.stderr)
        return EXIT_INTERRUPTED
    with open_library(args, create=False) as lib:
        batches = [b.describe() for b in list_batches(lib, run_id)]
        parsed = (parse_summary(lib, run_id) or verdict_summary(lib, run_id)) if progress.status == "done" else None
    if args.json:
        print(json.dumps({"run": run_id, **dataclasses.asdict(progress), "batches": batches}, ensure_ascii=False))
    else:
        print(
            f"run {run_id}: {progress.status}; {progress.submitted} request(s) submitted, {progress.stored} "
            f"result(s) stored, {progress.retried} to send again, {progress.failed} failed, "
            f"{progress.remaining} without a result; {progress.open_batches} batch(es) open"
        )
        for line in batches:
            print(f"  {line}")
        if parsed:
            print(parsed)
    if progress.status == "batched":
        print(
            f"thoughtdesk: run {run_id} waits for the provider (results within 24 h); "
            f"`thoughtdesk resume {run_id}` fetches what is ready",
            file=sys.stderr,
        )
        return EXIT_OK
    if progress.status == "cancelled":
        still = (
            f"; {progress.open_batches} batch(es) are still ending at the provider: `thoughtdesk resume {run_id}` "
            "again stores what they answered"
            if progress.open_batches
            else ""
        )
        print(
            f"thoughtdesk: run {run_id} is cancelled: {progress.stored} answer(s) its batches gave were stored now; "
            f"{progress.unsent} request(s) were not answered and are not sent (`thoughtdesk resume {run_id} "
            f"--resubmit` sends them in new batches, `--direct` one by one at the normal price){still}",
            file=sys.stderr,
        )
        return EXIT_OK
    if progress.status != "done":
        print(
            f"thoughtdesk: run {run_id} is not complete; `thoughtdesk resume {run_id} --direct` sends "
            "the failed requests one by one",
            file=sys.stderr,
        )
        return EXIT_FAIL
    return EXIT_OK


def _collect_before_direct(args: argparse.Namespace, run_id: int) -> None:
    """``resume N --direct`` of a batch run: first store what its ended batches answered (a
    request answered there is not sent again); requests still in open batches are left to them
    and the run keeps waiting for them (status ``batched``) after the direct calls."""
    try:
        advance_batch_run(open_library_path(args), run_id, prices=user_prices(), submit=False)
    except BackendError as error:
        print(
            f"thoughtdesk: the batches of run {run_id} could not be polled ({error}); "
            "the requests not in a batch are sent directly",
            file=sys.stderr,
        )


def _guide(args: argparse.Namespace, options: dict[str, object], defaults: ModelDefaults) -> GuideSpec | None:
    """The guide of ``--guide`` (None without it); helper models take the agent's server options."""
    if args.guide is None:
        for flag in ("rationale_model", "scorer_model", "rater_model"):
            if getattr(args, flag):
                raise RunSpecError(f"--{flag.replace('_', '-')} needs --guide (rationalyst, stepwise or process)")
        return None

    def helper(text: str | None) -> ModelSpec | None:
        return None if text is None else model_spec(text, {**options, "temperature": 0.0}, defaults, chat=args.chat)

    return GuideSpec(
        method=args.guide,
        supervision=args.supervision,
        rationale_model=helper(args.rationale_model),
        scorer_model=helper(args.scorer_model),
        rater_model=helper(args.rater_model),
        candidates=args.candidates,
        max_steps=args.max_steps,
        step_temperature=args.step_temperature,
        step_max_tokens=args.step_max_tokens,
        decay=0.9 if args.decay else None,
        rater_style=args.rater_style,
    )


def _check_scorer(guide: GuideSpec | None, *, probe: bool) -> None:
    """Say what a guided run's scorer can do before anything loads (a local model's scoring copy
    and its memory); refuse one that cannot score. ``probe``: ask an OpenAI-compatible scorer to
    score a few tokens once, so a server that ignores echo is refused before a run is written."""
    report = guide_scorer_report(guide)
    if report is None or guide is None or guide.scorer is None:
        return
    if not report.can_score:
        raise ThoughtDeskError(
            f"{report.detail}; implicit supervision cannot start with this scorer: choose another "
            "--scorer-model, or --supervision explicit"
        )
    print(f"thoughtdesk: scorer {report.detail}", file=sys.stderr)
    if probe:
        asyncio.run(probe_scorer(guide.scorer))


def cmd_resume(args: argparse.Namespace) -> int:
    with open_library(args, create=False) as lib:
        run_id = resolve_run_id(lib, args.run)
        models = run_info(lib, run_id).model_specs
    check_models_ready(models)  # offline, a moved model file: said now, the run left as it was
    warn_offline_pools(models)
    with open_library(args, create=False) as lib:
        batched = is_batch_run(lib, run_id)
    if batched and not args.direct:
        return _advance_batches(args, run_id)
    if batched:
        _collect_before_direct(args, run_id)
    elif args.resubmit:
        raise ThoughtDeskError(f"--resubmit is for batch runs; run {run_id} sends its requests directly")
    return execute_and_report(args, run_id)


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "generate")
    p.add_argument("collection", help="the collection's name")
    add_model_options(p)
    p.add_argument(
        "--instruction",
        action="append",
        metavar="KEY",
        help=f"instruction fragment (repeatable; default {DEFAULT_FRAGMENTS['instruction']}, as the run planner; "
        "none: no instruction); built-in keys and those added in the app (`thoughtdesk fragments`)",
    )
    p.add_argument(
        "--trigger",
        action="append",
        metavar="KEY",
        help=f"CoT trigger fragment (repeatable; default {DEFAULT_FRAGMENTS['cot_trigger']}; none: no trigger)",
    )
    p.add_argument(
        "--extraction",
        action="append",
        metavar="KEY",
        help=f"answer-extraction fragment (repeatable; default {DEFAULT_FRAGMENTS['answer_extraction']}; "
        "none: no extraction prompt)",
    )
    selection_options(p, "samples")
    p.add_argument("--n", type=whole(1, 1000), default=1, metavar="K", help="samples per prompt (self-consistency)")
    p.add_argument("--one-step", action="store_true", help="read the answer from the CoT (no extraction call)")
    p.add_argument("--few-shot", type=whole(0, 64), default=0, metavar="K", help="K exemplars with reference CoTs")
    p.add_argument("--few-shot-split", default="train", metavar="S", help="split the exemplars come from")
    p.add_argument("--force", action="store_true", help="call the model even for requests already stored")
    p.add_argument("--name", metavar="NAME", help="a name for the run")
    p.add_argument("--plan-only", action="store_true", help="print the plan and prompt previews; send nothing")
    p.add_argument("--preview", type=whole(0), default=1, metavar="K", help="with --plan-only: prompts shown")
    p.add_argument(
        "--batch",
        action="store_true",
        help="send through the provider's batch API (OpenAI, Anthropic): half the price, results within 24 h; "
        "`thoughtdesk resume RUN` fetches them",
    )
    p.add_argument("--wait", type=number(1, 3600), metavar="S", help="with --batch: poll every S seconds until done")
    guide = p.add_argument_group("guided generation (one step at a time; docs/rationales.md)")
    guide.add_argument(
        "--guide",
        choices=list(GUIDE_METHODS),
        help="rationalyst: rationale-supervised steps; stepwise: plain step-by-step baseline; "
        "process: a rater model rates each candidate 0-3",
    )
    guide.add_argument("--rationale-model", metavar="PROVIDER:MODEL", help="rationalyst: writes each step's rationale")
    guide.add_argument(
        "--scorer-model",
        metavar="PROVIDER:MODEL",
        help="implicit supervision: scores candidates (default: the rationale model)",
    )
    guide.add_argument("--rater-model", metavar="PROVIDER:MODEL", help="process: rates each candidate 0-3")
    guide.add_argument(
        "--rater-style",
        choices=["rating", "processbench"],
        default="rating",
        help="process: rating (0-3, the default) or processbench (a step judge with ProcessBench's template "
        "names the first wrong step of the steps so far plus each candidate; docs/steps.md)",
    )
    guide.add_argument("--supervision", choices=list(SUPERVISIONS), default="implicit", help="default implicit")
    guide.add_argument(
        "--candidates", type=whole(1, 32), default=3, metavar="N", help="candidates per step (default 3)"
    )
    guide.add_argument("--max-steps", type=whole(1, 200), default=15, metavar="N", help="steps at most (default 15)")
    guide.add_argument(
        "--step-temperature", type=temperature, default=0.7, metavar="T", help="candidates' temperature (default 0.7)"
    )
    guide.add_argument(
        "--step-max-tokens", type=whole(1, 4096), default=64, metavar="M", help="tokens per candidate step (default 64)"
    )
    guide.add_argument("--decay", action="store_true", help="implicit: weight token i by 0.9**i in the mean")
    execution_options(p)
    p.set_defaults(func=cmd_generate)

    p = add_command(sub, "resume")
    p.add_argument("run", help="the run's id or name")
    execution_options(p)
    p.add_argument("--wait", type=number(1, 3600), metavar="S", help="a batch run: poll every S seconds until done")
    p.add_argument(
        "--direct",
        action="store_true",
        help="a batch run: store what its ended batches answered, then send the requests not waiting in an "
        "open batch directly (normal price)",
    )
    p.add_argument(
        "--resubmit",
        action="store_true",
        help="a cancelled batch run: send the requests its batches did not answer in new batches (without it, "
        "resume only stores what they answered)",
    )
    p.set_defaults(func=cmd_resume)
