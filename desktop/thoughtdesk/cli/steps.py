"""``thoughtdesk autolabel COLLECTION --model P:M``: automatic step labels from rollouts
(Math-Shepherd; docs/steps.md)."""

from __future__ import annotations

import argparse
import json

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, ProgressLine, base_url_options, open_library, whole
from thoughtdesk.cli.models import model_spec, temperature


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
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.set_defaults(func=cmd_autolabel)


def cmd_autolabel(args: argparse.Namespace) -> int:
    from thoughtdesk.core.generation.defaults import model_defaults
    from thoughtdesk.core.generation.rollout_labels import author_for, label_collection
    from thoughtdesk.core.generation.runs.providers import build_backend

    options: dict[str, object] = {"temperature": args.temperature, "max_tokens": args.max_tokens}
    options.update(base_url_options(args.base_url))
    model = model_spec(args.model, options, model_defaults())
    with open_library(args, create=False) as lib:
        bar = ProgressLine("labelling", unit="CoTs")
        report = label_collection(
            lib, args.collection, model, build_backend(model), k=args.k, limit=args.limit, seed=args.seed, progress=bar
        )
        bar.finish()
    if args.json:
        print(json.dumps({"author": author_for(model), **vars(report)}))
    else:
        print(
            f"{report.labelled} CoT(s) labelled by {author_for(model)!r} ({report.steps} step(s), {args.k} rollout(s) "
            f"each), {report.skipped} skipped (labelled before, or without steps)"
        )
    return EXIT_OK
