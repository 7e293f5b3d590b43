"""``thoughtdesk cots split-thinking COLLECTION [--tags OPEN,CLOSE] [--dry-run] [--undo] [--json]``:
stored CoTs whose text holds a reasoning model's ``<think>`` block split into the thinking and
the visible text, as runs store them now (docs/reasoning.md). The text as it was is kept in the
CoT's extra; ``--undo`` puts it back."""

from __future__ import annotations

import argparse
import json

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, open_library
from thoughtdesk.core.errors import ThoughtDeskError


def cmd_split_thinking(args: argparse.Namespace) -> int:
    from thoughtdesk.core.library.thinking_split import split_stored_thinking, undo_split
    from thoughtdesk.core.thinking import parse_think_tags

    try:
        tags = parse_think_tags(args.tags)
    except ValueError as error:
        raise ThoughtDeskError(f"--tags: {error}") from None
    if tags is None:
        raise ThoughtDeskError("--tags: name the two tags to split at, e.g. '<think>,</think>'")
    with open_library(args) as lib:
        if args.undo:
            report = undo_split(lib, args.collection, dry_run=args.dry_run)
        else:
            report = split_stored_thinking(lib, args.collection, tags=tags, dry_run=args.dry_run)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
        return EXIT_OK
    verb = (
        ("would put back" if args.dry_run else "put back")
        if args.undo
        else ("would split" if args.dry_run else "split")
    )
    text = f"{args.collection}: {verb} {report.changed} CoT(s) of {report.examined} examined"
    if report.unclosed:
        text += f"; {report.unclosed} with thinking never closed (kept whole as thinking)"
    print(text)
    for note in report.notes[:20]:
        print(f"  CoT {note['cot']}: {note['note']}")
    if report.changed and not args.dry_run and not args.undo:
        print(
            f"the texts as they were are kept; answers were not re-scored: thoughtdesk evaluate {args.collection!r} --rescore"
        )
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "cots", description="Work on a collection's stored CoTs.")
    commands = p.add_subparsers(dest="cots_command", required=True, metavar="COMMAND")
    q = commands.add_parser(
        "split-thinking",
        help="split CoTs whose text holds <think>...</think> into the thinking and the visible text "
        "(the text as it was is kept; --undo puts it back)",
        description="Split each CoT of a collection whose text holds a reasoning model's thinking between "
        "think tags (also only a closing tag, as models whose template opens it write) into the thinking "
        "(its own column) and the visible text (the CoT), as runs store them now. CoTs that already have a "
        "thinking are left alone. The text as it was is kept in the CoT's extra; --undo puts it back.",
    )
    q.add_argument("collection", help="the collection's name")
    q.add_argument(
        "--tags", default="<think>,</think>", metavar="OPEN,CLOSE", help="the think tags (default: %(default)s)"
    )
    q.add_argument("--dry-run", action="store_true", help="count what would change, change nothing")
    q.add_argument("--undo", action="store_true", help="put back the texts a split changed")
    q.add_argument("--json", action="store_true", help="print what was done as JSON")
    q.set_defaults(func=cmd_split_thinking)
