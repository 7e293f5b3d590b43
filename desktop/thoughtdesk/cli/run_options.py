"""The options every run command shares (``generate``, ``critique``, ``revise``, ``judge``,
``autolabel``, ``resume``): which samples, CoTs or pairs a run plans, its model calls, and how it
executes. Cheap to import: a command module's ``register`` adds them without importing the run
engine (:mod:`thoughtdesk.cli.run_execution` executes the run)."""

from __future__ import annotations

import argparse

from thoughtdesk.cli.common import number, whole
from thoughtdesk.core.generation.backends.response_cap import DEFAULT_MB, HIGHEST_MB, LOWEST_MB


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
