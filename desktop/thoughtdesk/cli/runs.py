"""``thoughtdesk runs``: list the library's generation and critique runs; rename, delete one, or
cancel a batch run's open batches at the provider. (Starting and resuming runs:
:mod:`thoughtdesk.cli.generate`, :mod:`thoughtdesk.cli.critiques`, :mod:`thoughtdesk.cli.judges`.)"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, open_library
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.runs import is_batch_run, list_batches, list_runs, resolve_run_id

# Reading runs needs only runs/read.py (the package's names load on first use): the batch clients
# and run management (httpx) are imported by --cancel, --rename and --delete.


def cmd_runs(args: argparse.Namespace) -> int:
    if args.delete is not None or args.rename is not None:
        return _change_run(args)
    if args.cancel is not None:
        return _cancel_batches(args)
    with open_library(args) as lib:
        runs = list_runs(lib)
        batches = {run.id: list_batches(lib, run.id) for run in runs}
    if args.json:
        print(
            json.dumps(
                [
                    {**run.to_json(), **({"batches": [asdict(b) for b in batches[run.id]]} if batches[run.id] else {})}
                    for run in runs
                ],
                indent=2,
                ensure_ascii=False,
            )
        )
        return EXIT_OK
    for run in runs:
        error = f"  ({run.last_error})" if run.last_error else ""
        status = f"interrupted - resume with: thoughtdesk resume {run.id}" if run.interrupted else run.status
        print(
            f"{run.id}\t{run.kind}\t{status}\t{run.done}/{run.total} done, {run.failed} failed\t"
            f"{', '.join(run.models)}\t{run.name}{error}"
        )
        for batch in batches.get(run.id, []):
            print(f"\tbatch {batch.describe()}")
    return EXIT_OK


def _cancel_batches(args: argparse.Namespace) -> int:
    """``runs --cancel RUN``: ask the provider to cancel a batch run's open batches."""
    import asyncio

    from thoughtdesk.core.generation.runs import cancel_batch_run_async

    with open_library(args) as lib:
        run_id = resolve_run_id(lib, args.cancel)
        if not is_batch_run(lib, run_id):
            raise ThoughtDeskError(
                f"run {run_id} is not a batch run; stop a running one with Ctrl+C or Cancel in the Runs tab"
            )
        path = lib.path
    count = asyncio.run(cancel_batch_run_async(path, run_id))
    text = (
        f"run {run_id}: {count} batch(es) cancelled at the provider; `thoughtdesk resume {run_id}` stores what they "
        f"answered before the cancel and sends nothing (add --resubmit to send the rest in new batches, or --direct "
        "to send it one by one at the normal price)"
    )
    print(json.dumps({"run": run_id, "cancelled_batches": count}) if args.json else text)
    return EXIT_OK


def _change_run(args: argparse.Namespace) -> int:
    """``runs --rename RUN NAME`` and ``runs --delete RUN``."""
    if args.delete is not None and args.rename is not None:
        raise ThoughtDeskError("--delete and --rename cannot be used together")
    from thoughtdesk.core.generation.runs import delete_run, rename_run

    with open_library(args) as lib:
        if args.rename is not None:
            run_id = rename_run(lib, args.rename[0], args.rename[1])
            result = {"run": run_id, "renamed": args.rename[1].strip()}
            text = f"run {run_id} renamed to {args.rename[1].strip()!r}"
        else:
            run_id, requests = delete_run(lib, args.delete)
            result = {"run": run_id, "deleted": True, "requests": requests}
            text = f"run {run_id} deleted ({requests} request row(s)); the CoTs and answers it produced are kept"
    print(json.dumps(result) if args.json else text)
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "runs",
        description="List the library's runs (newest first), or rename or delete one. An interrupted run "
        "says how to resume it. Deleting a run removes its request rows; the CoTs, answers and critiques "
        "it produced stay in the collection.",
    )
    p.add_argument("--json", action="store_true", help="print JSON (for --delete and --rename: what was done)")
    p.add_argument("--delete", metavar="RUN", help="delete this run (id or name); a run being executed is refused")
    p.add_argument("--rename", nargs=2, metavar=("RUN", "NAME"), help="give this run (id or name) a new name")
    p.add_argument("--cancel", metavar="RUN", help="cancel a batch run's open batches at the provider")
    p.set_defaults(func=cmd_runs)
