"""``thoughtdesk fragments [import|list]``: the user's prompt fragments and critique templates
(the built-in ones with the user's edits, :mod:`thoughtdesk.core.generation.fragment_store`),
listed or added to from a file; and the one way the other commands read them."""

from __future__ import annotations

import argparse
import json
import sys

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK
from thoughtdesk.core.critiques.prompts import CritiqueTemplate
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.fragment_store import FragmentStore
from thoughtdesk.core.generation.fragments import ALL_KINDS, critique_templates, import_fragments, judge_templates
from thoughtdesk.core.generation.prompts import FragmentLibrary
from thoughtdesk.core.judges.prompts import JudgeTemplate


def user_fragments() -> FragmentLibrary:
    """The fragments the user sees in the app: built-in ones with the user's edits applied.

    An unreadable user file is named on stderr and the built-in fragments are used.
    """
    store = FragmentStore()
    library = store.load()
    if store.unreadable is not None:
        print(f"thoughtdesk: {store.unreadable}; using the built-in fragments", file=sys.stderr)
    return library


def user_critique_templates() -> dict[str, CritiqueTemplate]:
    """The critique templates the user sees in the app (the built-in ones are always added)."""
    return critique_templates(user_fragments())


def user_judge_templates() -> dict[str, JudgeTemplate]:
    """The pairwise judge templates the user sees in the app (the built-in one always added)."""
    return judge_templates(user_fragments())


def cmd_fragments_import(args: argparse.Namespace) -> int:
    store = FragmentStore()
    library = store.load()
    if store.unreadable is not None:
        raise ThoughtDeskError(f"{store.unreadable}; fix or move that file first (nothing was imported)")
    report = import_fragments(library, args.file, on_conflict="replace" if args.replace else "keep")
    store.save(library)
    if args.json:
        print(
            json.dumps(
                {
                    "added": [{"kind": f.kind, "key": f.key} for f in report.added],
                    "replaced": [{"kind": f.kind, "key": f.key} for f in report.replaced],
                    "unchanged": report.unchanged,
                    "kept_yours": [{"kind": f.kind, "key": f.key} for f in report.conflicts],
                }
            )
        )
        return EXIT_OK
    for fragment in report.added + report.replaced:
        print(f"{fragment.kind}\t{fragment.key}")
    conflicts = ", ".join(f"{f.key} ({f.kind})" for f in report.conflicts)
    print(
        f"{len(report.added)} added, {len(report.replaced)} replaced, {report.unchanged} already present"
        + (f"; kept yours (different text; --replace to take the file's): {conflicts}" if conflicts else ""),
        file=sys.stderr,
    )
    return EXIT_OK


def cmd_fragments_list(args: argparse.Namespace) -> int:
    """``thoughtdesk fragments [list] [--kind K] [--json]``: the keys ``--instruction``,
    ``--trigger``, ``--extraction`` and ``--template`` take."""
    chosen = [f for f in user_fragments() if not getattr(args, "kind", None) or f.kind == args.kind]
    if getattr(args, "json", False):
        print(
            json.dumps(
                [{"kind": f.kind, "key": f.key, "source": f.source, "text": f.text} for f in chosen],
                indent=2,
                ensure_ascii=False,
            )
        )
        return EXIT_OK
    for fragment in chosen:
        first_line = fragment.text.splitlines()[0] if fragment.text else ""
        print(f"{fragment.kind}\t{fragment.key}\t{fragment.source}\t{first_line[:80]}")
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "fragments",
        description="Without a sub-command: list your fragments (kind, key, source, first line); the keys "
        "are what --instruction, --trigger, --extraction and --template take.",
    )
    p.add_argument("--kind", choices=list(ALL_KINDS), help="only this kind")
    p.add_argument("--json", action="store_true", help="print JSON (kind, key, source and the whole text)")
    p.set_defaults(func=cmd_fragments_list)
    fragments = p.add_subparsers(dest="fragments_command", metavar="COMMAND")
    q = fragments.add_parser(
        "import",
        help="add the fragments of a ThoughtDesk or ThoughtSource fragments file, or DS Critique Bank's "
        "DSCB-prompts.json (its critique template and student prompts), to yours",
    )
    q.add_argument("file", help="the JSON file")
    q.add_argument("--replace", action="store_true", help="replace your fragments that have the same key")
    q.add_argument("--json", action="store_true", help="print what was added, replaced and kept as JSON")
    q.set_defaults(func=cmd_fragments_import)
    q = fragments.add_parser("list", help="list your fragments (kind, key, source, first line)")
    q.add_argument("--kind", choices=list(ALL_KINDS), help="only this kind")
    q.add_argument("--json", action="store_true", help="print JSON (kind, key, source and the whole text)")
    q.set_defaults(func=cmd_fragments_list)
