"""``thoughtdesk trajectories COLLECTION [--json]``: the steps of the guided CoTs of a collection
(rationale, candidates with scores, the chosen one), over
:func:`thoughtdesk.core.generation.runs.collection_trajectories`."""

from __future__ import annotations

import argparse
import json

from thoughtdesk.cli.commands import add_command
from thoughtdesk.cli.common import EXIT_OK, open_library
from thoughtdesk.core.generation.runs import Trajectory, collection_trajectories


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_text(trajectories: list[Trajectory]) -> str:
    """The trajectories for people: one block per guided CoT, chosen candidates marked with *."""
    if not trajectories:
        return "no guided CoTs in this collection (generate some with `thoughtdesk generate ... --guide ...`)"
    lines: list[str] = []
    unparsed = 0
    for trajectory in trajectories:
        lines.append(
            f"{trajectory.dataset}/{trajectory.split}/{trajectory.sample_id}  {trajectory.model}  "
            f"{trajectory.method}  ({len(trajectory.steps)} step(s))"
        )
        for step in trajectory.steps:
            lines.append(f"  step {step.index + 1}: {step.prompt_tokens + step.completion_tokens} tokens")
            if step.rationale is not None:
                lines.append(f"    rationale: {step.rationale}")
            for index, candidate in enumerate(step.candidates):
                mark = "*" if index == step.chosen else " "
                reply = step.unparsed_rating(index)
                score = _score(candidate.score) if reply is None else f"no rating in {json.dumps(reply)}"
                lines.append(f"   {mark} [{score}] {candidate.text}")
            unparsed += step.unparsed_ratings
    if unparsed:
        lines.append(f"{unparsed} rater repl(ies) held no 0-3 rating (their candidates have no score)")
    return "\n".join(lines)


def cmd_trajectories(args: argparse.Namespace) -> int:
    with open_library(args, create=False) as lib:
        trajectories = collection_trajectories(lib, args.collection)
    if args.json:
        print(json.dumps({"trajectories": [t.to_json() for t in trajectories]}, ensure_ascii=False, indent=1))
    else:
        print(format_text(trajectories))
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "trajectories")
    p.add_argument("collection", help="the collection's name")
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"trajectories": [{"sample_id", "steps": [{"rationale", "candidates": [{"text", "score"}], "chosen"}]}]}',
    )
    p.set_defaults(func=cmd_trajectories)
