"""The planning path every kind of run shares (issue 28, point 12): pricing a plan's token
estimates per model, and writing the run's row with its document (whose ``kind`` says which
planner made it: generation, critique, revision) before its request rows.

Each planner (:mod:`.plan` for generation runs, :mod:`.critique`, :mod:`.revision`) expands its
spec into its own requests; what they all do the same way lives here, once.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.library.store import inserted_id

#: A plan's token estimates: (model index, "in" | "out") -> tokens.
TokenCounts = Counter[tuple[int, str]]


@dataclass
class PlanCost:
    """What a plan's tokens cost, in USD: per model label (None: no price) and in total (None
    when any model has no price); the unpriced models' labels in plan order."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total: float | None = 0.0
    by_model: dict[str, float | None] = field(default_factory=dict)
    unpriced: list[str] = field(default_factory=list)


def price_plan(models: Sequence[ModelSpec], tokens: TokenCounts, prices: PriceTable) -> PlanCost:
    """Price ``tokens`` (by index into ``models``). Models sharing a label add up."""
    out = PlanCost(
        prompt_tokens=sum(v for (_, kind), v in tokens.items() if kind == "in"),
        completion_tokens=sum(v for (_, kind), v in tokens.items() if kind == "out"),
    )
    for index, model in enumerate(models):
        cost = prices.cost(model.price_provider, model.model_name, tokens[(index, "in")], tokens[(index, "out")])
        out.by_model[model.label] = (
            cost if model.label not in out.by_model or cost is None else (out.by_model[model.label] or 0.0) + cost
        )
        if cost is None:
            if model.label not in out.unpriced:
                out.unpriced.append(model.label)
            out.total = None
        elif out.total is not None:
            out.total += cost
    return out


def insert_run(conn: sqlite3.Connection, *, name: str, created: str, collection: str, document: dict[str, Any]) -> int:
    """Write a planned run's row (status ``planned``) inside the caller's transaction; return its id.
    ``document`` is the run's stored spec: its ``kind`` (absent: a generation run), spec, texts
    and estimates."""
    return inserted_id(
        conn.execute(
            "INSERT INTO run (name, created, updated, status, collection, spec) VALUES (?, ?, ?, 'planned', ?, ?)",
            (name, created, created, collection, json.dumps(document, ensure_ascii=False)),
        )
    )
