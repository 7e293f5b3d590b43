"""``thoughtdesk generate``, ``thoughtdesk critique``, ``thoughtdesk revise``, ``thoughtdesk judge`` and
``thoughtdesk resume``: CoT generation, critique, revision and pairwise judge runs from the command line, over :mod:`thoughtdesk.core.generation.runs`
(listing and changing runs: :mod:`thoughtdesk.cli.runs`; fragments: :mod:`thoughtdesk.cli.fragments`)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterable

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import (
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    ProgressLine,
    base_url_options,
    number,
    open_library,
    server_urls,
    whole,
)
from thoughtdesk.cli.fragments import user_critique_templates, user_fragments, user_judge_templates
from thoughtdesk.cli.models import add_model_options, generation_models, model_spec, sampling_options, temperature
from thoughtdesk.core.critiques.prompts import BUILTIN_KEY, DS_PRESET, PROCESSBENCH_PRESET, WRAPPERS
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import BackendError, PriceTable
from thoughtdesk.core.generation.backends.pricing import load_price_table
from thoughtdesk.core.generation.backends.response_cap import DEFAULT_MB, HIGHEST_MB, LOWEST_MB, set_response_cap_mb
from thoughtdesk.core.generation.defaults import DEFAULT_FRAGMENTS, ModelDefaults, fragment_keys, model_defaults
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    GUIDE_METHODS,
    ONLY_CHOICES,
    SUPERVISIONS,
    CotSelection,
    CritiqueSpec,
    FewShotSpec,
    GuideSpec,
    JudgeSpec,
    ModelSpec,
    PromptPreview,
    RunLimits,
    RunProgress,
    RunSpec,
    RunSpecError,
    SampleSelection,
    advance_batch_run,
    check_batch_spec,
    check_models_exist,
    check_models_ready,
    create_critique_run,
    create_judge_run,
    create_run,
    guide_scorer_report,
    is_batch_run,
    list_batches,
    offline_pool_warnings,
    parse_summary,
    plan_critique_run,
    plan_judge_run,
    plan_run,
    probe_scorer,
    reasoning_budget_warnings,
    resolve_run_id,
    resume_run,
    run_info,
    stopped_for_good,
    verdict_summary,
)
from thoughtdesk.core.generation.runs.kind_specs import JUDGED_CHOICES
from thoughtdesk.core.generation.runs.rollouts import rollout_summary


def user_prices() -> PriceTable:
    """The price table edited in the app (USD per million tokens), else the defaults; an
    unreadable file is named on stderr."""
    table, problem = load_price_table()
    if problem:
        print(f"thoughtdesk: {problem}", file=sys.stderr)
    return table


def _limits(args: argparse.Namespace) -> RunLimits:
    if getattr(args, "max_response_mb", None) is not None:
        set_response_cap_mb(args.max_response_mb)  # this command only; the saved setting otherwise
    return RunLimits(
        concurrency=args.concurrency,
        requests_per_minute=args.rpm,
        tokens_per_minute=args.tpm,
        max_attempts=args.max_attempts,
        initial_wait=args.retry_wait,
    )


def _progress(run_id: int) -> tuple[ProgressLine, object]:
    bar = ProgressLine(f"run {run_id}", unit="requests")

    def report(progress: RunProgress) -> None:
        cost = f" ${progress.cost:.4f}" if progress.cost else ""  # rate and time left are the bar's columns
        bar.label = f"run {run_id}: {progress.failed} failed, {progress.tokens} tokens{cost}"
        bar(progress.done + progress.failed, progress.total)

    return bar, report


def _cost_text(args: argparse.Namespace, run_id: int, cost: float, prices) -> str:
    """``$0.1234``, or what is unknown: models without a price are not free."""
    with open_library(args, create=False) as lib:
        models = run_info(lib, run_id).model_specs
    unpriced = prices.unpriced(models)
    if unpriced and len(unpriced) == len(models):
        return f"unknown (no price for {', '.join(unpriced)})"
    return f"${cost:.4f}" + (f" + unknown for {', '.join(unpriced)}" if unpriced else "")


def execute_and_report(
    args: argparse.Namespace, run_id: int, outcome: Callable[[int], dict[str, object]] | None = None
) -> int:
    """Execute (resume) run ``run_id`` to its end and print its outcome; ``outcome`` adds a
    kind's own figures (given the run id, read once it has ended) to the JSON, its ``text`` to
    the printed outcome."""
    # Rationale runs' steps are core/rationales/runs.py's, above the engine: registered by importing it.
    import thoughtdesk.core.rationales.runs  # noqa: F401

    bar, report = _progress(run_id)
    prices = getattr(args, "prices", None) or user_prices()
    try:
        final = resume_run(
            open_library_path(args),
            run_id,
            limits=_limits(args),
            progress=report,
            force=True if getattr(args, "force", False) else None,
            prices=prices,
        )
    except BackendError as error:
        bar.finish()
        with open_library(args, create=False) as lib:
            advice = stopped_for_good(error, run_id, run_info(lib, run_id).done)
        if advice:  # a model the server does not have: resuming would fail the same way
            raise ThoughtDeskError(f"{error} ({advice}: `thoughtdesk runs --delete {run_id}`)") from None
        raise ThoughtDeskError(
            f"{error} (run {run_id} stopped and is kept; fix this, then `thoughtdesk resume {run_id}`)"
        ) from None
    except KeyboardInterrupt:
        bar.finish()
        print(
            f"thoughtdesk: run {run_id} interrupted; every finished request is stored: "
            f"`thoughtdesk resume {run_id}` sends the rest",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    bar.finish()
    with open_library(args, create=False) as lib:
        parsed = parse_summary(lib, run_id) or verdict_summary(lib, run_id) or rollout_summary(lib, run_id)
    own = dict(outcome(run_id)) if outcome is not None else {}
    own_text = str(own.pop("text", "") or "")
    cost = _cost_text(args, run_id, final.cost, prices)
    if args.json:
        print(
            json.dumps(
                {
                    "run": run_id,
                    "status": final.status,
                    "total": final.total,
                    "done": final.done,
                    "from_store": final.cached,
                    "failed": final.failed,
                    "prompt_tokens": final.prompt_tokens,
                    "completion_tokens": final.completion_tokens,
                    "cost": cost,
                    "seconds": round(final.elapsed, 3),
                    "parsed": parsed or None,
                    "last_error": final.last_error,
                    **own,
                },
                ensure_ascii=False,
            )
        )
    else:
        print(
            f"run {run_id}: {final.status}; {final.done} done ({final.cached} from the store), "
            f"{final.failed} failed of {final.total}; {final.prompt_tokens} prompt + "
            f"{final.completion_tokens} completion tokens; cost {cost}; {final.elapsed:.1f} s"
        )
        if parsed:
            print(parsed)
        if own_text:
            print(own_text)
    if final.taken_over:  # stopped (Ctrl+Z) while another process resumed the run: its answers discarded
        print(f"thoughtdesk: {final.last_error}", file=sys.stderr)
        return EXIT_OK if final.status == "done" else EXIT_FAIL
    if final.status == "batched":  # resume --direct of a batch run: some requests wait in open batches
        print(f"thoughtdesk: run {run_id}: {final.last_error}", file=sys.stderr)
        return EXIT_OK
    if final.status != "done":
        print(
            f"thoughtdesk: run {run_id} is not complete ({final.last_error or final.status}); "
            f"`thoughtdesk resume {run_id}` sends the missing requests",
            file=sys.stderr,
        )
        return EXIT_FAIL
    return EXIT_OK


def open_library_path(args: argparse.Namespace):
    with open_library(args, create=False) as lib:
        return lib.path


def warn_offline_pools(models: Iterable[ModelSpec]) -> None:
    """Say on stderr which pools offline mode cuts down to their servers on this machine."""
    for warning in offline_pool_warnings(models):
        print(f"thoughtdesk: warning: {warning}", file=sys.stderr)


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


def print_previews(previews: Iterable[PromptPreview]) -> None:
    """The exact prompts of ``--plan-only``, each under a line naming its step, sample, model and variant."""
    for preview in previews:
        print(f"--- {preview.step} | {preview.sample_label} | {preview.model} | {preview.variant}")
        print(preview.prompt)


def cmd_critique(args: argparse.Namespace) -> int:
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


def cmd_judge(args: argparse.Namespace) -> int:
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


def selection_options(p: argparse.ArgumentParser, what: str) -> None:
    """--dataset, --split, --limit and --seed: which of the collection's ``what`` (samples, CoTs,
    pairs) a run plans."""
    p.add_argument("--dataset", action="append", metavar="D", help="only this dataset (repeatable)")
    p.add_argument("--split", action="append", metavar="S", help="only this split (repeatable)")
    p.add_argument("--limit", type=whole(1), metavar="N", help=f"at most N {what} per dataset split")
    p.add_argument("--seed", type=whole(0), metavar="K", help=f"with --limit: draw the {what} at random")


def call_options(p: argparse.ArgumentParser) -> None:
    """The options of a run's model calls shared by critique, revise and judge runs, and of its
    plan (--force, --name, --plan-only)."""
    p.add_argument(
        "--n-ctx",
        type=whole(64, 1_000_000),
        default=2048,
        metavar="N",
        help="llamacpp: context size in tokens (default 2048)",
    )
    p.add_argument("--timeout", type=number(1, 86400), default=120.0, metavar="S", help="seconds per call")
    p.add_argument("--model-seed", type=whole(0), metavar="K", help="sampling seed sent to the model")
    p.add_argument("--force", action="store_true", help="call the model even for requests already stored")
    p.add_argument("--name", metavar="NAME", help="a name for the run")
    p.add_argument("--plan-only", action="store_true", help="print the plan and prompt previews; send nothing")


def execution_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json", action="store_true", help="print the run's outcome as one JSON object (progress stays on stderr)"
    )
    p.add_argument(
        "--concurrency", type=whole(1, 1024), default=8, metavar="C", help="requests in flight per provider (default 8)"
    )
    p.add_argument("--rpm", type=number(above=0), metavar="R", help="at most R requests per minute")
    p.add_argument("--tpm", type=number(above=0), metavar="T", help="at most T tokens per minute")
    p.add_argument(
        "--max-attempts",
        type=whole(1, 100),
        default=6,
        metavar="A",
        help="tries per request, retries included (default 6)",
    )
    p.add_argument(
        "--retry-wait",
        type=number(0, 600),
        default=1.0,
        metavar="S",
        help="seconds before the first retry, doubling after (default 1)",
    )
    p.add_argument(
        "--max-response-mb",
        type=whole(LOWEST_MB, HIGHEST_MB),
        metavar="MB",
        help=f"the largest answer a server may send, {LOWEST_MB} to {HIGHEST_MB} MB (default: the app's setting, "
        f"{DEFAULT_MB} unless changed); a request's own bound also grows with its max tokens",
    )


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
