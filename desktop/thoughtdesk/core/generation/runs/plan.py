"""Planning a run: expanding a :class:`RunSpec` into exact requests, counts, tokens and cost,
and writing them as rows (:func:`create_run`) before anything is sent."""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from thoughtdesk.core.generation.backends import ChatMessage, PriceTable, Request, estimate_tokens
from thoughtdesk.core.generation.backends.batches import BATCH_WINDOW_HOURS
from thoughtdesk.core.generation.backends.pricing import BATCH_DISCOUNT
from thoughtdesk.core.generation.guide_prompts import GUIDE_KEYS, GUIDE_TEXTS, fill
from thoughtdesk.core.generation.prompts import Exemplar, FragmentLibrary, PromptMode, PromptVariant
from thoughtdesk.core.generation.runs.planning import insert_run, price_plan
from thoughtdesk.core.generation.runs.read import RequestStep
from thoughtdesk.core.generation.runs.samples import SampleRef, exemplars_of, select_samples
from thoughtdesk.core.generation.runs.spec import (
    GuideSpec,
    ModelSpec,
    RunSpec,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.steps.judge import processbench_prompt

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from thoughtdesk.core.generation.runs.scorer_check import ScorerReport

EXTRACTION_PLACEHOLDER = "<the CoT the model generates>"


@dataclass(frozen=True, slots=True)
class PlannedRequest:
    """One model call of a plan. ``index`` is its place in the plan; ``depends_on`` the index of
    the CoT request an extraction waits for; ``prompt`` is None for an extraction (its prompt
    holds the CoT). Token estimates are upper bounds in tokens."""

    index: int
    sample_pk: int
    sample_label: str
    model_index: int
    variant_index: int
    replicate: int
    step: RequestStep
    prompt: str | None
    depends_on: int | None
    estimated_prompt_tokens: int
    estimated_completion_tokens: int


@dataclass(frozen=True, slots=True)
class PromptPreview:
    """The exact text of one planned prompt (an extraction shows a placeholder for the CoT)."""

    sample_label: str
    model: str
    variant: str
    step: str
    prompt: str


@dataclass
class RunPlan:
    """A planned run; nothing has been sent. Costs are USD; None when a model has no price."""

    spec: RunSpec
    variants: list[PromptVariant]
    samples: list[SampleRef]
    requests: list[PlannedRequest]
    exemplars: dict[str, list[Exemplar]] = field(default_factory=dict)  # by dataset
    estimated_prompt_tokens: int = 0
    estimated_completion_tokens: int = 0
    estimated_cost: float | None = 0.0
    cost_by_model: dict[str, float | None] = field(default_factory=dict)
    unpriced_models: list[str] = field(default_factory=list)
    guide_texts: dict[str, str] = field(default_factory=dict)  # a guided run's prompts by key
    # A guided run's scorer before use (can it score, its memory): set by whoever shows the plan
    # (scorer_check.guide_scorer_report; it reads the model file), None otherwise.
    scorer: ScorerReport | None = None

    @property
    def total(self) -> int:
        return len(self.requests)

    @property
    def n_samples(self) -> int:
        return len(self.samples)

    @property
    def n_cot_requests(self) -> int:
        return sum(1 for r in self.requests if r.step == "cot")

    @property
    def n_extraction_requests(self) -> int:
        return sum(1 for r in self.requests if r.step == "extraction")

    @property
    def n_guided_requests(self) -> int:
        return sum(1 for r in self.requests if r.step == "guided")

    def previews(self, limit: int = 3) -> list[PromptPreview]:
        """Exact prompts of the first ``limit`` (sample, variant) pairs, CoT then extraction."""
        out: list[PromptPreview] = []
        seen: set[tuple[int, int]] = set()
        samples = {s.pk: s for s in self.samples}
        for request in self.requests:
            if request.step == "guided" and (request.sample_pk, request.variant_index) not in seen:
                if len(seen) >= limit:
                    break
                seen.add((request.sample_pk, request.variant_index))
                model = self.spec.models[request.model_index].label
                out.extend(guided_previews(self, request, model))
                continue
            if request.step != "cot" or (request.sample_pk, request.variant_index) in seen:
                continue
            if len(seen) >= limit:
                break
            seen.add((request.sample_pk, request.variant_index))
            variant = self.variants[request.variant_index]
            model = self.spec.models[request.model_index].label
            name = variant_name(variant)
            out.append(PromptPreview(request.sample_label, model, name, "cot", request.prompt or ""))
            if self.spec.mode is PromptMode.TWO_STEP and variant.answer_extraction is not None:
                sample = samples[request.sample_pk]
                text = extraction_prompt(
                    variant, sample, " " + EXTRACTION_PLACEHOLDER, self.exemplars.get(sample.dataset, [])
                )
                out.append(PromptPreview(request.sample_label, model, name, "extraction", text or ""))
        return out

    def summary(self) -> str:
        """One line: requests, samples, variants, models, tokens and cost."""
        cost = (
            "unknown (no price for " + ", ".join(self.unpriced_models) + ")"
            if self.estimated_cost is None
            else f"at most ${self.estimated_cost:.4f}"
        )
        if self.spec.batch:
            # Batch APIs charge half and answer within their window; the deadline is the window
            # from now (each chunk's own deadline is stored when it is submitted).
            due = (datetime.now(UTC) + timedelta(hours=BATCH_WINDOW_HOURS)).strftime("%Y-%m-%d %H:%M UTC")
            batch_cost = cost if self.estimated_cost is None else f"at most ${self.estimated_cost * BATCH_DISCOUNT:.4f}"
            cost = f"{batch_cost} at the batch price (normal price {cost}); results due within {BATCH_WINDOW_HOURS} h, by {due}"
        if self.spec.guide is not None:
            guide = self.spec.guide
            return (
                f"{self.n_guided_requests} guided CoT(s) ({guide.label}: up to {guide.max_steps} steps of "
                f"{guide.n_candidates} candidate(s)) for {self.n_samples} sample(s) x {len(self.variants)} prompt "
                f"variant(s) x {len(self.spec.models)} model(s) x n={self.spec.n}; about "
                f"{self.estimated_prompt_tokens} prompt + at most {self.estimated_completion_tokens} "
                f"completion tokens; cost {cost}"
            )
        return (
            f"{self.total} request(s) ({self.n_cot_requests} CoT, {self.n_extraction_requests} "
            f"extraction) for {self.n_samples} sample(s) x {len(self.variants)} prompt "
            f"variant(s) x {len(self.spec.models)} model(s) x n={self.spec.n}; about "
            f"{self.estimated_prompt_tokens} prompt + at most {self.estimated_completion_tokens} "
            f"completion tokens; cost {cost}"
        )


def variant_name(variant: PromptVariant) -> str:
    """``instruction / trigger / extraction`` keys, ``-`` for none."""
    parts = (variant.instruction, variant.cot_trigger, variant.answer_extraction)
    return " / ".join(p.key if p is not None else "-" for p in parts)


def cot_prompt(variant: PromptVariant, sample: SampleRef, exemplars: list[Exemplar]) -> str:
    return variant.cot_prompt(sample.question, sample.choices, sample.context, exemplars)


def extraction_prompt(variant: PromptVariant, sample: SampleRef, cot: str, exemplars: list[Exemplar]) -> str | None:
    return variant.extraction_prompt(sample.question, cot, sample.choices, sample.context, exemplars)


def model_request(model: ModelSpec, prompt: str, step: str, replicate: int) -> Request:
    """The backend request for one call. Extractions are greedy (temperature 0) and short."""
    seed = None if model.seed is None else model.seed + replicate
    extraction = step == "extraction"
    common: dict[str, Any] = {
        "model": model.model_name,
        "temperature": 0.0 if extraction else model.temperature,
        "max_tokens": model.extraction_max_tokens if extraction else model.max_tokens,
        "seed": seed,
        "stop": model.stop,
        "timeout": model.timeout,
        # Extractions are short: a model asked to think there would be cut mid-thought.
        "reasoning_effort": None if extraction else model.reasoning_effort,
    }
    if model.chat:
        return Request(messages=(ChatMessage("user", prompt),), **common)
    return Request(prompt=prompt, **common)


def fingerprint(model: ModelSpec, request: Request, replicate: int) -> str:
    """Identity of a call for answering repeats from the store (replicates stay distinct)."""
    base = request.fingerprint(model.backend_id())
    return hashlib.sha256(f"{base}|replicate={replicate}".encode()).hexdigest()


# --- planning -------------------------------------------------------------------------------


def _variants(spec: RunSpec, fragments: FragmentLibrary) -> list[PromptVariant]:
    extractions = spec.answer_extractions if spec.mode is PromptMode.TWO_STEP else spec.answer_extractions[:1]
    return [
        PromptVariant.from_keys(fragments, instruction=ins, cot_trigger=trig, answer_extraction=ext, mode=spec.mode)
        for ins in spec.instructions
        for trig in spec.cot_triggers
        for ext in extractions
    ]


def plan_run(
    lib: Library, spec: RunSpec, *, fragments: FragmentLibrary | None = None, prices: PriceTable | None = None
) -> RunPlan:
    """Expand ``spec`` into requests with exact prompt texts, counts, token and cost estimates.

    Nothing is sent and nothing is written. ``fragments`` defaults to the shipped fragment
    library, ``prices`` to the default price table. Raises RunSpecError / FragmentError naming
    what is wrong (unknown collection, dataset, split or fragment key; too few exemplars).
    """
    fragments = fragments or FragmentLibrary.defaults()
    prices = prices or PriceTable()
    variants = _variants(spec, fragments)
    samples = select_samples(lib, spec.samples)
    exemplars: dict[str, list[Exemplar]] = {}
    if spec.few_shot is not None and spec.few_shot.k > 0:
        for dataset in dict.fromkeys(s.dataset for s in samples):
            exemplars[dataset] = exemplars_of(lib, spec.samples.collection, dataset, spec.few_shot)
    requests: list[PlannedRequest] = []
    tokens_by_model: Counter[tuple[int, str]] = Counter()
    two_step = spec.mode is PromptMode.TWO_STEP
    guide_texts = guide_fragment_texts(fragments) if spec.guide is not None else {}
    for sample in samples:
        if spec.guide is not None:
            _plan_guided(spec, spec.guide, guide_texts, sample, variants, exemplars, requests, tokens_by_model)
            continue
        shots = exemplars.get(sample.dataset, [])
        for variant_index, variant in enumerate(variants):
            prompt = cot_prompt(variant, sample, shots)
            prompt_tokens = estimate_tokens(prompt)
            extraction_tokens = (
                estimate_tokens(variant.answer_extraction.text) if two_step and variant.answer_extraction else None
            )
            for model_index, model in enumerate(spec.models):
                for replicate in range(spec.n):
                    cot_index = len(requests)
                    requests.append(
                        PlannedRequest(
                            cot_index,
                            sample.pk,
                            sample.label,
                            model_index,
                            variant_index,
                            replicate,
                            "cot",
                            prompt,
                            None,
                            prompt_tokens,
                            model.max_tokens,
                        )
                    )
                    tokens_by_model[(model_index, "in")] += prompt_tokens
                    tokens_by_model[(model_index, "out")] += model.max_tokens
                    if extraction_tokens is not None:
                        ext_in = prompt_tokens + model.max_tokens + extraction_tokens
                        requests.append(
                            PlannedRequest(
                                len(requests),
                                sample.pk,
                                sample.label,
                                model_index,
                                variant_index,
                                replicate,
                                "extraction",
                                None,
                                cot_index,
                                ext_in,
                                model.extraction_max_tokens,
                            )
                        )
                        tokens_by_model[(model_index, "in")] += ext_in
                        tokens_by_model[(model_index, "out")] += model.extraction_max_tokens
    plan = RunPlan(
        spec=spec, variants=variants, samples=samples, requests=requests, exemplars=exemplars, guide_texts=guide_texts
    )
    cost = price_plan(spec.all_models(), tokens_by_model, prices)
    plan.estimated_prompt_tokens, plan.estimated_completion_tokens = cost.prompt_tokens, cost.completion_tokens
    plan.cost_by_model, plan.unpriced_models, plan.estimated_cost = cost.by_model, cost.unpriced, cost.total
    return plan


def create_run(lib: Library, plan: RunPlan, *, name: str | None = None) -> int:
    """Store the run and one row per planned request in one transaction; return the run id.

    Nothing is sent. The stored spec holds the fragment keys *and* texts of every variant, the
    models and parameters (never keys), the exemplars, and the plan's estimates.
    """
    spec = plan.spec
    created = now_iso()
    name = name or spec.name or f"{spec.samples.collection} {created[:16].replace('T', ' ')}"
    document = {
        "spec": spec.to_json(),
        "variants": [v.provenance() for v in plan.variants],
        "variant_names": [variant_name(v) for v in plan.variants],
        "exemplars": {d: [vars_of(e) for e in ex] for d, ex in plan.exemplars.items()},
        **({"guide_texts": plan.guide_texts} if spec.guide is not None else {}),
        "estimate": {
            "requests": plan.total,
            "prompt_tokens": plan.estimated_prompt_tokens,
            "completion_tokens": plan.estimated_completion_tokens,
            "cost": plan.estimated_cost,
            "unpriced_models": plan.unpriced_models,
        },
    }
    with lib.transaction() as conn:
        run_id = insert_run(conn, name=name, created=created, collection=spec.samples.collection, document=document)
        first = (conn.execute("SELECT max(id) FROM request").fetchone()[0] or 0) + 1
        rows = []
        for r in plan.requests:
            model = spec.models[r.model_index]
            fp = None
            if r.step == "guided" and spec.guide is not None and r.prompt is not None:
                fp = guided_fingerprint(model, spec.guide, plan.guide_texts, r.prompt, r.replicate)
            elif r.prompt is not None:
                fp = fingerprint(model, model_request(model, r.prompt, r.step, r.replicate), r.replicate)
            params = {
                **model.params(),
                "replicate": r.replicate,
                "seed_used": None if model.seed is None else model.seed + r.replicate,
            }
            rows.append(
                (
                    first + r.index,
                    run_id,
                    r.sample_pk,
                    r.model_index,
                    model.label,
                    r.variant_index,
                    r.replicate,
                    r.step,
                    None if r.depends_on is None else first + r.depends_on,
                    fp,
                    r.prompt,
                    json.dumps(params),
                    created,
                )
            )
        conn.executemany(
            "INSERT INTO request (id, run_id, sample_pk, model_index, model_label, variant_index, "
            "replicate, step, depends_on, fingerprint, prompt, params, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    log.info(
        "run %d created in %s: %d request(s) for %d sample(s) of %r, models %s",
        run_id,
        lib.path,
        plan.total,
        plan.n_samples,
        spec.samples.collection,
        ", ".join(model.label for model in spec.models),
    )
    return run_id


def vars_of(exemplar: Exemplar) -> dict[str, Any]:
    return {
        "question": exemplar.question,
        "cot": exemplar.cot,
        "answer": exemplar.answer,
        "answer_choices": list(exemplar.answer_choices),
        "context": exemplar.context,
    }


# --- guided runs ----------------------------------------------------------------------------


def guide_fragment_texts(fragments: FragmentLibrary) -> dict[str, str]:
    """The ``guide`` prompts a guided run uses: the user's edits, else the built-in texts."""
    return {
        key: fragments.get("guide", key).text if ("guide", key) in fragments else GUIDE_TEXTS[key] for key in GUIDE_KEYS
    }


def guided_fingerprint(model: ModelSpec, guide: GuideSpec, texts: dict[str, str], prompt: str, replicate: int) -> str:
    """Identity of a guided CoT's request (agent, guide with its models and prompts, question,
    replicate). Guided CoTs are sampled and are never answered from the store."""
    call = model_request(model, prompt, "cot", replicate)
    document = json.dumps({"guide": guide.to_json(), "texts": texts}, sort_keys=True)
    return hashlib.sha256(f"guided|{fingerprint(model, call, replicate)}|{document}".encode()).hexdigest()


def _plan_guided(
    spec: RunSpec,
    guide: GuideSpec,
    texts: dict[str, str],
    sample: SampleRef,
    variants: list[PromptVariant],
    exemplars: dict[str, list[Exemplar]],
    requests: list[PlannedRequest],
    tokens_by_model: Counter[tuple[int, str]],
) -> None:
    """One 'guided' request per sample x variant x model x replicate, and its token bounds:
    the trajectory grows by at most one step of ``step_max_tokens`` per step."""
    shots = exemplars.get(sample.dataset, [])
    steps, width, n = guide.max_steps, guide.step_max_tokens, guide.n_candidates
    for variant_index, variant in enumerate(variants):
        prompt = cot_prompt(variant, sample, shots)
        base = estimate_tokens(prompt)
        trajectory_in = sum(base + step * width for step in range(steps))  # all steps' contexts
        for model_index, _model in enumerate(spec.models):
            for replicate in range(spec.n):
                requests.append(
                    PlannedRequest(
                        len(requests),
                        sample.pk,
                        sample.label,
                        model_index,
                        variant_index,
                        replicate,
                        "guided",
                        prompt,
                        None,
                        trajectory_in,
                        steps * n * width,
                    )
                )
                tokens_by_model[(model_index, "in")] += trajectory_in
                tokens_by_model[(model_index, "out")] += steps * n * width
                roles = guide.roles()
                if "rationale" in roles:
                    index = spec.role_index("rationale")
                    tokens_by_model[(index, "in")] += trajectory_in + steps * estimate_tokens(texts["rationale"])
                    tokens_by_model[(index, "out")] += steps * guide.rationale_max_tokens
                if "scorer" in roles:
                    index = spec.role_index("scorer")
                    tokens_by_model[(index, "in")] += trajectory_in + steps * (
                        estimate_tokens(texts["scorer"]) + guide.rationale_max_tokens + n * width
                    )
                if "rater" in roles:
                    index = spec.role_index("rater")
                    tokens_by_model[(index, "in")] += n * (
                        trajectory_in + steps * (width + estimate_tokens(texts["rater"]))
                    )
                    tokens_by_model[(index, "out")] += n * steps * 4


def guided_previews(plan: RunPlan, request: PlannedRequest, model: str) -> list[PromptPreview]:
    """The first step's exact prompts of a guided CoT (rationale, agent, scorer or rater)."""
    guide = plan.spec.guide
    prompt = request.prompt or ""
    if guide is None:
        return []
    name = variant_name(plan.variants[request.variant_index])
    texts = plan.guide_texts
    out: list[PromptPreview] = []
    rationale = "<the rationale the rationale model writes>"
    if guide.method == "rationalyst":
        out.append(
            PromptPreview(
                request.sample_label, model, name, "rationale", fill(texts["rationale"], {"TRAJECTORY": prompt})
            )
        )
    agent_context = prompt
    if guide.method == "rationalyst" and guide.supervision == "explicit":
        agent_context = fill(texts["explicit"], {"TRAJECTORY": prompt, "RATIONALE": rationale})
    if plan.spec.models[request.model_index].chat:
        agent_context = fill(texts["step_chat"], {"TRAJECTORY": agent_context})
    out.append(PromptPreview(request.sample_label, model, name, "guided step", agent_context))
    if guide.scorer is not None:
        out.append(
            PromptPreview(
                request.sample_label,
                model,
                name,
                "scorer prefix",
                fill(texts["scorer"], {"TRAJECTORY": prompt, "RATIONALE": rationale}),
            )
        )
    if guide.method == "process":
        rater = (
            processbench_prompt(prompt, ["<a candidate step>"])
            if guide.rater_style == "processbench"
            else fill(texts["rater"], {"TRAJECTORY": prompt, "CANDIDATE": "<a candidate step>"})
        )
        out.append(PromptPreview(request.sample_label, model, name, "rater", rater))
    return out
