"""Planning a pairwise judge run: the stored CoTs of each sample paired (all pairs, or pairs
between chosen conditions), every pair in both orders, each prompt filled before anything is
sent, written as ``judge`` request rows of an ordinary run (docs/judges.md).

The engine executes, pauses, resumes and caches it like any run. A ``judge`` request names the
CoT shown first (as "A") in ``target_cot_pk`` and the second in ``params["second_cot_pk"]``; its
result is a :class:`~thoughtdesk.core.judges.JudgeVerdict` in ``result_verdict_pk``. The stored
prompt is the system text, a blank line and the user text (``params["system_chars"]``), as for
critiques.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from thoughtdesk.core.critiques.prompts import question_with_choices
from thoughtdesk.core.generation.backends import PriceTable, Request, estimate_tokens
from thoughtdesk.core.generation.runs.critique import CotRef, answer_key, critique_request, select_cots
from thoughtdesk.core.generation.runs.kind_specs import JudgeSpec
from thoughtdesk.core.generation.runs.plan import PromptPreview, fingerprint
from thoughtdesk.core.generation.runs.planning import insert_run, price_plan
from thoughtdesk.core.generation.runs.spec import ModelSpec, RunSpecError
from thoughtdesk.core.judges.conditions import condition_name, cot_conditions, matches
from thoughtdesk.core.judges.prompts import (
    BUILTIN_JUDGE_TEMPLATES,
    JudgeTemplate,
    PairInput,
    render,
    shown_answer,
)
from thoughtdesk.core.library.prompt_refs import prompt_ref
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PlannedJudgement:
    """One judge call: CoT ``first_pk`` shown as A, ``second_pk`` as B, to model ``model_index``."""

    index: int
    sample_pk: int
    label: str
    first_pk: int
    second_pk: int
    model_index: int
    prompt: str
    system_chars: int
    estimated_prompt_tokens: int
    estimated_completion_tokens: int


@dataclass
class JudgePlan:
    """A planned judge run; nothing has been sent. Costs are USD; None when a model has no price."""

    spec: JudgeSpec
    template: JudgeTemplate
    cots: list[CotRef]
    pairs: list[tuple[int, int]]  # (smaller CoT key, larger), each judged in both orders
    requests: list[PlannedJudgement]
    conditions: dict[int, str] = field(default_factory=dict)  # CoT key -> its condition
    single_cot_samples: int = 0  # samples of the selection with fewer than two CoTs to pair
    estimated_prompt_tokens: int = 0
    estimated_completion_tokens: int = 0
    estimated_cost: float | None = 0.0
    cost_by_model: dict[str, float | None] = field(default_factory=dict)
    unpriced_models: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.requests)

    @property
    def n_samples(self) -> int:
        return len({r.sample_pk for r in self.requests})

    def previews(self, limit: int = 1) -> list[PromptPreview]:
        """The exact prompts of the first ``limit`` pairs (both orders, first model)."""
        out: list[PromptPreview] = []
        pairs = {pair for pair in self.pairs[:limit]}
        for request in self.requests:
            if request.model_index == 0 and tuple(sorted((request.first_pk, request.second_pk))) in pairs:
                order = "A first" if request.first_pk < request.second_pk else "swapped"
                out.append(
                    PromptPreview(
                        request.label,
                        self.spec.models[0].label,
                        f"{self.template.key} ({order})",
                        "judge",
                        request.prompt,
                    )
                )
        return out

    def summary(self) -> str:
        """One line: requests, pairs, samples, models, tokens and cost."""
        cost = (
            "unknown (no price for " + ", ".join(self.unpriced_models) + ")"
            if self.estimated_cost is None
            else f"at most ${self.estimated_cost:.4f}"
        )
        alone = (
            f"; {self.single_cot_samples} sample(s) with fewer than two CoTs to pair left out"
            if self.single_cot_samples
            else ""
        )
        return (
            f"{self.total} judge request(s): {len(self.pairs)} pair(s) of CoTs of {self.n_samples} sample(s), "
            f"both orders, x {len(self.spec.models)} judge model(s); template {self.template.key} "
            f"(version {self.template.version}); about {self.estimated_prompt_tokens} prompt + at most "
            f"{self.estimated_completion_tokens} completion tokens; cost {cost}{alone}"
        )


def find_judge_template(key: str, templates: Mapping[str, JudgeTemplate] | None = None) -> JudgeTemplate:
    """The pairwise template called ``key`` (the built-in one is always there)."""
    known = {**BUILTIN_JUDGE_TEMPLATES, **(templates or {})}
    if key not in known:
        raise RunSpecError(f"no pairwise judge template {key!r} (known: {', '.join(sorted(known))})")
    return known[key]


def judge_input(first: CotRef, second: CotRef) -> PairInput:
    """What the template is filled with when ``first`` is shown as A and ``second`` as B."""
    sample = first.sample
    question = question_with_choices(sample.question, [str(c) for c in sample.choices])
    if sample.context:
        question = f"{sample.context}\n\n{question}"
    return PairInput(
        question,
        shown_answer(first.text, first.predicted_answer),
        shown_answer(second.text, second.predicted_answer),
        answer_key(sample),
    )


def judge_request(model: ModelSpec, prompt: str, system_chars: int) -> Request:
    """The backend request for a stored judge prompt: system and user chat messages."""
    return critique_request(model, prompt, system_chars)


def _pairs(
    spec: JudgeSpec, cots: list[CotRef], conditions: dict[int, tuple[str, str]]
) -> tuple[list[tuple[CotRef, CotRef]], int]:
    """The pairs to judge, in stored order (smaller key first), and how many samples had fewer
    than two CoTs to pair."""
    by_sample: dict[int, list[CotRef]] = defaultdict(list)
    for cot in cots:
        by_sample[cot.sample.pk].append(cot)
    if spec.conditions:
        unknown = [n for n in spec.conditions if not any(matches(n, parts) for parts in conditions.values())]
        if unknown:
            known = sorted({condition_name(*parts) for parts in conditions.values()})
            raise RunSpecError(
                f"condition(s) {', '.join(map(repr, unknown))} have no CoTs in the selection of collection "
                f"{spec.cots.collection!r}; its conditions: {'; '.join(known[:12])}"
                + (f" (and {len(known) - 12} more)" if len(known) > 12 else "")
            )
    pairs: list[tuple[CotRef, CotRef]] = []
    alone = 0
    which: dict[int, list[int]] = {}
    for group in by_sample.values():
        if spec.conditions:
            which = {
                cot.pk: [i for i, n in enumerate(spec.conditions) if matches(n, conditions[cot.pk])] for cot in group
            }
            group = [cot for cot in group if which[cot.pk]]
        found = 0
        for a, b in itertools.combinations(sorted(group, key=lambda c: c.pk), 2):
            if spec.conditions and set(which[a.pk]) == set(which[b.pk]):
                continue  # the same condition(s): not a comparison between conditions
            pairs.append((a, b))
            found += 1
        if not found:
            alone += 1
    return pairs, alone


def plan_judge_run(
    lib: Library,
    spec: JudgeSpec,
    *,
    templates: Mapping[str, JudgeTemplate] | None = None,
    prices: PriceTable | None = None,
) -> JudgePlan:
    """Expand ``spec`` into judge requests (every pair in both orders x every judge model) with
    exact prompts, counts, tokens and cost. Nothing is sent or written. Raises RunSpecError
    naming what is wrong (unknown collection, dataset, split, template or condition; no pairs)."""
    prices = prices or PriceTable()
    template = find_judge_template(spec.template, templates)
    cots = select_cots(lib, replace(spec.cots, limit=None, seed=None))
    parts = cot_conditions(lib, [c.pk for c in cots])
    chosen, alone = _pairs(spec, cots, parts)
    if spec.limit is not None:
        by_split: dict[tuple[str, str], list[tuple[CotRef, CotRef]]] = defaultdict(list)
        for pair in chosen:
            by_split[(pair[0].sample.dataset, pair[0].sample.split)].append(pair)
        kept: list[tuple[CotRef, CotRef]] = []
        for group in by_split.values():
            if len(group) > spec.limit:
                if spec.seed is not None:
                    keep = set(random.Random(spec.seed).sample(range(len(group)), spec.limit))
                    group = [pair for index, pair in enumerate(group) if index in keep]
                else:
                    group = group[: spec.limit]
            kept.extend(group)
        chosen = kept
    if not chosen:
        among = " of the chosen conditions" if spec.conditions else ""
        raise RunSpecError(
            f"no pairs to judge in collection {spec.cots.collection!r}: each of the {len({c.sample.pk for c in cots})} "
            f"selected sample(s) has fewer than two CoTs{among} (generate more CoTs per sample, or choose other "
            "conditions)"
        )
    requests: list[PlannedJudgement] = []
    tokens: Counter[tuple[int, str]] = Counter()
    for a, b in chosen:
        for first, second in ((a, b), (b, a)):
            system, user = render(template, judge_input(first, second))
            prompt, system_chars = (f"{system}\n\n{user}", len(system)) if system else (user, 0)
            estimate = estimate_tokens(prompt)
            for model_index, model in enumerate(spec.models):
                requests.append(
                    PlannedJudgement(
                        len(requests),
                        a.sample.pk,
                        f"{a.sample.label} CoTs {first.position + 1} vs {second.position + 1}",
                        first.pk,
                        second.pk,
                        model_index,
                        prompt,
                        system_chars,
                        estimate,
                        model.max_tokens,
                    )
                )
                tokens[(model_index, "in")] += estimate
                tokens[(model_index, "out")] += model.max_tokens
    plan = JudgePlan(
        spec=spec,
        template=template,
        cots=cots,
        pairs=[(a.pk, b.pk) for a, b in chosen],
        requests=requests,
        conditions={pk: condition_name(*p) for pk, p in parts.items()},
        single_cot_samples=alone,
    )
    cost = price_plan(spec.models, tokens, prices)  # the planning path every kind of run shares
    plan.estimated_prompt_tokens, plan.estimated_completion_tokens = cost.prompt_tokens, cost.completion_tokens
    plan.estimated_cost, plan.cost_by_model, plan.unpriced_models = cost.total, cost.by_model, cost.unpriced
    return plan


def create_judge_run(lib: Library, plan: JudgePlan, *, name: str | None = None) -> int:
    """Store the judge run (:func:`~.planning.insert_run`, the shared planning path) and its
    ``judge`` request rows in one transaction; return the run id. The run's document holds the spec and the template's texts, so a resume
    sends what was planned even after the template is edited."""
    spec = plan.spec
    created = now_iso()
    name = name or spec.name or f"judge {spec.cots.collection} {created[:16].replace('T', ' ')}"
    document = {
        "kind": "judge",
        "spec": spec.to_json(),
        "template": {
            "key": plan.template.key,
            "version": plan.template.version,
            "system": plan.template.system,
            "main": plan.template.main,
            "source": plan.template.source,
        },
        "variants": [],
        "variant_names": [plan.template.key],
        "estimate": {
            "requests": plan.total,
            "pairs": len(plan.pairs),
            "prompt_tokens": plan.estimated_prompt_tokens,
            "completion_tokens": plan.estimated_completion_tokens,
            "cost": plan.estimated_cost,
            "unpriced_models": plan.unpriced_models,
        },
    }
    texts = {cot.pk: cot.text for cot in plan.cots}
    with lib.transaction() as conn:
        run_id = insert_run(conn, name=name, created=created, collection=spec.cots.collection, document=document)
        rows = []
        for r in plan.requests:
            model = spec.models[r.model_index]
            call = judge_request(model, r.prompt, r.system_chars)
            params = {
                **model.params(),
                "replicate": 0,
                "seed_used": model.seed,
                "template": plan.template.key,
                "template_version": plan.template.version,
                "system_chars": r.system_chars,
                "second_cot_pk": r.second_pk,
            }
            rows.append(
                (
                    run_id,
                    r.sample_pk,
                    r.model_index,
                    model.label,
                    fingerprint(model, call, 0),
                    prompt_ref(r.prompt, texts.get(r.first_pk), r.first_pk),  # the first CoT it quotes stored once
                    json.dumps(params),
                    created,
                    r.first_pk,
                )
            )
        conn.executemany(
            "INSERT INTO request (run_id, sample_pk, model_index, model_label, variant_index, replicate, step, "
            "fingerprint, prompt, params, created, target_cot_pk) VALUES (?, ?, ?, ?, 0, 0, 'judge', ?, ?, ?, ?, ?)",
            rows,
        )
    log.info(
        "judge run %d created in %s: %d request(s) for %d pair(s) of %r, judges %s",
        run_id,
        lib.path,
        plan.total,
        len(plan.pairs),
        spec.cots.collection,
        ", ".join(model.label for model in spec.models),
    )
    return run_id


def verdict_summary(lib: Library, run_id: int) -> str:
    """How a judge run's verdicts read, in one line: ``40 verdict(s): 18 A, 16 B, 4 tie, 2
    unparseable``. Empty when the run has none."""
    counts = dict(
        lib.conn.execute(
            "SELECT v.verdict, count(*) FROM request q JOIN judge_verdict v ON v.id = q.result_verdict_pk "
            "WHERE q.run_id = ? GROUP BY v.verdict",
            (run_id,),
        ).fetchall()
    )
    total = sum(counts.values())
    if not total:
        return ""
    return f"{total} verdict(s): " + ", ".join(f"{counts.get(v, 0)} {v}" for v in ("A", "B", "tie", "unparseable"))
