"""Planning a revision run (issue 26, point 5; Digital Socrates' intended use): a model is given
a stored CoT and a critique's feedback on it and writes a revised CoT.

Each (CoT, critique) x revising model is one ``revision`` request of an ordinary run (planned
with counts and cost, executed, paused, resumed and cached by :mod:`.execute`): its
``target_cot_pk`` is the CoT revised, ``params["critique_pk"]`` the critique whose feedback it
was given. The result is a generated CoT like any other (scored from its own text, one-step)
whose ``revision_of`` and ``revision_critique`` name both, so revisions chain.

The prompt is filled at plan time; the exact text sent is the request's ``prompt`` (system text,
a blank line, user text; ``params["system_chars"]`` says where the system text ends), as for
critique runs. The answer key is never in the prompt: the feedback is all the model is given.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.critiques import Critique, critiques_for_cots
from thoughtdesk.core.critiques.prompts import fill_placeholders, question_with_choices
from thoughtdesk.core.generation.backends import PriceTable, estimate_tokens
from thoughtdesk.core.generation.runs.critique import CotRef, critique_request, select_cots, stored_prompt_text
from thoughtdesk.core.generation.runs.kind_specs import RevisionSpec
from thoughtdesk.core.generation.runs.plan import PromptPreview, fingerprint
from thoughtdesk.core.generation.runs.planning import PlanCost, TokenCounts, insert_run, price_plan
from thoughtdesk.core.generation.runs.spec import ModelSpec, RunSpecError
from thoughtdesk.core.library.prompt_refs import prompt_ref
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso

BUILTIN_REVISION_KEY = "td-revise-v1"

#: The placeholders a revision template may hold.
REVISION_PLACEHOLDERS = (
    "[[QUESTION]]",
    "[[EXPLANATION]]",
    "[[PREDICTEDANSWER]]",
    "[[FEEDBACK]]",
    "[[MAINFLAW]]",
    "[[GENERAL]]",
    "[[SPECIFIC]]",
)


@dataclass(frozen=True, slots=True)
class RevisionTemplate:
    """A revision prompt: ``system`` and ``main`` texts with :data:`REVISION_PLACEHOLDERS`."""

    key: str
    system: str
    main: str


_SYSTEM = (
    "You answer questions by reasoning step by step. A reviewer has read one of your earlier "
    "explanations and given feedback on it. Use the feedback where it is right to write a better explanation."
)
_MAIN = (
    "Question:\n[[QUESTION]]\n\n"
    "Your earlier explanation:\n[[EXPLANATION]]\n\n"
    "Your earlier answer: [[PREDICTEDANSWER]]\n\n"
    "The reviewer's feedback:\n[[FEEDBACK]]\n\n"
    "Write a revised explanation, step by step, taking the feedback into account. End with one line "
    '"So the answer is X." where X is your final answer (the letter of an option for a multiple-choice question).'
)
BUILTIN_REVISION_TEMPLATES: dict[str, RevisionTemplate] = {
    BUILTIN_REVISION_KEY: RevisionTemplate(BUILTIN_REVISION_KEY, _SYSTEM, _MAIN)
}


def critique_feedback(critique: Critique) -> str:
    """What the revising model is told of a critique: its main flaw and its general and specific
    feedback (never its score: the score would say whether the answer was right); the critique's
    raw text when none of these parsed."""
    parsed = critique.parsed
    lines = [
        f"{name}: {value.strip()}"
        for name, value in (
            ("Main flaw", parsed.main_flaw),
            ("General", parsed.general_feedback),
            ("Specific", parsed.specific_feedback),
        )
        if value and value.strip()
    ]
    return "\n".join(lines) if lines else critique.raw_text.strip()


def revision_values(cot: CotRef, critique: Critique) -> dict[str, str]:
    """What each placeholder stands for with ``cot`` and ``critique`` (a sample's context first)."""
    question = question_with_choices(cot.sample.question, [str(c) for c in cot.sample.choices])
    if cot.sample.context:
        question = f"{cot.sample.context}\n\n{question}"
    parsed = critique.parsed
    return {
        "[[QUESTION]]": question,
        "[[EXPLANATION]]": cot.text,
        "[[PREDICTEDANSWER]]": cot.predicted_answer,
        "[[FEEDBACK]]": critique_feedback(critique),
        "[[MAINFLAW]]": parsed.main_flaw or "",
        "[[GENERAL]]": parsed.general_feedback or "",
        "[[SPECIFIC]]": parsed.specific_feedback or "",
    }


def revision_prompt(template: RevisionTemplate, cot: CotRef, critique: Critique) -> tuple[str, int]:
    """The stored (and sent) prompt text and the length of its system part (see the module doc)."""
    values = revision_values(cot, critique)
    return stored_prompt_text(fill_placeholders(template.system, values), fill_placeholders(template.main, values))


def revision_fingerprint(model: ModelSpec, prompt: str, system_chars: int, cot_pk: int, critique_pk: int) -> str:
    """Identity of a revision request: the call, and which CoT and critique it revises (a stored
    revision answers only the same revision again, so its ``revision_of`` stays true)."""
    base = fingerprint(model, critique_request(model, prompt, system_chars), 0)
    return hashlib.sha256(f"revision|{base}|{cot_pk}|{critique_pk}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class PlannedRevision:
    """One revision call: CoT ``cot_pk`` revised from critique ``critique_pk`` by model ``model_index``."""

    index: int
    cot_pk: int
    critique_pk: int
    critique_model: str
    sample_pk: int
    label: str
    model_index: int
    prompt: str
    system_chars: int
    estimated_prompt_tokens: int
    estimated_completion_tokens: int


@dataclass
class RevisionPlan:
    """A planned revision run; nothing has been sent. Costs in USD (None: a model has no price)."""

    spec: RevisionSpec
    template: RevisionTemplate
    cots: list[CotRef]
    requests: list[PlannedRevision]
    cost: PlanCost
    without_critique: int = 0  # selected CoTs left out: no critique (of the chosen critique models)

    @property
    def total(self) -> int:
        return len(self.requests)

    @property
    def n_cots(self) -> int:
        return len({r.cot_pk for r in self.requests})

    @property
    def estimated_cost(self) -> float | None:
        return self.cost.total

    def previews(self, limit: int = 1) -> list[PromptPreview]:
        """The exact prompts of the first ``limit`` requests."""
        return [
            PromptPreview(
                r.label,
                self.spec.models[r.model_index].label,
                f"{self.template.key} ({r.critique_model})",
                "revision",
                r.prompt,
            )
            for r in self.requests[:limit]
        ]

    def summary(self) -> str:
        """One line: requests, CoTs, critiques, models, tokens and cost."""
        cost = (
            "unknown (no price for " + ", ".join(self.cost.unpriced) + ")"
            if self.cost.total is None
            else f"at most ${self.cost.total:.4f}"
        )
        left = (
            f" ({self.without_critique} selected CoT(s) without a critique left out)" if self.without_critique else ""
        )
        critics = ", ".join(sorted({r.critique_model for r in self.requests})) or "-"
        return (
            f"{self.total} revision request(s) for {self.n_cots} CoT(s){left} with critiques by {critics} x "
            f"{len(self.spec.models)} revising model(s); template {self.template.key}; about "
            f"{self.cost.prompt_tokens} prompt + at most {self.cost.completion_tokens} completion tokens; cost {cost}"
        )


def _chosen_critiques(critiques: list[Critique], wanted: tuple[str, ...]) -> list[Critique]:
    """The latest critique of each wanted critique model (in ``wanted`` order), or the latest one."""
    if not critiques:
        return []
    if not wanted:
        return [max(critiques, key=lambda c: (c.position, c.pk or 0))]
    out = []
    for name in wanted:
        mine = [c for c in critiques if c.critique_model == name]
        if mine:
            out.append(max(mine, key=lambda c: (c.position, c.pk or 0)))
    return out


def find_revision_template(key: str, templates: Mapping[str, RevisionTemplate] | None = None) -> RevisionTemplate:
    known = {**BUILTIN_REVISION_TEMPLATES, **(templates or {})}
    if key not in known:
        raise RunSpecError(f"no revision template {key!r} (known: {', '.join(sorted(known))})")
    return known[key]


def plan_revision_run(
    lib: Library,
    spec: RevisionSpec,
    *,
    templates: Mapping[str, RevisionTemplate] | None = None,
    prices: PriceTable | None = None,
) -> RevisionPlan:
    """Expand ``spec`` into revision requests with exact prompts, counts, tokens and cost.

    Nothing is sent or written. Raises RunSpecError naming what is wrong (unknown collection,
    dataset, split or template; no selected CoT has a critique of the chosen critique models)."""
    template = find_revision_template(spec.template, templates)
    cots = select_cots(lib, spec.cots)
    critiques = critiques_for_cots(lib, [c.pk for c in cots])
    requests: list[PlannedRevision] = []
    tokens: TokenCounts = Counter()
    without = 0
    for cot in cots:
        chosen = _chosen_critiques(critiques.get(cot.pk, []), spec.critique_models)
        if not chosen:
            without += 1
            continue
        for critique in chosen:
            prompt, system_chars = revision_prompt(template, cot, critique)
            estimate = estimate_tokens(prompt)
            for model_index, model in enumerate(spec.models):
                requests.append(
                    PlannedRevision(
                        len(requests),
                        cot.pk,
                        critique.pk or 0,
                        critique.critique_model,
                        cot.sample.pk,
                        cot.label,
                        model_index,
                        prompt,
                        system_chars,
                        estimate,
                        model.max_tokens,
                    )
                )
                tokens[(model_index, "in")] += estimate
                tokens[(model_index, "out")] += model.max_tokens
    if not requests:
        which = f" by {', '.join(spec.critique_models)}" if spec.critique_models else ""
        raise RunSpecError(
            f"none of the {len(cots)} selected CoT(s) of {spec.cots.collection!r} has a critique{which}: "
            "critique them first (`thoughtdesk critique`)"
        )
    return RevisionPlan(
        spec, template, cots, requests, price_plan(spec.models, tokens, prices or PriceTable()), without
    )


def create_revision_run(lib: Library, plan: RevisionPlan, *, name: str | None = None) -> int:
    """Store the revision run and one ``revision`` request row per planned call in one
    transaction; return the run id. Nothing is sent. The run's document holds the spec, the
    template's texts and the estimates."""
    spec = plan.spec
    created = now_iso()
    name = name or spec.name or f"revision {spec.cots.collection} {created[:16].replace('T', ' ')}"
    document: dict[str, Any] = {
        "kind": "revision",
        "spec": spec.to_json(),
        "template": {"key": plan.template.key, "system": plan.template.system, "main": plan.template.main},
        "variants": [],
        "variant_names": [plan.template.key],
        "estimate": {
            "requests": plan.total,
            "cots": plan.n_cots,
            "prompt_tokens": plan.cost.prompt_tokens,
            "completion_tokens": plan.cost.completion_tokens,
            "cost": plan.cost.total,
            "unpriced_models": plan.cost.unpriced,
        },
    }
    texts = {cot.pk: cot.text for cot in plan.cots}
    with lib.transaction() as conn:
        run_id = insert_run(conn, name=name, created=created, collection=spec.cots.collection, document=document)
        rows = []
        for r in plan.requests:
            model = spec.models[r.model_index]
            params = {
                **model.params(),
                "replicate": 0,
                "seed_used": model.seed,
                "template": plan.template.key,
                "system_chars": r.system_chars,
                "critique_pk": r.critique_pk,
                "critique_model": r.critique_model,
            }
            rows.append(
                (
                    run_id,
                    r.sample_pk,
                    r.model_index,
                    model.label,
                    revision_fingerprint(model, r.prompt, r.system_chars, r.cot_pk, r.critique_pk),
                    prompt_ref(r.prompt, texts.get(r.cot_pk), r.cot_pk),  # the CoT it quotes stored once
                    json.dumps(params),
                    created,
                    r.cot_pk,
                )
            )
        conn.executemany(
            "INSERT INTO request (run_id, sample_pk, model_index, model_label, variant_index, replicate, step, "
            "fingerprint, prompt, params, created, target_cot_pk) VALUES (?, ?, ?, ?, 0, 0, 'revision', ?, ?, ?, ?, ?)",
            rows,
        )
    logging.getLogger(__name__).info(
        "revision run %d created in %s: %d request(s) for CoTs of %r, models %s",
        run_id,
        lib.path,
        plan.total,
        spec.cots.collection,
        ", ".join(model.label for model in spec.models),
    )
    return run_id
