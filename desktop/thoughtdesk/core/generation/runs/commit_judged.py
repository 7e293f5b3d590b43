"""Committing what the requests over stored CoTs returned: a critique (with its first error as a
step label), a pairwise judge's verdict, an automatic step label run's rollout label, and the
same answered from the store; each with its request row in one transaction, after the claim is
checked (:mod:`.commit_base`). :func:`.commit.store_result` dispatches to these by step.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from typing import Any

from thoughtdesk.core.critiques import Critique, add_critique, critique_by_pk
from thoughtdesk.core.critiques.parse import parse_critique
from thoughtdesk.core.evaluation.answers import CORRECT
from thoughtdesk.core.generation.rollout_labels import METHOD, author_for, rollout_label
from thoughtdesk.core.generation.runs.commit_base import (
    CallRecord,
    check_claim,
    finish_request,
    provenance,
    score_text,
    stored_raw,
)
from thoughtdesk.core.generation.runs.lease import PENDING, Claim
from thoughtdesk.core.generation.runs.read import RequestRow
from thoughtdesk.core.generation.runs.samples import SampleRef
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.judges.parse import parse_verdict
from thoughtdesk.core.judges.store import JudgeVerdict, add_verdict, verdict_by_pk
from thoughtdesk.core.library.prompt_refs import stored_prompt_ref
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.settings.logs import redact
from thoughtdesk.core.steps.judge import PROCESSBENCH_KEY, judged_review, parse_first_error
from thoughtdesk.core.steps.split import cot_steps
from thoughtdesk.core.steps.store import StepReview, StepTarget, put_review, review_of


def _critique_options(model: ModelSpec, request: RequestRow) -> dict[str, Any]:
    """The critique model's options stored with its critique (DSCB's ``critique_llm_options``)."""
    params = json.loads(request.params)
    return {
        "provider": model.provider,
        "base_url": model.base_url,
        "temperature": params.get("temperature"),
        "max_tokens": params.get("max_tokens"),
        "seed": params.get("seed_used"),
        "wrapper": params.get("wrapper"),
        "endpoint": model.endpoint if model.provider == "openai" else None,
        "chat": model.chat,
        # A critique of the thinking says so (issue 24, point 7); one of the explanation, the
        # default, keeps the options it always had.
        **({"judged": "thinking"} if params.get("judged") == "thinking" else {}),
    }


def store_critique(
    lib: Library,
    *,
    run_id: int,
    request: RequestRow,
    model: ModelSpec,
    call: CallRecord,
    template_key: str,
    claim: Claim | None = None,
) -> int:
    """Commit the critique a ``critique`` request returned, parsed element by element (the raw
    text always kept), with the request row done, in one transaction; return its key
    (``claim``: see store_cot)."""
    text = call.response.texts[0]
    raw = stored_raw(call, text, "critique.raw_text")
    critique = Critique(
        cot_pk=request.target_cot_pk or 0,
        critique_model=model.model_name,
        raw_text=text,
        parsed=parse_critique(text),
        llm_options=_critique_options(model, request),
        fragment_key=template_key,
        prompt_text=request.prompt,
        source="run",
        run_id=run_id,
        request_id=request.id,
        extra={"thoughtdesk": provenance(model, {"critique_template": template_key}, request, call, run_id, raw)},
    )
    with lib.transaction() as conn:
        check_claim(conn, request.id, claim)
        critique_pk = add_critique(conn, _with_prompt_refs(conn, critique))
        if template_key == PROCESSBENCH_KEY:
            _store_judged_first_error(conn, critique.cot_pk, model.model_name, text, critique_pk)
        finish_request(conn, request.id, call, raw=raw)
        conn.execute("UPDATE request SET result_critique_pk = ? WHERE id = ?", (critique_pk, request.id))
    return critique_pk


def _store_judged_first_error(conn: sqlite3.Connection, cot_pk: int, model: str, text: str, critique_pk: int) -> None:
    """A ProcessBench step judge's verdict as the judge's step labels of the CoT (its first
    error, or why the answer could not be read: core/steps/judge.py), beside the critique."""
    row = conn.execute("SELECT sample_pk, cot, extra FROM generated_cot WHERE id = ?", (cot_pk,)).fetchone()
    if row is None:
        return
    sample_pk, cot_text, extra = row
    try:
        fields = json.loads(extra) if extra else None
    except ValueError:
        fields = None
    steps = cot_steps(cot_text, fields if isinstance(fields, dict) else None)
    verdict = parse_first_error(text, len(steps))
    put_review(conn, StepTarget(sample_pk, cot_pk), model, judged_review(model, verdict, critique_pk))


def _with_prompt_refs(conn: sqlite3.Connection, critique: Critique) -> Critique:
    """``critique`` to store: its prompt (``prompt_text`` and the provenance's ``prompt``) quotes
    the CoT judged, so both hold a reference to it (read back whole, see prompt_refs)."""
    prompt = stored_prompt_ref(conn, critique.prompt_text, critique.cot_pk)
    if prompt == critique.prompt_text:
        return critique
    extra = dict(critique.extra)
    provenance = extra.get("thoughtdesk")
    if isinstance(provenance, dict) and provenance.get("prompt") == critique.prompt_text:
        extra["thoughtdesk"] = {**provenance, "prompt": prompt}
    return dataclasses.replace(critique, prompt_text=prompt, extra=extra)


def store_cached_critique(
    lib: Library, request: RequestRow, source: int, src_critique: int, *, run_id: int
) -> int | None:
    """Answer ``request`` from request ``source``, an identical one already done, which stored
    critique ``src_critique``: reused when it judges the same CoT, else copied onto this CoT
    (an identical prompt means the same question, explanation and answers). None (nothing
    written) when that critique is gone: the request is then sent."""
    with lib.transaction() as conn:
        PENDING.check(conn, request.id)
        found = critique_by_pk(conn, src_critique)
        if found is None:
            return None
        critique_pk = src_critique
        if found.cot_pk != request.target_cot_pk:
            copy = dataclasses.replace(
                found,
                cot_pk=request.target_cot_pk or 0,
                run_id=run_id,
                request_id=request.id,
                created="",
                ratings=[],  # humans rated the other CoT's critique, not this one
                extra={**found.extra, "copied_from_critique": src_critique},
                position=0,
                pk=None,
            )
            critique_pk = add_critique(conn, _with_prompt_refs(conn, copy))
        finish_request(conn, request.id, None, cached_from=source)
        conn.execute("UPDATE request SET result_critique_pk = ? WHERE id = ?", (critique_pk, request.id))
    return critique_pk


def store_verdict(
    lib: Library,
    *,
    run_id: int,
    request: RequestRow,
    model: ModelSpec,
    call: CallRecord,
    claim: Claim | None = None,
) -> int:
    """Commit the verdict a ``judge`` request returned (parsed tolerantly, the raw text always
    kept; an empty answer is an unparseable verdict, not a failure) with the request row done,
    in one transaction; return its key (``claim``: see store_cot)."""
    text = call.response.texts[0] if call.response.texts else ""
    raw = stored_raw(call, text, "judge_verdict.raw_text")
    params = json.loads(request.params)
    parsed = parse_verdict(text)
    with lib.transaction() as conn:
        check_claim(conn, request.id, claim)
        verdict = JudgeVerdict(
            sample_pk=request.required_sample_pk,
            first_cot_pk=request.target_cot_pk or 0,
            second_cot_pk=int(params["second_cot_pk"]),
            judge_model=model.model_name,
            template=str(params.get("template", "")),
            template_version=str(params.get("template_version", "")),
            verdict=parsed.verdict,
            reason=parsed.reason,
            raw_text=text,
            run_id=run_id,
            request_id=request.id,
            extra={
                "thoughtdesk": {
                    **provenance(model, {"judge_template": params.get("template")}, request, call, run_id, raw),
                    "prompt": None,  # the request row keeps it (it quotes both CoTs)
                }
            },
        )
        verdict_pk = add_verdict(conn, verdict)
        finish_request(conn, request.id, call, raw=raw)
        conn.execute("UPDATE request SET result_verdict_pk = ? WHERE id = ?", (verdict_pk, request.id))
    return verdict_pk


def store_cached_verdict(
    lib: Library, request: RequestRow, source: int, src_verdict: int, *, run_id: int
) -> int | None:
    """Answer ``request`` from request ``source``, an identical one already done, which stored
    verdict ``src_verdict``: reused for the same ordered pair, else copied onto this pair (an
    identical prompt shows the same texts). None (nothing written) when that verdict is gone."""
    params = json.loads(request.params)
    with lib.transaction() as conn:
        PENDING.check(conn, request.id)
        found = verdict_by_pk(conn, src_verdict)
        if found is None:
            return None
        verdict_pk = src_verdict
        first, second = request.target_cot_pk or 0, int(params["second_cot_pk"])
        if (found.first_cot_pk, found.second_cot_pk) != (first, second):
            copy = dataclasses.replace(
                found,
                sample_pk=request.required_sample_pk,
                first_cot_pk=first,
                second_cot_pk=second,
                run_id=run_id,
                request_id=request.id,
                created="",
                extra={**found.extra, "copied_from_verdict": src_verdict},
                pk=None,
            )
            verdict_pk = add_verdict(conn, copy)
        finish_request(conn, request.id, None, cached_from=source)
        conn.execute("UPDATE request SET result_verdict_pk = ? WHERE id = ?", (verdict_pk, request.id))
    return verdict_pk


def store_rollout(
    lib: Library,
    *,
    run_id: int,
    request: RequestRow,
    sample: SampleRef,
    model: ModelSpec,
    call: CallRecord,
    claim: Claim | None = None,
) -> None:
    """Commit what a ``rollout`` request returned (core/generation/runs/rollouts.py): its step's
    label (+1 when any of the K continuations reaches the gold answer, else -1; the share in
    ``extra``) set in the completer's step labels of the CoT, with the request row done, in one
    transaction. Labels of another run (an earlier one, when this one is forced) are replaced,
    not merged."""
    params = json.loads(request.params)
    k = int(params.get("k", 1))
    outcomes = [score_text(sample, None, text).outcome == CORRECT for text in list(call.response.texts)[:k]]
    label = rollout_label(int(params["step"]), str(params["step_id"]), outcomes)
    author = author_for(model)
    target = StepTarget(request.required_sample_pk, request.target_cot_pk)
    with lib.transaction() as conn:
        check_claim(conn, request.id, claim)
        before = review_of(conn, target, author)
        ours = before is not None and (before.extra or {}).get("run_id") == run_id
        labels = {x.step: x for x in before.labels} if ours and before is not None else {}
        labels[label.step] = label
        review = StepReview(
            author,
            tuple(labels[step] for step in sorted(labels)),
            kind="model",
            extra={"method": METHOD, "k": k, "run_id": run_id},
            date=now_iso(),
        )
        put_review(conn, target, author, review)
        finish_request(conn, request.id, call, raw=redact(call.response.raw_body))
