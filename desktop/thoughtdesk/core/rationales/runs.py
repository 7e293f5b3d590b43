"""Rationale mining as runs of the generation engine (issue 28, point 11): an extraction run has
one ``rationale_extraction`` request per document to rewrite, a filter run one
``rationale_filter`` request per rewrite whose rationales are still to score. Both are planned
on the path every kind of run shares (:func:`~thoughtdesk.core.generation.runs.planning.price_plan`,
:func:`~thoughtdesk.core.generation.runs.planning.insert_run`), listed by ``thoughtdesk runs`` and
the Runs tab, paused, resumed (``thoughtdesk resume RUN``) and retried by the engine, and stored
exactly once: the engine claims each request, and the write below stores its rewrite or scores
with the request row ``done`` in one transaction, after checking the claim.

The engine cannot import this module (it sits above it), so the two steps are registered with
the engine (:mod:`thoughtdesk.core.generation.runs.kinds`) when this module is imported; the
entry points that execute stored runs import it.

A request's parameters name what it works on: an extraction request its document (key, source,
sample, CoT, text: a document of a file has no sample, m020), a filter request its rewrite
(``target_doc_pk``) and the rationales planned (``rationale_ids``; those scored meanwhile, by
another run, are left out when it is sent).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from thoughtdesk.core.generation.backends import BackendError, ChatMessage, PriceTable, Request
from thoughtdesk.core.generation.backends.pricing import estimate_tokens
from thoughtdesk.core.generation.runs.commit_base import finish_request
from thoughtdesk.core.generation.runs.kind_specs import RationaleRunSpec
from thoughtdesk.core.generation.runs.kinds import StepContext, StepOutcome, register_step
from thoughtdesk.core.generation.runs.lease import Claim
from thoughtdesk.core.generation.runs.plan import PromptPreview, fingerprint
from thoughtdesk.core.generation.runs.planning import insert_run, price_plan
from thoughtdesk.core.generation.runs.read import RequestRow
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.rationales.extraction import Markers, RationaleRecord, read_rewrite, render_prompt
from thoughtdesk.core.rationales.filtering import score_document
from thoughtdesk.core.rationales.store import Document, add_rewrite, add_score, documents, done_keys, rationales
from thoughtdesk.core.settings.logs import redact

log = logging.getLogger(__name__)

EXTRACTION = "rationale_extraction"
FILTER = "rationale_filter"


def extraction_call(model: ModelSpec, prompt: str, *, max_tokens: int, temperature: float) -> Request:
    """The request that asks ``model`` for one rewrite: a chat turn or a raw prompt, as the
    model is sent prompts (``ModelSpec.chat``)."""
    if model.chat:
        return Request(
            model=model.model_name,
            messages=(ChatMessage("user", prompt),),
            temperature=temperature,
            max_tokens=max_tokens,
            timeout=model.timeout,
        )
    return Request(
        model=model.model_name, prompt=prompt, temperature=temperature, max_tokens=max_tokens, timeout=model.timeout
    )


def rewrite_max_tokens(text: str) -> int:
    """Room for the text twice over plus the rationales."""
    return 2 * estimate_tokens(text) + 256


def _markers(options: dict[str, Any]) -> Markers:
    begin, end = options.get("markers") or ("<BOT>", "<EOT>")
    return Markers(begin, end)


# --- planning -----------------------------------------------------------------------------


@dataclass
class RationalePlan:
    """A planned rationale run (nothing sent): its requests as row values, what was left out,
    estimated tokens and cost (USD; None when the model has no price)."""

    spec: RationaleRunSpec
    rows: list[dict[str, Any]] = field(default_factory=list)
    items: int = 0  # documents to rewrite, or rationales to score
    done_before: int = 0  # documents rewritten (rationales scored) before
    in_other_runs: int = 0  # left to the unfinished runs that are resumed first
    estimated_prompt_tokens: int = 0
    estimated_completion_tokens: int = 0
    estimated_cost: float | None = 0.0
    unpriced_models: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.rows)

    def previews(self, limit: int = 1) -> list[PromptPreview]:
        return [
            PromptPreview(str(r["label"]), self.spec.model.label, "", self.spec.kind, str(r["prompt"]))
            for r in self.rows[:limit]
        ]

    def summary(self) -> str:
        """One line: requests, what they do, tokens and cost."""
        cost = (
            "unknown (no price for " + ", ".join(self.unpriced_models) + ")"
            if self.estimated_cost is None
            else f"at most ${self.estimated_cost:.4f}"
        )
        what = (
            f"{self.items} document(s) of {self.spec.collection!r} rewritten by {self.spec.model.label}"
            if self.spec.kind == EXTRACTION
            else f"{self.items} rationale(s) of {self.spec.collection!r} scored by {self.spec.model.label}"
        )
        left = [f"{self.done_before} done before"] if self.done_before else []
        if self.in_other_runs:
            left.append(f"{self.in_other_runs} in unfinished runs resumed first")
        out = (
            f"{self.total} {self.spec.kind} request(s): {what}; about {self.estimated_prompt_tokens} prompt "
            f"+ at most {self.estimated_completion_tokens} completion tokens; cost {cost}"
        )
        return out + (f"; left out: {', '.join(left)}" if left else "")


def unfinished_runs(lib: Library, spec: RationaleRunSpec) -> list[int]:
    """Runs of the same kind, collection, model and options that are not done, oldest first:
    running the pass again resumes them rather than planning their requests twice."""
    found = []
    rows = lib.conn.execute(
        "SELECT id, spec FROM run WHERE status != 'done' AND collection = ? ORDER BY id", (spec.collection,)
    )
    for run_id, text in rows:
        document = json.loads(text)
        if document.get("kind") != spec.kind:
            continue
        other = RationaleRunSpec.from_json(document["spec"])
        if other.model.label == spec.model.label and other.options == spec.options:
            found.append(int(run_id))
    return found


def _planned_elsewhere(lib: Library, run_ids: list[int], key: str) -> set[Any]:
    """What the requests of ``run_ids`` not done yet work on (``key`` of their parameters)."""
    found: set[Any] = set()
    for run_id in run_ids:
        for (params,) in lib.conn.execute(
            "SELECT params FROM request WHERE run_id = ? AND status != 'done'", (run_id,)
        ).fetchall():
            value = json.loads(params).get(key)
            found.update(value if isinstance(value, list) else [value])
    return found


def _price(plan: RationalePlan, prompt_tokens: int, completion_tokens: int, prices: PriceTable | None) -> None:
    tokens: Counter[tuple[int, str]] = Counter({(0, "in"): prompt_tokens, (0, "out"): completion_tokens})
    cost = price_plan(plan.spec.models, tokens, prices or PriceTable())  # the path every kind of run shares
    plan.estimated_prompt_tokens, plan.estimated_completion_tokens = cost.prompt_tokens, cost.completion_tokens
    plan.estimated_cost, plan.unpriced_models = cost.total, cost.unpriced


def plan_extraction_run(
    lib: Library, spec: RationaleRunSpec, *, resumed: list[int] | None = None, prices: PriceTable | None = None
) -> RationalePlan:
    """One request per document of the spec's source not yet rewritten by its model, nor left to
    one of the ``resumed`` runs. Nothing is sent or written."""
    options, model = spec.options, spec.model
    docs = documents(lib, spec.collection, str(options["source"]))
    done = done_keys(lib, lib.require_collection(spec.collection), model.label)
    elsewhere = _planned_elsewhere(lib, resumed or [], "doc_key")
    plan = RationalePlan(spec)
    prompt_tokens = completion_tokens = 0
    markers = _markers(options)
    for doc in docs:
        if doc.doc_key in done and not spec.force:
            plan.done_before += 1
            continue
        if doc.doc_key in elsewhere:
            plan.in_other_runs += 1
            continue
        prompt = render_prompt(str(options["template"]), doc.text, markers)
        max_tokens = rewrite_max_tokens(doc.text)
        call = extraction_call(model, prompt, max_tokens=max_tokens, temperature=float(options["temperature"]))
        plan.rows.append(
            {
                "label": doc.doc_key,
                "sample_pk": doc.sample_pk,
                "prompt": prompt,
                "fingerprint": fingerprint(model, call, 0),
                "params": {
                    **model.params(),
                    "temperature": call.temperature,
                    "max_tokens": max_tokens,
                    "doc_key": doc.doc_key,
                    "source": doc.source,
                    "cot_pk": doc.cot_pk,
                    "text": doc.text,
                },
                "target_doc_pk": None,
            }
        )
        plan.items += 1
        prompt_tokens += estimate_tokens(prompt)
        completion_tokens += max_tokens
    _price(plan, prompt_tokens, completion_tokens, prices)
    return plan


def plan_filter_run(
    lib: Library,
    spec: RationaleRunSpec,
    *,
    limit: int | None = None,
    resumed: list[int] | None = None,
    prices: PriceTable | None = None,
) -> RationalePlan:
    """One request per rewrite with rationales the scorer (its label and decay) has not scored,
    the first ``limit`` rationales at most; those left to a ``resumed`` run are left out."""
    options = spec.options
    label, decay = str(options["label"]), float(options["decay"])
    elsewhere = _planned_elsewhere(lib, resumed or [], "rationale_ids")
    plan = RationalePlan(spec)
    by_doc: dict[int, list[int]] = {}
    doc_keys: dict[int, str] = {}
    prompt_tokens = 0
    for record in rationales(lib, spec.collection, scorer=label, decay=decay):
        if record.score is not None and not spec.force:
            plan.done_before += 1
            continue
        if record.id in elsewhere:
            plan.in_other_runs += 1
            continue
        if limit is not None and plan.items >= limit:
            continue
        plan.items += 1
        by_doc.setdefault(record.doc_id, []).append(record.id)
        doc_keys[record.doc_id] = record.doc_key
        # with and without the rationale: the context and the scored text, twice
        prompt_tokens += 2 * estimate_tokens(record.preceding + record.following) + estimate_tokens(record.rationale)
    samples = dict(
        lib.conn.execute(
            f"SELECT id, sample_pk FROM rationale_doc WHERE id IN ({', '.join('?' * len(by_doc))})", tuple(by_doc)
        ).fetchall()
        if by_doc
        else []
    )
    for doc_id, ids in by_doc.items():
        doc_key = doc_keys[doc_id]
        plan.rows.append(
            {
                "label": doc_key,
                "sample_pk": samples.get(doc_id),
                "prompt": f"score {len(ids)} rationale(s) of {doc_key} with and without each",
                "fingerprint": None,
                "params": {**spec.model.params(), "doc_key": doc_key, "rationale_ids": ids},
                "target_doc_pk": doc_id,
            }
        )
    _price(plan, prompt_tokens, 0, prices)
    return plan


def create_rationale_run(lib: Library, plan: RationalePlan, *, name: str | None = None) -> int:
    """Store the run (:func:`~thoughtdesk.core.generation.runs.planning.insert_run`) and its
    request rows in one transaction; return the run id."""
    spec = plan.spec
    created = now_iso()
    verb = "extract" if spec.kind == EXTRACTION else "filter"
    name = name or spec.name or f"rationales {verb} {spec.collection} {created[:16].replace('T', ' ')}"
    document = {
        "kind": spec.kind,
        "spec": spec.to_json(),
        "variants": [],
        "variant_names": [spec.kind],
        "estimate": {
            "requests": plan.total,
            "items": plan.items,
            "prompt_tokens": plan.estimated_prompt_tokens,
            "completion_tokens": plan.estimated_completion_tokens,
            "cost": plan.estimated_cost,
            "unpriced_models": plan.unpriced_models,
        },
    }
    with lib.transaction() as conn:
        run_id = insert_run(conn, name=name, created=created, collection=spec.collection, document=document)
        conn.executemany(
            "INSERT INTO request (run_id, sample_pk, model_index, model_label, variant_index, replicate, step, "
            "fingerprint, prompt, params, created, target_doc_pk) VALUES (?, ?, 0, ?, 0, 0, ?, ?, ?, ?, ?, ?)",
            [
                (
                    run_id,
                    r["sample_pk"],
                    spec.model.label,
                    spec.kind,
                    r["fingerprint"],
                    r["prompt"],
                    json.dumps(r["params"], ensure_ascii=False),
                    created,
                    r["target_doc_pk"],
                )
                for r in plan.rows
            ],
        )
    log.info("%s run %d created in %s: %d request(s), %s", spec.kind, run_id, lib.path, plan.total, plan.summary())
    return run_id


# --- executing (the engine calls these for each claimed request) ----------------------------


def _fail_request(lib: Library, request_id: int, error: BackendError, message: str) -> None:
    """Mark a request failed with ``message`` (redacted) and the error's kind."""
    lib.conn.execute(
        "UPDATE request SET status = 'failed', error = ?, error_kind = ?, raw_response = ?, finished_at = ? "
        "WHERE id = ?",
        (redact(message), error.kind, error.raw_body, now_iso(), request_id),
    )


async def extract_one(context: StepContext, request: RequestRow) -> StepOutcome:
    """Ask for one document's rewrite; the write stores it (valid or not, with its records) and
    marks the request done, or, when this model rewrote the document meanwhile (another run),
    links that rewrite: a document is stored once per model."""
    spec = context.spec
    assert isinstance(spec, RationaleRunSpec)
    model, lib, options = context.model_of(request), context.lib, spec.options
    params = json.loads(request.params)
    prompt = request.prompt or ""
    call = extraction_call(
        model, prompt, max_tokens=int(params["max_tokens"]), temperature=float(params["temperature"])
    )
    sent_at = now_iso()
    response = await context.complete(request, call)
    record = context.record(request, call, response, sent_at)
    output = record.response.texts[0] if record.response.texts else ""
    document = Document(
        params["doc_key"], params["source"], params["text"], sample_pk=request.sample_pk, cot_pk=params.get("cot_pk")
    )
    markers = _markers(options)
    rewrite = read_rewrite(document.text, output, markers)
    collection_id = lib.require_collection(spec.collection)

    def write(claim: Claim) -> None:
        claim.check(lib.conn, request.id)
        row = lib.conn.execute(
            "SELECT id FROM rationale_doc WHERE collection_id = ? AND doc_key = ? AND model = ?",
            (collection_id, document.doc_key, model.label),
        ).fetchone()
        doc_id = (
            int(row[0])
            if row is not None
            else add_rewrite(
                lib,
                collection_id,
                document,
                model=model.label,
                markers=markers,
                fragment_key=options.get("fragment_key"),
                prompt_text=prompt,
                output=output,
                rewrite=rewrite,
                prompt_tokens=response.prompt_tokens,
                completion_tokens=response.completion_tokens,
            )
        )
        finish_request(lib.conn, request.id, record, raw=redact(record.response.raw_body))
        lib.conn.execute("UPDATE request SET result_doc_pk = ? WHERE id = ?", (doc_id, request.id))

    return StepOutcome(write, record.prompt_tokens, record.completion_tokens, record.cost or 0.0)


async def filter_one(context: StepContext, request: RequestRow) -> StepOutcome:
    """Score one rewrite's rationales (those not scored meanwhile) with and without each; the
    write stores every score had and marks the request done, or failed naming the rationales
    whose scoring failed (a resume scores only those)."""
    spec = context.spec
    assert isinstance(spec, RationaleRunSpec)
    lib, options = context.lib, spec.options
    label, decay = str(options["label"]), float(options["decay"])
    ids = [int(i) for i in json.loads(request.params)["rationale_ids"]]
    rows = lib.conn.execute(
        f"SELECT r.id, r.preceding, r.rationale, r.following FROM rationale r WHERE r.id IN ({', '.join('?' * len(ids))}) "
        "AND NOT EXISTS (SELECT 1 FROM rationale_score s WHERE s.rationale_id = r.id AND s.scorer = ? AND s.decay = ?) "
        "ORDER BY r.position",
        (*ids, label, decay),
    ).fetchall()
    results = (
        await score_document(
            context.backend_of(request),
            [RationaleRecord(p, r, f) for _, p, r, f in rows],
            markers=_markers(options),
            decay=decay,
            horizon=int(options["horizon"]),
            layout=str(options["layout"]),
        )
        if rows
        else []
    )
    failures = [(row[0], result) for row, result in zip(rows, results, strict=True) if isinstance(result, BackendError)]
    error, message = None, ""
    if failures:
        first_id, error = failures[0]
        doc_key = json.loads(request.params).get("doc_key")
        message = f"{len(failures)} of {len(rows)} rationale(s) of {doc_key} not scored (rationale {first_id}: {error})"

    def write(claim: Claim) -> None:
        claim.check(lib.conn, request.id)
        for row, result in zip(rows, results, strict=True):
            if not isinstance(result, BackendError):
                add_score(lib, row[0], scorer=label, decay=decay, result=result)
        if error is None:
            finish_request(lib.conn, request.id, None)
        else:
            _fail_request(lib, request.id, error, message)

    tokens = sum(r.tokens_without + r.tokens_with for r in results if not isinstance(r, BackendError))
    return StepOutcome(write, prompt_tokens=tokens, error=error)


register_step(EXTRACTION, extract_one)
register_step(FILTER, filter_one)
