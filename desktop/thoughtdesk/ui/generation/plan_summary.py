"""Plain parts of the run planner: where samples come from, and the plan as text for people.

No widgets here; :mod:`thoughtdesk.ui.generation.planner` shows these texts in plain-text widgets.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from thoughtdesk.core.generation.backends.batches import BATCH_WINDOW_HOURS
from thoughtdesk.core.generation.backends.pricing import BATCH_DISCOUNT
from thoughtdesk.core.generation.runs import (
    RunPlan,
    SampleSelection,
    offline_pool_warnings,
    reasoning_budget_warnings,
)
from thoughtdesk.core.library.queries import SampleFilter, sample_keys
from thoughtdesk.core.library.store import Library

SourceKind = Literal["collection", "filter", "selection"]
PREVIEW_PAIRS = 3  # (sample, variant) pairs whose exact prompts are shown


@dataclass(frozen=True, slots=True)
class SampleSource:
    """Where the run's samples come from, resolved to a SampleSelection in the worker.

    ``collection``: a collection, optionally one dataset and split; ``filter``: the samples
    the main window's table shows (its filter); ``selection``: explicit sample keys.
    ``limit`` is samples per dataset split (collection) or in all (filter, selection); with a
    ``seed`` they are drawn at random, else the first ones are taken.
    """

    kind: SourceKind
    collection: str
    dataset: str | None = None
    split: str | None = None
    main_filter: SampleFilter | None = None
    sample_pks: tuple[int, ...] = ()
    limit: int | None = None
    seed: int | None = None

    def selection(self, lib: Library) -> SampleSelection:
        if self.kind == "collection":
            return SampleSelection(
                self.collection,
                datasets=(self.dataset,) if self.dataset else (),
                splits=(self.split,) if self.split else (),
                limit=self.limit,
                seed=self.seed,
            )
        keys = (
            list(sample_keys(lib, self.main_filter))
            if self.kind == "filter" and self.main_filter
            else list(self.sample_pks)
        )
        if self.limit is not None and len(keys) > self.limit:
            if self.seed is not None:
                chosen = set(random.Random(self.seed).sample(keys, self.limit))
                keys = [k for k in keys if k in chosen]
            else:
                keys = keys[: self.limit]
        return SampleSelection(self.collection, sample_pks=tuple(keys))


def format_previews(plan: RunPlan) -> str:
    """The exact prompts of the plan's first requests, each under a one-line header."""
    blocks = []
    chat_models = {m.label for m in plan.spec.models if m.chat}
    for preview in plan.previews(PREVIEW_PAIRS):
        how = "one user chat message" if preview.model in chat_models else "raw prompt"
        header = (
            f"──── {preview.step.upper()} · {preview.sample_label} · {preview.model} · "
            f"{preview.variant} · sent as {how} ────"
        )
        blocks.append(f"{header}\n{preview.prompt}")
    return "\n\n".join(blocks)


def describe_plan(plan: RunPlan) -> str:
    """The counts, tokens and cost of a plan for people (USD, tokens estimated at ~4 chars)."""
    guide = plan.spec.guide
    first = (
        f"{plan.total:,} guided CoTs ({guide.label}): up to {guide.max_steps} steps of {guide.n_candidates} "
        f"candidate(s), each step stored as it is chosen"
        if guide is not None
        else f"{plan.total:,} requests: {plan.n_cot_requests:,} CoT + {plan.n_extraction_requests:,} answer extraction"
    )
    lines = [
        first,
        f"{plan.n_samples:,} samples × {len(plan.variants)} prompt variants × "
        f"{len(plan.spec.models)} models × n={plan.spec.n}",
        f"Estimated tokens: {plan.estimated_prompt_tokens:,} prompt + at most "
        f"{plan.estimated_completion_tokens:,} completion",
    ]
    if plan.estimated_cost is None:
        lines.append("Cost: unknown — no price for " + ", ".join(plan.unpriced_models) + " (add it in the Prices tab)")
    else:
        by_model = ", ".join(f"{label} ${cost:.4f}" for label, cost in plan.cost_by_model.items() if cost is not None)
        lines.append(f"Estimated cost: at most ${plan.estimated_cost:.4f} ({by_model})")
    if plan.scorer is not None:
        lines.append(f"Scorer: {plan.scorer.detail}")
    if plan.spec.batch:
        # Batch APIs: half the price, answered within 24 h (the deadline counted from now).
        due = (datetime.now(UTC) + timedelta(hours=BATCH_WINDOW_HOURS)).strftime("%Y-%m-%d %H:%M UTC")
        price = "unknown" if plan.estimated_cost is None else f"at most ${plan.estimated_cost * BATCH_DISCOUNT:.4f}"
        lines.append(f"Batch API: {price} at the batch price; results due within {BATCH_WINDOW_HOURS} h, by {due}")
    lines.extend(f"Warning: {warning}" for warning in offline_pool_warnings(plan.spec.all_models()))
    lines.extend(f"Warning: {warning}" for warning in reasoning_budget_warnings(plan.spec.models))
    return "\n".join(lines)
