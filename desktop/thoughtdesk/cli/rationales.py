"""``thoughtdesk logprobs`` (a continuation's token log-probs) and ``thoughtdesk rationales
extract|filter|export`` (mining rationales, RATIONALYST), over :mod:`thoughtdesk.core.rationales`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    ProgressLine,
    base_url_options,
    number,
    open_library,
    server_urls,
    whole,
)
from thoughtdesk.cli.models import add_chat_options, model_spec, temperature
from thoughtdesk.core.generation.backends import Backend, LlamaCppBackend
from thoughtdesk.core.generation.defaults import model_defaults
from thoughtdesk.core.generation.runs import ModelSpec
from thoughtdesk.core.generation.runs.providers import build_backend
from thoughtdesk.core.generation.scoring import DEFAULT_DECAY
from thoughtdesk.core.rationales.export import export_rationales, pick_scorer
from thoughtdesk.core.rationales.extraction import DEFAULT_PROMPT_KEY, Markers
from thoughtdesk.core.rationales.filtering import (
    DEFAULT_HORIZON,
    DEFAULT_LAYOUT,
    DEFAULT_TAU,
    LAYOUTS,
    TAU_PRESETS,
    scorer_key,
)
from thoughtdesk.core.rationales.mining import PassSummary, filter_table, histogram
from thoughtdesk.core.rationales.runs import RationalePlan
from thoughtdesk.core.rationales.setup import (
    DEFAULT_EXTRACT_CONCURRENCY,
    DEFAULT_FILTER_CONCURRENCY,
    MAX_CONCURRENCY,
    ExtractionSetup,
    FilterSetup,
    extraction_setup,
    filter_setup,
    plan_extraction,
    plan_filter,
    require_scorer,
    resilient,
    run_extraction,
    run_filter,
)


def _spec(args: argparse.Namespace, text: str, *, endpoint: str, chat: bool | None = False) -> ModelSpec:
    """The model named on the command line with the shared model options, filled in as
    ``generate`` fills its models (:func:`~thoughtdesk.cli.models.model_spec`: ``llamacpp`` alone
    is the local model set in Settings, a provider's address is the one set there). ``chat``
    None: the provider's default (a local model's chat template, as in ``generate``); a scorer
    is always a raw completion (False)."""
    options: dict[str, object] = {"timeout": args.timeout, "n_ctx": args.n_ctx}
    options.update(base_url_options(args.base_url))
    options["endpoint"] = args.endpoint or endpoint
    if getattr(args, "completion_template", None):
        options["completion_template"] = args.completion_template.replace("\\n", "\n")
    return model_spec(text, options, model_defaults(), chat=chat)


async def _memory_note(backend: Backend) -> None:
    """Before a local model loads its scoring copy, say what it costs."""
    if isinstance(backend, LlamaCppBackend):
        memory = await backend.scoring_memory()
        print(f"thoughtdesk: {backend.label}: {memory.describe()}", file=sys.stderr)


# --- logprobs ----------------------------------------------------------------------------------


def cmd_logprobs(args: argparse.Namespace) -> int:
    spec = _spec(args, args.model, endpoint="completions")

    async def main():
        backend = build_backend(spec)
        try:
            await _memory_note(backend)
            [scores] = await resilient(backend, 1).score(args.prompt, [args.continuation])
            return scores
        finally:
            await backend.aclose()

    scores = asyncio.run(main())
    if args.json:
        print(json.dumps(scores.to_json(), ensure_ascii=False))
        return EXIT_OK
    for token, value in zip(scores.tokens, scores.logprobs, strict=True):
        print(f"{value:10.4f}  {json.dumps(token, ensure_ascii=False)}")
    if scores.logprobs:
        print(
            f"{len(scores.logprobs)} tokens: sum {scores.total:.4f}, mean {scores.mean:.4f}, "
            f"0.9-decayed mean {scores.decayed_mean():.4f}"
        )
    else:
        print("0 tokens (the continuation is empty)")
    return EXIT_OK


# --- rationales ----------------------------------------------------------------------------------


def _markers(args: argparse.Namespace) -> Markers:
    return Markers.parse(args.markers)


def _summary_line(what: str, summary: PassSummary) -> str:
    return f"{what}: {summary.done} done now, {summary.skipped} done before, {summary.failed} failed of {summary.total}"


def _summary_json(summary: PassSummary) -> dict[str, int]:
    return {"done": summary.done, "skipped": summary.skipped, "failed": summary.failed, "total": summary.total}


def _report_failures(summary: PassSummary, again: str) -> int:
    for error in summary.errors:
        print(f"thoughtdesk: {error}", file=sys.stderr)
    if summary.failed:
        print(
            f"thoughtdesk: {summary.failed} failed; run `{again}` again to retry them (finished ones are kept)",
            file=sys.stderr,
        )
        return EXIT_FAIL
    return EXIT_OK


def extraction_setup_of(args: argparse.Namespace) -> ExtractionSetup:
    """The extraction pass the command line asks for (core/rationales/setup.py, as the dialog)."""
    from thoughtdesk.cli.fragments import user_fragments

    return extraction_setup(
        _spec(args, args.model, endpoint="chat", chat=args.chat),
        user_fragments(),
        source=args.source,
        prompt_key=args.prompt,
        markers=_markers(args),
        temperature=args.temperature,
        concurrency=args.concurrency,
    )


def _print_plan(plan: RationalePlan, args: argparse.Namespace) -> int:
    """--plan-only: what the pass would send (nothing is sent or written)."""
    if args.json:
        print(
            json.dumps(
                {
                    "collection": args.collection,
                    "kind": plan.spec.kind,
                    "requests": plan.total,
                    "items": plan.items,
                    "done_before": plan.done_before,
                    "in_unfinished_runs": plan.in_other_runs,
                    "prompt_tokens": plan.estimated_prompt_tokens,
                    "completion_tokens": plan.estimated_completion_tokens,
                    "cost": plan.estimated_cost,
                }
            )
        )
    else:
        print(plan.summary())
    return EXIT_OK


def cmd_extract(args: argparse.Namespace) -> int:
    setup = extraction_setup_of(args)
    if args.plan_only:
        with open_library(args) as lib:
            return _print_plan(plan_extraction(lib, args.collection, setup), args)
    bar = ProgressLine("rewriting")
    with open_library(args) as lib:
        summary = asyncio.run(run_extraction(lib, args.collection, setup, progress=bar))
    bar.finish()
    if args.json:
        print(
            json.dumps(
                {
                    "collection": args.collection,
                    **_summary_json(summary),
                    "valid": summary.valid,
                    "records": summary.records,
                }
            )
        )
    else:
        print(
            _summary_line("documents", summary)
            + f"; {summary.valid} of {summary.done} rewrites valid, {summary.records} rationales stored"
        )
    return _report_failures(summary, f"thoughtdesk rationales extract {args.collection} ...")


def _tau(args: argparse.Namespace) -> float:
    if args.tau is not None:
        return float(args.tau)
    return TAU_PRESETS[args.preset] if args.preset else DEFAULT_TAU


def filter_setup_of(args: argparse.Namespace) -> FilterSetup:
    """The filter pass the command line asks for (core/rationales/setup.py, as the dialog)."""
    return filter_setup(
        _spec(args, args.scorer, endpoint="completions"),
        layout=args.layout,
        markers=_markers(args),
        decay=args.decay,
        horizon=args.horizon,
        limit=args.limit,
        concurrency=args.concurrency,
    )


def _note(text: str) -> None:
    print(f"thoughtdesk: {text}", file=sys.stderr)


def cmd_filter(args: argparse.Namespace) -> int:
    setup = filter_setup_of(args)
    require_scorer(setup.scorer)  # before the library is opened: every rationale would fail
    if args.plan_only:
        with open_library(args) as lib:
            return _print_plan(plan_filter(lib, args.collection, setup), args)
    tau = _tau(args)
    # Scores of the two layouts differ in kind: each is stored under its own name.
    label = setup.label
    bar = ProgressLine("scoring")
    with open_library(args) as lib:
        summary = asyncio.run(run_filter(lib, args.collection, setup, progress=bar, note=_note))
        bar.finish()
        table = filter_table(lib, args.collection, label, tau=tau, decay=args.decay)
    if args.json:
        print(
            json.dumps(
                {
                    "collection": args.collection,
                    "scorer": label,
                    "layout": args.layout,
                    **_summary_json(summary),
                    "tau": tau,
                    "documents": table.documents,
                    "valid_documents": table.valid_documents,
                    "rationales": table.rationales,
                    "scored": table.scored,
                    "kept": table.kept,
                    "dropped": table.dropped,
                }
            )
        )
        return _report_failures(summary, f"thoughtdesk rationales filter {args.collection} ...")
    print(_summary_line("rationales scored", summary))
    print(
        f"{table.documents} documents rewritten, {table.valid_documents} valid; {table.rationales} rationales, "
        f"{table.scored} scored by {label}; kept at tau {tau:g}: {table.kept} ({100 * table.kept_share:.1f} %), "
        f"dropped {table.dropped}"
    )
    _print_histogram(table.reductions, tau)
    return _report_failures(summary, f"thoughtdesk rationales filter {args.collection} ...")


def _print_histogram(values: tuple[float, ...], tau: float) -> None:
    bins = histogram(values, bins=12)
    if not bins:
        return
    most = max(count for _, _, count in bins)
    print("loss reduction        count")
    for low, high, count in bins:
        mark = " <- tau" if low <= tau < high else ""
        bar = "#" * max(1 if count else 0, round(30 * count / most))
        print(f"{low:8.3f} .. {high:8.3f} {count:6d} {bar}{mark}")


def cmd_export(args: argparse.Namespace) -> int:
    scorer = scorer_key(ModelSpec.parse(args.scorer).label, args.layout) if args.scorer else None
    with open_library(args, create=False) as lib:
        count = export_rationales(
            lib,
            args.collection,
            args.out,
            tau=_tau(args),
            decay=args.decay,
            scorer=scorer,
            unfiltered=args.unfiltered,
            force=args.force,
        )
        which = (
            "all"
            if args.unfiltered
            else f"kept at tau {_tau(args):g} by {pick_scorer(lib, args.collection, scorer, args.decay)}"
        )
    if args.json:
        print(json.dumps({"collection": args.collection, "records": count, "which": which, "path": args.out}))
    else:
        print(f"{count} rationales ({which}) written to {args.out}")
    return EXIT_OK


# --- the parser ------------------------------------------------------------------------------


def _layout_option(p: argparse.ArgumentParser, *, scored: bool = False) -> None:
    what = "with --scorer: the layout its scores were made in" if scored else "the prompt the scorer sees"
    p.add_argument(
        "--layout",
        choices=LAYOUTS,
        default=DEFAULT_LAYOUT,
        help=f"{what}: thoughtdesk (raw text, the rationale between its markers; the default) or paper "
        "(RATIONALYST's filter prompt: a Llama-3 chat, preceding + '. ' + rationale, the template's tokens "
        "scored too; the paper's tau values are calibrated for it). docs/rationales.md shows both",
    )


def _model_options(p: argparse.ArgumentParser, *, chat: bool) -> None:
    p.add_argument(
        "--base-url",
        type=server_urls,
        action="append",
        metavar="URL",
        help="OpenAI-compatible server address (repeat it, or separate with commas, for a pool)",
    )
    p.add_argument("--endpoint", choices=["chat", "completions"], help="OpenAI endpoint")
    p.add_argument(
        "--n-ctx", type=whole(64, 1_000_000), default=2048, metavar="N", help="llamacpp: context size (default 2048)"
    )
    p.add_argument("--timeout", type=number(1, 86400), default=300.0, metavar="S", help="seconds per call")
    if chat:  # as generate's: chat by default for llamacpp and the chat endpoint
        add_chat_options(p)


def _tau_options(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--tau",
        type=number(),
        metavar="T",
        help=f"keep rationales whose loss reduction is >= T (default {DEFAULT_TAU:g})",
    )
    group.add_argument(
        "--preset",
        choices=list(TAU_PRESETS),
        help="the paper's tau: math 1.2 (GSM8K), commonsense 0.5 (ECQA), web 0 (the Pile)",
    )
    p.add_argument("--decay", type=number(above=0, high=1), default=DEFAULT_DECAY, metavar="D", help="default 0.9")


def _plan_only_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--plan-only",
        action="store_true",
        help="print the run's requests, tokens and cost, and send nothing (the pass is a run: `thoughtdesk runs` "
        "lists it, `thoughtdesk resume RUN` resumes it)",
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "logprobs")
    p.add_argument(
        "--model",
        required=True,
        metavar="PROVIDER:MODEL",
        help="llamacpp:PATH.gguf, or openai:NAME with --base-url of a server whose /completions echoes log-probs",
    )
    p.add_argument("--prompt", required=True, metavar="TEXT", help="the prefix (not scored)")
    p.add_argument("--continuation", required=True, metavar="TEXT", help="the text scored after the prefix")
    p.add_argument("--json", action="store_true", help='print {"tokens": [...], "logprobs": [...]}')
    _model_options(p, chat=False)
    p.set_defaults(func=cmd_logprobs)

    p = add_command(sub, "rationales")
    commands = p.add_subparsers(dest="rationales_command", required=True, metavar="COMMAND")

    q = commands.add_parser(
        "extract",
        help="a model rewrites each document with rationales between its sentences; valid rewrites are split "
        "into (preceding, rationale, following) records. A run of the engine: resumable, documents done are skipped",
    )
    q.add_argument("collection", help="the collection's name")
    q.add_argument("--model", required=True, metavar="PROVIDER:MODEL", help="the model that writes the rationales")
    q.add_argument(
        "--source",
        default="reference",
        metavar="reference|generated|FILE",
        help="reference CoTs (default), generated CoTs, or a .txt (blank-line separated) or .jsonl ('text') file",
    )
    q.add_argument(
        "--markers", default="<BOT>...<EOT>", metavar="B...E", help="rationale markers (default <BOT>...<EOT>)"
    )
    q.add_argument(
        "--prompt",
        default=DEFAULT_PROMPT_KEY,
        metavar="KEY",
        help=f"rationale_extraction fragment (default {DEFAULT_PROMPT_KEY})",
    )
    q.add_argument(
        "--temperature", type=temperature, default=0.0, metavar="T", help="sampling temperature, 0 to 2 (default 0)"
    )
    q.add_argument(
        "--concurrency",
        type=whole(1, MAX_CONCURRENCY),
        default=DEFAULT_EXTRACT_CONCURRENCY,
        metavar="C",
        help=f"requests in flight in all (default {DEFAULT_EXTRACT_CONCURRENCY}; a pool of servers shares them)",
    )
    q.add_argument("--json", action="store_true", help="print what was done as one JSON object")
    _plan_only_option(q)
    _model_options(q, chat=True)
    q.set_defaults(func=cmd_extract)

    q = commands.add_parser(
        "filter",
        help="score each rationale's loss reduction on the following text (0.9 decay) and report those kept at tau. "
        "A run of the engine: resumable, rationales scored by this scorer are skipped",
    )
    q.add_argument("collection", help="the collection's name")
    q.add_argument("--scorer", required=True, metavar="PROVIDER:MODEL", help="a model that can score text")
    _tau_options(q)
    q.add_argument(
        "--horizon",
        type=whole(0),
        default=DEFAULT_HORIZON,
        metavar="CHARS",
        help=f"score the following text up to the sentence end after CHARS characters (default {DEFAULT_HORIZON}; 0: all)",
    )
    q.add_argument(
        "--markers",
        default="<BOT>...<EOT>",
        metavar="B...E",
        help="how the rationale is shown to the scorer (thoughtdesk layout; the paper's has none)",
    )
    _layout_option(q)
    q.add_argument("--limit", type=whole(1), metavar="N", help="score at most N rationales now")
    q.add_argument(
        "--concurrency",
        type=whole(1, MAX_CONCURRENCY),
        default=DEFAULT_FILTER_CONCURRENCY,
        metavar="C",
        help=f"requests in flight in all (default {DEFAULT_FILTER_CONCURRENCY}; a pool of servers shares them)",
    )
    q.add_argument("--json", action="store_true", help="print what was done and the kept share as one JSON object")
    _plan_only_option(q)
    _model_options(q, chat=False)
    q.set_defaults(func=cmd_filter)

    q = commands.add_parser(
        "export",
        help="write the kept rationales as chat fine-tuning JSONL (user: preceding text, assistant: rationale)",
    )
    q.add_argument("collection", help="the collection's name")
    q.add_argument("out", metavar="OUT.jsonl", help="the file to write")
    q.add_argument("--scorer", metavar="PROVIDER:MODEL", help="whose scores decide (default: the only scorer)")
    _layout_option(q, scored=True)
    _tau_options(q)
    q.add_argument("--unfiltered", action="store_true", help="every rationale of a valid rewrite, scored or not")
    q.add_argument("--force", action="store_true", help="overwrite a file that is not an earlier export")
    q.add_argument("--json", action="store_true", help="print what was written as one JSON object")
    q.set_defaults(func=cmd_export)
