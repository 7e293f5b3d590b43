"""Planning a critique run: stored CoTs x critique models, each prompt filled from the sample and
the CoT before anything is sent, written as ``critique`` request rows of an ordinary run.

A critique run is executed, paused, resumed and cached by the same engine as a generation run
(:mod:`thoughtdesk.core.generation.runs.execute`); what differs is what a request judges (its
``target_cot_pk``) and what it stores (a :class:`~thoughtdesk.core.critiques.Critique`, parsed
with per-element outcomes, in ``result_critique_pk``).

The exact text sent is the request's ``prompt``. For the chat wrapper it is the system text, a
blank line and the user text; ``params["system_chars"]`` says where the system text ends, so the
two messages are rebuilt exactly from what is stored.
"""

from __future__ import annotations

import json
import logging
import random
import re
import string
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from thoughtdesk.core.critiques.prompts import (
    BUILTIN_TEMPLATES,
    CritiqueInput,
    CritiqueTemplate,
    RenderedCritiquePrompt,
    question_with_choices,
    render,
)
from thoughtdesk.core.critiques.records import ELEMENTS, outcomes_from_json
from thoughtdesk.core.generation.backends import ChatMessage, PriceTable, Request, estimate_tokens
from thoughtdesk.core.generation.runs.kind_specs import CotSelection, CritiqueSpec, Judged
from thoughtdesk.core.generation.runs.plan import PromptPreview, fingerprint
from thoughtdesk.core.generation.runs.planning import insert_run, price_plan
from thoughtdesk.core.generation.runs.samples import SampleRef, sample_refs
from thoughtdesk.core.generation.runs.spec import ModelSpec, RunSpecError
from thoughtdesk.core.library.prompt_refs import prompt_ref
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.steps.split import cot_steps

_LETTER = re.compile(r"^\(?([A-Z])\)?(?:[).:\s]|$)")


@dataclass(frozen=True, slots=True)
class CotRef:
    """A stored CoT as a critique prompt needs it: its text, the answer it reached, its sample."""

    pk: int
    sample: SampleRef
    position: int
    text: str
    student_model: str
    predicted_answer: str
    correct: bool | None
    #: The CoT's ``extra`` as stored (its own step list, if any: core/steps/split.py).
    extra: str | None = None

    @property
    def label(self) -> str:
        return f"{self.sample.label} CoT {self.position + 1}"


@dataclass(frozen=True, slots=True)
class PlannedCritique:
    """One critique call of a plan: CoT ``cot_pk`` judged by model ``model_index``; ``prompt`` is
    the exact text (see the module doc), ``system_chars`` the length of its system part (-1:
    one raw string, the ds or llama2 wrapper)."""

    index: int
    cot_pk: int
    sample_pk: int
    label: str
    model_index: int
    prompt: str
    system_chars: int
    estimated_prompt_tokens: int
    estimated_completion_tokens: int


@dataclass
class CritiquePlan:
    """A planned critique run; nothing has been sent. Costs are USD; None when a model has no price."""

    spec: CritiqueSpec
    template: CritiqueTemplate
    cots: list[CotRef]
    requests: list[PlannedCritique]
    estimated_prompt_tokens: int = 0
    estimated_completion_tokens: int = 0
    estimated_cost: float | None = 0.0
    cost_by_model: dict[str, float | None] = field(default_factory=dict)
    unpriced_models: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.requests)

    @property
    def n_cots(self) -> int:
        return len(self.cots)

    @property
    def n_samples(self) -> int:
        return len({c.sample.pk for c in self.cots})

    def counts_by_correctness(self) -> dict[str, int]:
        """CoTs judged by whether their answer was scored correct: correct, incorrect, unscored."""
        out = Counter("unscored" if c.correct is None else ("correct" if c.correct else "incorrect") for c in self.cots)
        return {k: out[k] for k in ("correct", "incorrect", "unscored")}

    def previews(self, limit: int = 1) -> list[PromptPreview]:
        """The exact prompts of the first ``limit`` CoTs, one per distinct wrapper."""
        out: list[PromptPreview] = []
        cots = {c.pk: c for c in self.cots}
        seen_cots: list[int] = []
        seen: set[tuple[int, str]] = set()
        for request in self.requests:
            if request.cot_pk not in seen_cots:
                if len(seen_cots) >= limit:
                    break
                seen_cots.append(request.cot_pk)
            wrapper = self.spec.wrappers[request.model_index]
            if (request.cot_pk, wrapper) in seen:
                continue
            seen.add((request.cot_pk, wrapper))
            model = self.spec.models[request.model_index].label
            out.append(
                PromptPreview(
                    cots[request.cot_pk].label, model, f"{self.template.key} ({wrapper})", "critique", request.prompt
                )
            )
        return out

    def summary(self) -> str:
        """One line: requests, CoTs, models, tokens and cost."""
        cost = (
            "unknown (no price for " + ", ".join(self.unpriced_models) + ")"
            if self.estimated_cost is None
            else f"at most ${self.estimated_cost:.4f}"
        )
        counts = self.counts_by_correctness()
        return (
            f"{self.total} critique request(s) for {self.n_cots} CoT(s) of {self.n_samples} sample(s) "
            f"({counts['correct']} correct, {counts['incorrect']} incorrect, {counts['unscored']} unscored) x "
            f"{len(self.spec.models)} critique model(s); template {self.template.key}"
            f"{'; judging the thinking' if self.spec.judge == 'thinking' else ''}; about "
            f"{self.estimated_prompt_tokens} prompt + at most {self.estimated_completion_tokens} "
            f"completion tokens; cost {cost}"
        )


# --- the values a prompt is filled with -----------------------------------------------------


def _letter(index: int) -> str:
    return string.ascii_uppercase[index] if index < 26 else str(index + 1)


def predicted_answer(value: str | None, raw: str | None, choices: list[Any]) -> str:
    """The answer a CoT reached, as DSCB writes it: a bare letter for choices when one is known
    (``"C) inspiration"`` and ``"inspiration"`` give ``C``), else the scored value, else the raw
    extraction text; empty when the CoT has no answer."""
    text = (value if value not in (None, "") else (raw or "")).strip()
    if choices and text:
        match = _LETTER.match(text)
        if match and ord(match.group(1)) - 65 < len(choices):
            return match.group(1)
        lowered = [str(c).strip().lower() for c in choices]
        if text.lower() in lowered:
            return _letter(lowered.index(text.lower()))
    return text


def answer_key(sample: SampleRef) -> str:
    """The correct answer: the letter(s) of the gold option(s) for choices, else the gold answers."""
    gold = [str(a) for a in sample.answer]
    if sample.choices:
        options = [str(c).strip().lower() for c in sample.choices]
        letters = []
        for answer in gold:
            if answer.strip().lower() in options:
                letters.append(_letter(options.index(answer.strip().lower())))
            elif len(answer.strip()) == 1 and answer.strip().upper() in string.ascii_uppercase[: len(options)]:
                letters.append(answer.strip().upper())
            else:
                letters.append(answer)
        return ", ".join(letters)
    return ", ".join(gold)


def critique_input(cot: CotRef) -> CritiqueInput:
    """What the template's placeholders stand for with ``cot``. A sample's context (e.g. a
    PubMedQA abstract) comes before its question: the question cannot be judged without it."""
    question = question_with_choices(cot.sample.question, [str(c) for c in cot.sample.choices])
    if cot.sample.context:
        question = f"{cot.sample.context}\n\n{question}"
    return CritiqueInput(question, cot.text, cot.predicted_answer, answer_key(cot.sample), lambda: cot_step_texts(cot))


def cot_step_texts(cot: CotRef) -> list[str]:
    """The steps of ``cot`` (its own list, else its text split: core/steps/split.py)."""
    try:
        extra = json.loads(cot.extra) if cot.extra else None
    except ValueError:
        extra = None
    steps = cot_steps(cot.text, extra if isinstance(extra, dict) else None)
    if any(step.start is None for step in steps):  # its own list is not of this text (its thinking is judged)
        steps = cot_steps(cot.text, None)
    return [step.text for step in steps]


def stored_prompt(rendered: RenderedCritiquePrompt) -> tuple[str, int]:
    """The text stored (and sent) for a rendered prompt and the length of its system part (-1 for
    the one-string wrappers)."""
    if rendered.wrapper != "chat":
        return rendered.text, -1
    return stored_prompt_text(rendered.system, rendered.user)


def stored_prompt_text(system: str, user: str) -> tuple[str, int]:
    """The stored text of a chat prompt (system text, a blank line, user text) and the length of
    its system part (0: no system text); :func:`critique_request` rebuilds the two messages."""
    if not system:
        return user, 0
    return f"{system}\n\n{user}", len(system)


def critique_request(model: ModelSpec, prompt: str, system_chars: int) -> Request:
    """The backend request for a stored critique prompt (see :func:`stored_prompt`)."""
    common: dict[str, Any] = {
        "model": model.model_name,
        "temperature": model.temperature,
        "max_tokens": model.max_tokens,
        "seed": model.seed,
        "stop": model.stop,
        "timeout": model.timeout,
    }
    if system_chars < 0:
        return Request(prompt=prompt, **common)
    if system_chars == 0:
        return Request(messages=(ChatMessage("user", prompt),), **common)
    system, user = prompt[:system_chars], prompt[system_chars + 2 :]
    return Request(messages=(ChatMessage("system", system), ChatMessage("user", user)), **common)


# --- selecting CoTs -------------------------------------------------------------------------

_COT_SQL = """
SELECT c.id, c.sample_pk, c.position, coalesce({text}, ''), coalesce(c.model_name, c.model, ''),
       a.td_value, a.answer, a.correct_answer, c.extra
FROM generated_cot c JOIN sample s ON s.id = c.sample_pk
LEFT JOIN answer a ON a.id = (SELECT id FROM answer WHERE cot_pk = c.id ORDER BY position LIMIT 1)
"""
#: What a critique reads of a CoT, by what it judges; judging the thinking keeps CoTs that have one.
_JUDGED_TEXT = {"explanation": ("c.cot", ""), "thinking": ("c.reasoning", " AND coalesce(c.reasoning, '') != ''")}


def _rows_to_refs(lib: Library, rows: list[tuple[Any, ...]]) -> list[CotRef]:
    samples = {s.pk: s for s in sample_refs(lib, list(dict.fromkeys(r[1] for r in rows)))}
    out = []
    for pk, sample_pk, position, text, student, value, raw, correct, extra in rows:
        sample = samples[sample_pk]
        out.append(
            CotRef(
                pk,
                sample,
                position,
                text,
                student,
                predicted_answer(value, raw, sample.choices),
                None if correct is None else bool(correct),
                extra,
            )
        )
    return out


def _keep(correct: int | None, only: str) -> bool:
    if only == "correct":
        return correct == 1
    if only == "incorrect":
        return correct == 0
    return True


def select_cots(lib: Library, selection: CotSelection, judge: Judged = "explanation") -> list[CotRef]:
    """The CoTs a selection names, in stored order (explicit keys: in the given order), each with
    the text a critique judges: its visible explanation, or (``judge="thinking"``) its thinking,
    CoTs without thinking left out."""
    cid = lib.require_collection(selection.collection)
    column, having = _JUDGED_TEXT[judge]
    cot_sql = _COT_SQL.format(text=column)
    without = " with thinking" if judge == "thinking" else ""
    if selection.cot_pks:
        given = list(dict.fromkeys(selection.cot_pks))
        found: dict[int, tuple[Any, ...]] = {}
        for start in range(0, len(given), 500):
            chunk = given[start : start + 500]
            for row in lib.conn.execute(
                f"{cot_sql} WHERE s.collection_id = ? AND c.id IN ({','.join('?' * len(chunk))}){having}",
                (cid, *chunk),
            ):
                found[row[0]] = row
        missing = [pk for pk in given if pk not in found]
        if missing:
            have = " or have no thinking" if judge == "thinking" else ""
            raise RunSpecError(f"CoT key(s) {missing[:5]} are not in collection {selection.collection!r}{have}")
        kept = [found[pk] for pk in given if _keep(found[pk][7], selection.only)]
        if not kept:
            raise RunSpecError(f"none of the {len(given)} chosen CoT(s) is {selection.only}")
        return _rows_to_refs(lib, kept)
    splits = lib.splits(cid)
    for name, known in (("dataset", {d for d, _ in splits}), ("split", {s for _, s in splits})):
        wanted = selection.datasets if name == "dataset" else selection.splits
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise RunSpecError(
                f"collection {selection.collection!r} has no {name} "
                f"{', '.join(map(repr, unknown))} (it has: {', '.join(sorted(known))})"
            )
    chosen: list[tuple[Any, ...]] = []
    for dataset, split in splits:
        if (selection.datasets and dataset not in selection.datasets) or (
            selection.splits and split not in selection.splits
        ):
            continue
        rows = [
            row
            for row in lib.conn.execute(
                f"{cot_sql} WHERE s.collection_id = ? AND s.dataset = ? AND s.split = ?{having} "
                "ORDER BY s.position, c.position",
                (cid, dataset, split),
            )
            if _keep(row[7], selection.only)
        ]
        if selection.limit is not None and len(rows) > selection.limit:
            if selection.seed is not None:
                keep = set(random.Random(selection.seed).sample(range(len(rows)), selection.limit))
                rows = [row for index, row in enumerate(rows) if index in keep]
            else:
                rows = rows[: selection.limit]
        chosen.extend(rows)
    if not chosen:
        which = "" if selection.only == "all" else f" {selection.only}"
        raise RunSpecError(f"no{which} CoTs{without} of collection {selection.collection!r} match the selection")
    return _rows_to_refs(lib, chosen)


# --- planning -------------------------------------------------------------------------------


def find_template(key: str, templates: Mapping[str, CritiqueTemplate] | None = None) -> CritiqueTemplate:
    """The critique template called ``key`` (the built-in ones are always there)."""
    known = {**BUILTIN_TEMPLATES, **(templates or {})}
    if key not in known:
        raise RunSpecError(f"no critique template {key!r} (known: {', '.join(sorted(known))})")
    return known[key]


def plan_critique_run(
    lib: Library,
    spec: CritiqueSpec,
    *,
    templates: Mapping[str, CritiqueTemplate] | None = None,
    prices: PriceTable | None = None,
) -> CritiquePlan:
    """Expand ``spec`` into critique requests with exact prompts, counts, tokens and cost.

    Nothing is sent and nothing is written. ``templates`` adds the user's critique templates to
    the built-in ones. Raises RunSpecError naming what is wrong (unknown collection, dataset,
    split or template; no CoTs selected).
    """
    prices = prices or PriceTable()
    template = find_template(spec.template, templates)
    cots = select_cots(lib, spec.cots, spec.judge)
    requests: list[PlannedCritique] = []
    tokens: Counter[tuple[int, str]] = Counter()
    for cot in cots:
        values = critique_input(cot)
        rendered = {w: stored_prompt(render(template, values, w)) for w in dict.fromkeys(spec.wrappers)}
        for model_index, model in enumerate(spec.models):
            prompt, system_chars = rendered[spec.wrappers[model_index]]
            estimate = estimate_tokens(prompt)
            requests.append(
                PlannedCritique(
                    len(requests),
                    cot.pk,
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
    plan = CritiquePlan(spec=spec, template=template, cots=cots, requests=requests)
    cost = price_plan(spec.models, tokens, prices)
    plan.estimated_prompt_tokens, plan.estimated_completion_tokens = cost.prompt_tokens, cost.completion_tokens
    plan.cost_by_model, plan.unpriced_models, plan.estimated_cost = cost.by_model, cost.unpriced, cost.total
    return plan


def create_critique_run(lib: Library, plan: CritiquePlan, *, name: str | None = None) -> int:
    """Store the critique run and one ``critique`` request row per planned call in one
    transaction; return the run id. Nothing is sent. The run's document holds the spec, the
    template's texts (so a resume sends what was planned even if the template is edited later)
    and the estimates."""
    spec = plan.spec
    created = now_iso()
    name = name or spec.name or f"critique {spec.cots.collection} {created[:16].replace('T', ' ')}"
    document = {
        "kind": "critique",
        "spec": spec.to_json(),
        "template": {
            "key": plan.template.key,
            "system": plan.template.system,
            "main": plan.template.main,
            "source": plan.template.source,
        },
        "variants": [],
        "variant_names": [plan.template.key],
        "estimate": {
            "requests": plan.total,
            "cots": plan.n_cots,
            "prompt_tokens": plan.estimated_prompt_tokens,
            "completion_tokens": plan.estimated_completion_tokens,
            "cost": plan.estimated_cost,
            "unpriced_models": plan.unpriced_models,
        },
    }
    with lib.transaction() as conn:
        run_id = insert_run(conn, name=name, created=created, collection=spec.cots.collection, document=document)
        rows = []
        # A prompt quoting a CoT's visible text is stored with a reference to it; one quoting the
        # thinking is stored as it is (the reference is rebuilt from generated_cot.cot).
        texts = {cot.pk: cot.text for cot in plan.cots} if spec.judge == "explanation" else {}
        for r in plan.requests:
            model = spec.models[r.model_index]
            call = critique_request(model, r.prompt, r.system_chars)
            params = {
                **model.params(),
                "replicate": 0,
                "seed_used": model.seed,
                "wrapper": spec.wrappers[r.model_index],
                "template": plan.template.key,
                "system_chars": r.system_chars,
                "judged": spec.judge,
            }
            rows.append(
                (
                    run_id,
                    r.sample_pk,
                    r.model_index,
                    model.label,
                    fingerprint(model, call, 0),
                    prompt_ref(r.prompt, texts.get(r.cot_pk), r.cot_pk),  # the CoT it quotes stored once
                    json.dumps(params),
                    created,
                    r.cot_pk,
                )
            )
        conn.executemany(
            "INSERT INTO request (run_id, sample_pk, model_index, model_label, variant_index, replicate, step, "
            "fingerprint, prompt, params, created, target_cot_pk) VALUES (?, ?, ?, ?, 0, 0, 'critique', ?, ?, ?, ?, ?)",
            rows,
        )
    logging.getLogger(__name__).info(
        "critique run %d created in %s: %d request(s) for CoTs of %r, models %s",
        run_id,
        lib.path,
        plan.total,
        spec.cots.collection,
        ", ".join(model.label for model in spec.models),
    )
    return run_id


def parse_summary(lib: Library, run_id: int) -> str:
    """How the critiques of a run parsed, in one line: ``12 critique(s): 10 fully parsed; not
    parsed: explanation_score 2 (2 unparseable)``. Empty when the run has none."""
    rows = lib.conn.execute(
        "SELECT c.outcomes FROM request q JOIN critique c ON c.id = q.result_critique_pk WHERE q.run_id = ?",
        (run_id,),
    ).fetchall()
    if not rows:
        return ""
    full = 0
    missing: Counter[str] = Counter()
    unparseable: Counter[str] = Counter()
    for (outcomes,) in rows:
        statuses = {k: v.status for k, v in outcomes_from_json(json.loads(outcomes)).items()}
        if all(statuses.get(e) == "parsed" for e in ELEMENTS):
            full += 1
        for element in ELEMENTS:
            status = statuses.get(element, "missing")
            if status == "missing":
                missing[element] += 1
            elif status == "unparseable":
                unparseable[element] += 1
    text = f"{len(rows)} critique(s): {full} fully parsed"
    problems = []
    for element in ELEMENTS:
        if missing[element] or unparseable[element]:
            parts = [
                f"{n} {what}" for what, n in (("missing", missing[element]), ("unparseable", unparseable[element])) if n
            ]
            problems.append(f"{element} {', '.join(parts)}")
    return text + (f"; not parsed: {'; '.join(problems)}" if problems else "")
