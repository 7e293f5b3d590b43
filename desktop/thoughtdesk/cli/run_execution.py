"""What every run command shares once its run is written: the user's price table, executing a
run (``resume_run``) to its end with a progress line and printing its outcome, offline pools'
warnings and ``--plan-only``'s prompt previews (``generate``, ``critique``, ``revise``, ``judge``,
``autolabel``, ``resume``; their options: :mod:`thoughtdesk.cli.run_options`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable

from thoughtdesk.cli.common import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, ProgressLine, open_library
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import BackendError, PriceTable
from thoughtdesk.core.generation.backends.pricing import load_price_table
from thoughtdesk.core.generation.backends.response_cap import set_response_cap_mb
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    PromptPreview,
    RunLimits,
    RunProgress,
    offline_pool_warnings,
    parse_summary,
    resume_run,
    run_info,
    stopped_for_good,
    verdict_summary,
)
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


def print_previews(previews: Iterable[PromptPreview]) -> None:
    """The exact prompts of ``--plan-only``, each under a line naming its step, sample, model and variant."""
    for preview in previews:
        print(f"--- {preview.step} | {preview.sample_label} | {preview.model} | {preview.variant}")
        print(preview.prompt)
