"""Planning an automatic step label run (Math-Shepherd rollouts; docs/steps.md): one ``rollout``
request per step of every generated CoT of a collection, each asking the completer for K
continuations of the question and the solution up to and including that step, written as the
request rows of an ordinary run on the planning path every kind of run shares
(:func:`~.planning.price_plan`, :func:`~.planning.insert_run`).

The engine executes, pauses and resumes it like any run. A ``rollout`` request names its CoT in
``target_cot_pk`` and its step in ``params`` (``step``, ``step_id``, ``k``); committing it
(:func:`~.commit_judged.store_rollout`) writes that step's label into the completer's step labels of the
CoT in the transaction that marks the request done, so each step is labelled exactly once. CoTs
the completer labelled whole before (by an earlier run or the command of an older version) are
left out unless the spec forces them; one a stopped run labelled in part is finished by resuming
that run, or planned whole again by a new one (whose labels then replace the part).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field

from thoughtdesk.core.generation.backends import PriceTable, estimate_tokens
from thoughtdesk.core.generation.rollout_labels import METHOD, author_for, rollout_prompt, rollout_request
from thoughtdesk.core.generation.runs.critique import select_cots
from thoughtdesk.core.generation.runs.kind_specs import AutolabelSpec, CotSelection
from thoughtdesk.core.generation.runs.plan import PromptPreview, fingerprint
from thoughtdesk.core.generation.runs.planning import insert_run, price_plan
from thoughtdesk.core.generation.runs.spec import RunSpecError
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.steps.split import cot_steps
from thoughtdesk.core.steps.store import StepTarget, review_of

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PlannedRollout:
    """One step's rollouts: K continuations of ``prompt`` (CoT ``cot_pk``, step ``step``)."""

    sample_pk: int
    cot_pk: int
    label: str
    step: int
    step_id: str
    prompt: str
    estimated_prompt_tokens: int
    estimated_completion_tokens: int


@dataclass
class AutolabelPlan:
    """A planned automatic step label run; nothing has been sent. Costs are USD; None when the
    completer has no price."""

    spec: AutolabelSpec
    requests: list[PlannedRollout]
    cots: int = 0  # CoTs to label
    labelled_before: int = 0  # left out: the completer labelled them before
    without_steps: int = 0  # left out: no text, so no steps
    estimated_prompt_tokens: int = 0
    estimated_completion_tokens: int = 0
    estimated_cost: float | None = 0.0
    cost_by_model: dict[str, float | None] = field(default_factory=dict)
    unpriced_models: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.requests)

    @property
    def author(self) -> str:
        return author_for(self.spec.model)

    def previews(self, limit: int = 1) -> list[PromptPreview]:
        """The exact prompts of the first ``limit`` requests."""
        return [
            PromptPreview(r.label, self.spec.model.label, f"step {r.step + 1}", "rollout", r.prompt)
            for r in self.requests[:limit]
        ]

    def summary(self) -> str:
        """One line: requests, CoTs, rollouts, tokens and cost."""
        cost = (
            "unknown (no price for " + ", ".join(self.unpriced_models) + ")"
            if self.estimated_cost is None
            else f"at most ${self.estimated_cost:.4f}"
        )
        left = []
        if self.labelled_before:
            left.append(f"{self.labelled_before} labelled before by {self.author!r}")
        if self.without_steps:
            left.append(f"{self.without_steps} without steps")
        out = (
            f"{self.total} rollout request(s): every step of {self.cots} CoT(s) of {self.spec.collection!r}, "
            f"{self.spec.k} rollout(s) each by {self.spec.model.label}; about {self.estimated_prompt_tokens} prompt "
            f"+ at most {self.estimated_completion_tokens} completion tokens; cost {cost}"
        )
        return out + (f"; left out: {', '.join(left)}" if left else "")


def plan_autolabel_run(lib: Library, spec: AutolabelSpec, *, prices: PriceTable | None = None) -> AutolabelPlan:
    """Expand ``spec`` into rollout requests (one per step of each CoT to label) with exact
    prompts, counts, tokens and cost. Nothing is sent or written. RunSpecError when the
    collection is unknown or has no generated CoT."""
    prices = prices or PriceTable()
    refs = select_cots(lib, CotSelection(spec.collection))
    if not refs:
        raise RunSpecError(f"collection {spec.collection!r} has no generated CoTs to label (generate some first)")
    refs = refs[: spec.limit] if spec.limit is not None else refs
    author = author_for(spec.model)
    plan = AutolabelPlan(spec, [])
    tokens: Counter[tuple[int, str]] = Counter()
    for ref in refs:
        extra = json.loads(ref.extra) if ref.extra else None
        steps = cot_steps(ref.text, extra if isinstance(extra, dict) else None)
        if not steps:
            plan.without_steps += 1
            continue
        before = None if spec.force else review_of(lib.conn, StepTarget(ref.sample.pk, ref.pk), author)
        if before is not None and {x.step for x in before.labels} >= {step.index for step in steps}:
            plan.labelled_before += 1  # (a CoT a stopped run labelled in part is planned whole again)
            continue
        plan.cots += 1
        texts = [step.text for step in steps]
        for step in steps:
            prompt = rollout_prompt(ref.sample.question, texts[: step.index + 1])
            estimate = estimate_tokens(prompt)
            completion = spec.model.max_tokens * spec.k
            plan.requests.append(
                PlannedRollout(
                    ref.sample.pk,
                    ref.pk,
                    f"{ref.label} step {step.index + 1}",
                    step.index,
                    step.id,
                    prompt,
                    estimate,
                    completion,
                )
            )
            tokens[(0, "in")] += estimate
            tokens[(0, "out")] += completion
    cost = price_plan(spec.models, tokens, prices)  # the planning path every kind of run shares
    plan.estimated_prompt_tokens, plan.estimated_completion_tokens = cost.prompt_tokens, cost.completion_tokens
    plan.estimated_cost, plan.cost_by_model, plan.unpriced_models = cost.total, cost.by_model, cost.unpriced
    return plan


def create_autolabel_run(lib: Library, plan: AutolabelPlan, *, name: str | None = None) -> int:
    """Store the run (:func:`~.planning.insert_run`) and its ``rollout`` request rows in one
    transaction; return the run id. RunSpecError when the plan has no request."""
    if not plan.requests:
        raise RunSpecError(f"nothing to label in collection {plan.spec.collection!r}: {plan.summary()}")
    spec = plan.spec
    model = spec.model
    created = now_iso()
    name = name or spec.name or f"autolabel {spec.collection} {created[:16].replace('T', ' ')}"
    document = {
        "kind": "autolabel",
        "spec": spec.to_json(),
        "variants": [],
        "variant_names": [METHOD],
        "estimate": {
            "requests": plan.total,
            "cots": plan.cots,
            "prompt_tokens": plan.estimated_prompt_tokens,
            "completion_tokens": plan.estimated_completion_tokens,
            "cost": plan.estimated_cost,
            "unpriced_models": plan.unpriced_models,
        },
    }
    with lib.transaction() as conn:
        run_id = insert_run(conn, name=name, created=created, collection=spec.collection, document=document)
        rows = []
        for r in plan.requests:
            call = rollout_request(model, r.prompt, spec.k, spec.seed)
            params = {
                **model.params(),
                "replicate": 0,
                "seed_used": spec.seed,
                "k": spec.k,
                "step": r.step,
                "step_id": r.step_id,
                "method": METHOD,
            }
            rows.append(
                (
                    run_id,
                    r.sample_pk,
                    model.label,
                    fingerprint(model, call, 0),
                    r.prompt,
                    json.dumps(params),
                    created,
                    r.cot_pk,
                )
            )
        conn.executemany(
            "INSERT INTO request (run_id, sample_pk, model_index, model_label, variant_index, replicate, step, "
            "fingerprint, prompt, params, created, target_cot_pk) VALUES (?, ?, 0, ?, 0, 0, 'rollout', ?, ?, ?, ?, ?)",
            rows,
        )
    log.info(
        "autolabel run %d created in %s: %d request(s) for %d CoT(s) of %r, completer %s, k=%d",
        run_id,
        lib.path,
        plan.total,
        plan.cots,
        spec.collection,
        model.label,
        spec.k,
    )
    return run_id


def labelled_by_run(lib: Library, run_id: int) -> tuple[int, int]:
    """(CoTs whose every step this run labelled, steps it labelled)."""
    rows = lib.conn.execute(
        "SELECT target_cot_pk, count(*), sum(status = 'done') FROM request WHERE run_id = ? AND step = 'rollout' "
        "GROUP BY target_cot_pk",
        (run_id,),
    ).fetchall()
    return sum(1 for _, total, done in rows if total == done), sum(done for _, _, done in rows)


def rollout_summary(lib: Library, run_id: int) -> str:
    """How an autolabel run's labels read, in one line: ``3 step(s) of 1 CoT(s) labelled: 1 +1,
    2 -1``. Empty when the run is not one, or has labelled nothing."""
    rows = lib.conn.execute(
        "SELECT DISTINCT q.sample_pk, q.target_cot_pk, q.model_label FROM request q "
        "WHERE q.run_id = ? AND q.step = 'rollout' AND q.status = 'done'",
        (run_id,),
    ).fetchall()
    if not rows:
        return ""
    spec = json.loads(lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()[0])["spec"]
    author = author_for(AutolabelSpec.from_json(spec).model)
    ratings: Counter[int | None] = Counter()
    for sample_pk, cot_pk, _ in rows:
        review = review_of(lib.conn, StepTarget(sample_pk, cot_pk), author)
        if review is not None and (review.extra or {}).get("run_id") == run_id:
            ratings.update(x.rating for x in review.labels)
    steps = sum(ratings.values())
    return f"{steps} step(s) of {len(rows)} CoT(s) labelled: {ratings[1]} +1, {ratings[-1]} -1"
