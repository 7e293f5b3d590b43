"""Committing what a request produced: the CoT or answer rows, the sample's counters, the
request's own row, all in one transaction, so a kill never leaves a result without its request
marked done (or the reverse), and a result is never stored twice.

A response's text is stored once (issue 15, point 6): as the CoT, the answer or the critique. The
raw body kept for debugging (in the request row and the result's provenance) holds everything
else the server sent, with that text replaced by a reference (:func:`slim_raw_body`;
:func:`restore_raw_body` puts it back), and the full-text index holds only its first
``writer.FTS_CHARS`` characters. A 20 MB answer grows the library by about 20 MB, not 80.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from thoughtdesk.core.evaluation.answers import UNEXTRACTABLE, Extraction
from thoughtdesk.core.evaluation.answers.number import format_number
from thoughtdesk.core.generation.backends import BackendError
from thoughtdesk.core.generation.runs.commit_base import (
    CallRecord,
    check_claim,
    finish_request,
    json_text,
    provenance,
    redact_call,
    score_text,
    stored_raw,
    thought_of,
)
from thoughtdesk.core.generation.runs.commit_judged import store_critique, store_rollout, store_verdict
from thoughtdesk.core.generation.runs.lease import PENDING, Claim
from thoughtdesk.core.generation.runs.read import RequestRow
from thoughtdesk.core.generation.runs.samples import SampleRef
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.generation.runs.trajectories import attach_steps
from thoughtdesk.core.library import counters
from thoughtdesk.core.library.prompt_refs import prompt_ref
from thoughtdesk.core.library.records import model_repr
from thoughtdesk.core.library.store import Library, inserted_id
from thoughtdesk.core.library.timestamps import now_iso, thoughtsource_date
from thoughtdesk.core.library.writer import COT_SEARCH_SQL
from thoughtdesk.core.settings.logs import redact


def one_step_answer(scored: Extraction, cot: str) -> str:
    """The ``answer`` text of an answer read from the CoT itself (one-step): what the CoT says
    for a number ("2/3", "1,200", "27"), not the float it was scored as ("0.6666666666666666",
    "27.0"); other kinds keep their normalised value ("B) ...", "yes")."""
    if scored.value is None:
        return ""
    if isinstance(scored.value, float):
        if scored.source == "cot" and scored.span is not None:
            said = cot[scored.span[0] : scored.span[1]].strip()
            if said:
                return said
        return format_number(scored.value)
    return str(scored.value)


def _insert_answer(
    conn: sqlite3.Connection,
    cot_pk: int,
    answer_id: str,
    key: str | None,
    template: str | None,
    text: str | None,
    answer: str,
    scored: Extraction,
    extra: dict[str, Any],
) -> int:
    position = conn.execute(
        "SELECT coalesce(max(position), -1) + 1 FROM answer WHERE cot_pk = ?", (cot_pk,)
    ).fetchone()[0]
    correct = scored.correct
    span = scored.span or (None, None)
    cur = conn.execute(
        "INSERT INTO answer (cot_pk, position, answer_id, answer_extraction, answer_extraction_template, "
        "answer_extraction_text, answer, correct_answer, extra, td_outcome, td_value, td_method, "
        "td_span_source, td_span_start, td_span_end, td_reason) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            cot_pk,
            position,
            answer_id,
            key,
            template,
            text,
            answer,
            None if correct is None else int(correct),
            json_text(extra),
            scored.outcome,
            None if scored.value is None else str(scored.value),
            scored.method,
            scored.source,
            span[0],
            span[1],
            scored.reason or None,
        ),
    )
    sample_pk = conn.execute("SELECT sample_pk FROM generated_cot WHERE id = ?", (cot_pk,)).fetchone()[0]
    counters.add_answer(conn, sample_pk, correct, unextractable=scored.outcome == UNEXTRACTABLE)
    return inserted_id(cur)


def store_cot(
    lib: Library,
    *,
    run_id: int,
    request: RequestRow,
    sample: SampleRef,
    model: ModelSpec,
    variant: dict[str, Any],
    call: CallRecord,
    one_step: bool,
    guide: dict[str, Any] | None = None,
    revision: dict[str, Any] | None = None,
    claim: Claim | None = None,
) -> tuple[int, int | None]:
    """Commit a CoT (and, in one-step mode, its answer parsed from the CoT); return their keys.
    ``guide`` (a guided CoT: its guide's settings and label) is kept in the provenance, and the
    trajectory's stored steps are linked to the CoT in the same transaction. ``revision`` (a
    revised CoT: ``of`` the CoT and ``critique`` it revises, ``critique_model``, ``template``,
    ``label``) is kept in the provenance and sets ``revision_of``/``revision_critique``; the
    revision takes the revised CoT's instruction and trigger keys, so it is that prompt
    condition's revision. ``claim``: what the request must still be (else StaleClaim, nothing
    stored). A reasoning model's thinking goes to ``reasoning`` and only the visible text to
    ``cot`` (see thought_of); the raw body keeps the whole answer."""
    thought = thought_of(call.response, model.think_tags)
    text = thought.visible
    more = {"generated_cot.reasoning": thought.reasoning} if thought.reasoning else None
    raw = stored_raw(call, text, "generated_cot.cot", more)
    extra = {"thoughtdesk": provenance(model, variant, request, call, run_id, raw)}
    if thought.facts:
        extra["thoughtdesk"]["reasoning"] = thought.facts
    finish_reason = call.response.finish_reasons[0] if call.response.finish_reasons else None
    if guide is not None:
        extra["thoughtdesk"]["guide"] = guide
    if revision is not None:
        extra["thoughtdesk"]["revision"] = revision
    ident = f"td-{run_id}-{request.id}"
    instruction, trigger = variant.get("instruction"), variant.get("cot_trigger")
    template = variant["cot_template"]
    template_text = template.get("context_text") if template.get("auto") and sample.context else template["text"]
    params = json.loads(request.params)
    with lib.transaction() as conn:
        check_claim(conn, request.id, claim)
        position = conn.execute(
            "SELECT coalesce(max(position), -1) + 1 FROM generated_cot WHERE sample_pk = ?", (sample.pk,)
        ).fetchone()[0]
        cot_pk = inserted_id(
            conn.execute(
                "INSERT INTO generated_cot (sample_pk, position, cot_id, fragments_version, instruction, "
                "cot_trigger, cot_trigger_template, prompt_text, cot, author, date, api_service, model, "
                "model_name, comment, extra, reasoning, finish_reason, reasoning_tokens) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    sample.pk,
                    position,
                    ident,
                    "thoughtdesk",
                    instruction and instruction["key"],
                    trigger and trigger["key"],
                    template_text,
                    request.prompt,
                    text,
                    "thoughtdesk",
                    thoughtsource_date(call.finished_at),
                    model.provider,
                    model_repr(
                        model.model_name,
                        temperature=params["temperature"],
                        max_tokens=params["max_tokens"],
                        seed=params["seed_used"],
                    ),
                    model.model_name,
                    "",
                    json_text(extra),
                    thought.reasoning,
                    finish_reason,
                    thought.tokens,
                ),
            )
        )
        counters.add_cot(conn, sample.pk)
        if guide is not None:
            attach_steps(conn, request.id, cot_pk)
        if revision is not None:
            _link_revision(conn, cot_pk, revision)
        add_to_search(conn, cot_pk, sample.pk)
        answer_pk = None
        if one_step:
            scored = score_text(sample, None, text)
            answer_pk = _insert_answer(
                conn,
                cot_pk,
                ident,
                None,
                None,
                None,
                one_step_answer(scored, text),
                scored,
                {"thoughtdesk": {"run_id": run_id, "request_id": request.id, "mode": "one-step"}},
            )
        finish_request(conn, request.id, call, cot_pk=cot_pk, answer_pk=answer_pk, raw=raw)
    return cot_pk, answer_pk


def _link_revision(conn: sqlite3.Connection, cot_pk: int, revision: dict[str, Any]) -> None:
    """Name what CoT ``cot_pk`` revises (a CoT or critique deleted meanwhile: NULL) and give it the
    revised CoT's instruction and trigger keys."""
    original = conn.execute(
        "SELECT id, instruction, cot_trigger FROM generated_cot WHERE id = ?", (revision["of"],)
    ).fetchone()
    critique = conn.execute("SELECT id FROM critique WHERE id = ?", (revision.get("critique"),)).fetchone()
    conn.execute(
        "UPDATE generated_cot SET revision_of = ?, revision_critique = ?, instruction = ?, cot_trigger = ? WHERE id = ?",
        (
            original and original[0],
            critique and critique[0],
            original and original[1],
            original and original[2],
            cot_pk,
        ),
    )


def revision_of_request(request: RequestRow, template_key: str) -> dict[str, Any]:
    """The ``revision`` record of a ``revision`` request (see :func:`store_cot`): what it revises,
    from which critique, and the label its prompt condition carries (``revised after MODEL``)."""
    params = json.loads(request.params)
    critique_model = str(params.get("critique_model") or "")
    return {
        "of": request.target_cot_pk,
        "critique": params.get("critique_pk"),
        "critique_model": critique_model,
        "template": template_key,
        "label": f"revised after {critique_model or 'a critique'}",
    }


def store_extraction(
    lib: Library,
    *,
    run_id: int,
    request: RequestRow,
    sample: SampleRef,
    model: ModelSpec,
    variant: dict[str, Any],
    call: CallRecord,
    cot_pk: int,
    cot_text: str,
    claim: Claim | None = None,
) -> int:
    """Commit the answer an extraction request returned, scored against the gold answer
    (``claim``: see store_cot). A reasoning model's thinking before its answer is not part of the
    answer: the answer is the visible text (see thought_of); the raw body keeps the thinking, and
    how it was found is in the answer's provenance (``reasoning``, without the text)."""
    thought = thought_of(call.response, model.think_tags)
    text = thought.visible
    extraction = variant["answer_extraction"]
    template = variant["extraction_template"]
    template_text = template.get("context_text") if template.get("auto") and sample.context else template["text"]
    scored = score_text(sample, text, cot_text)
    raw = stored_raw(call, text, "answer.answer")
    extra = {"thoughtdesk": provenance(model, variant, request, call, run_id, raw)}
    if thought.facts:
        extra["thoughtdesk"]["reasoning"] = thought.facts
    if extra["thoughtdesk"]["prompt"]:  # it quotes the CoT, stored once: a reference in its place
        extra["thoughtdesk"]["prompt"] = prompt_ref(extra["thoughtdesk"]["prompt"], cot_text, cot_pk)
    with lib.transaction() as conn:
        check_claim(conn, request.id, claim)
        answer_pk = _insert_answer(
            conn,
            cot_pk,
            f"td-{run_id}-{request.id}",
            extraction["key"],
            template_text,
            extraction["text"],
            text,
            scored,
            extra,
        )
        finish_request(conn, request.id, call, answer_pk=answer_pk, cot_pk=cot_pk, raw=raw)
    return answer_pk


def store_cached_cot(
    lib: Library, request: RequestRow, source: int, src_cot: int, src_answer: int | None, *, sample: SampleRef
) -> None:
    """Answer CoT ``request`` from request ``source``, an identical one already done, which stored
    CoT ``src_cot`` (and, in one-step mode, answer ``src_answer``).

    The same sample reuses the stored rows (nothing is duplicated); another sample gets a copy
    of the CoT/answer, scored against its own gold answer.
    """
    with lib.transaction() as conn:
        PENDING.check(conn, request.id)
        src_sample = conn.execute("SELECT sample_pk FROM generated_cot WHERE id = ?", (src_cot,)).fetchone()[0]
        new_cot, new_answer = src_cot, src_answer
        if src_sample != sample.pk:
            new_cot, new_answer = _copy_cot(conn, src_cot, src_answer, sample)
        finish_request(conn, request.id, None, cot_pk=new_cot, answer_pk=new_answer, cached_from=source)


def store_cached_answer(
    lib: Library, request: RequestRow, source: int, src_answer: int, *, sample: SampleRef, cot_pk: int
) -> None:
    """Answer extraction ``request`` (for CoT ``cot_pk``) from request ``source``, an identical one
    already done, which stored answer ``src_answer``: reused when it belongs to the same CoT, else
    copied and scored against this sample's gold answer."""
    with lib.transaction() as conn:
        PENDING.check(conn, request.id)
        src_cot = conn.execute("SELECT cot_pk FROM answer WHERE id = ?", (src_answer,)).fetchone()[0]
        answer_pk = src_answer
        if src_cot != cot_pk:
            answer_pk = _copy_answer(conn, src_answer, cot_pk, sample)
        finish_request(conn, request.id, None, cot_pk=cot_pk, answer_pk=answer_pk, cached_from=source)


def add_to_search(conn: sqlite3.Connection, cot_pk: int, sample_pk: int) -> None:
    """Append the stored CoT ``cot_pk`` to its sample's full-text row: the visible text and the
    thinking (``writer.cot_search_text``), read from the row as written, whatever wrote it."""
    conn.execute(
        f"UPDATE sample_fts SET generated = coalesce(generated, '') || char(10) || ({COT_SEARCH_SQL}) WHERE rowid = ?",
        (cot_pk, sample_pk),
    )


_COT_COPY = (
    "cot_id, fragments_version, instruction, cot_trigger, cot_trigger_template, prompt_text, "
    "cot, author, date, api_service, model, model_name, comment, extra, missing, "
    "reasoning, finish_reason, reasoning_tokens"
)


def _copy_cot(
    conn: sqlite3.Connection, src_cot: int, src_answer: int | None, sample: SampleRef
) -> tuple[int, int | None]:
    position = conn.execute(
        "SELECT coalesce(max(position), -1) + 1 FROM generated_cot WHERE sample_pk = ?", (sample.pk,)
    ).fetchone()[0]
    cot_pk = inserted_id(
        conn.execute(
            f"INSERT INTO generated_cot (sample_pk, position, {_COT_COPY}) SELECT ?, ?, {_COT_COPY} "
            "FROM generated_cot WHERE id = ?",
            (sample.pk, position, src_cot),
        )
    )
    counters.add_cot(conn, sample.pk)
    add_to_search(conn, cot_pk, sample.pk)
    answer_pk = _copy_answer(conn, src_answer, cot_pk, sample) if src_answer is not None else None
    return cot_pk, answer_pk


def _copy_answer(conn: sqlite3.Connection, src_answer: int, cot_pk: int, sample: SampleRef) -> int:
    row = conn.execute(
        "SELECT answer_id, answer_extraction, answer_extraction_template, "
        "answer_extraction_text, answer, extra FROM answer WHERE id = ?",
        (src_answer,),
    ).fetchone()
    cot_text = conn.execute("SELECT cot FROM generated_cot WHERE id = ?", (cot_pk,)).fetchone()[0] or ""
    # Re-scored: the copy may belong to a sample with another gold answer.
    output = row[4] if row[1] is not None else None
    scored = score_text(sample, output, cot_text)
    answer = row[4] if row[1] is not None else one_step_answer(scored, cot_text)
    return _insert_answer(
        conn, cot_pk, row[0], row[1], row[2], row[3], answer, scored, json.loads(row[5]) if row[5] else {}
    )


def store_failure(
    lib: Library,
    request_id: int,
    error: BackendError | str,
    *,
    sent_at: str,
    attempts: int = 1,
    claim: Claim | None = None,
) -> None:
    """Mark a request failed with the error message and the raw body the server sent, both
    redacted (any key-shaped text or known key becomes ``[redacted]``); ``claim``: see store_cot."""
    message = redact(str(error))
    kind = error.kind if isinstance(error, BackendError) else "Error"
    raw = redact(error.raw_body) if isinstance(error, BackendError) and error.raw_body is not None else None
    with lib.transaction() as conn:
        check_claim(conn, request_id, claim)
        conn.execute(
            "UPDATE request SET status = 'failed', error = ?, error_kind = ?, raw_response = ?, "
            "sent_at = ?, finished_at = ?, attempts = attempts - 1 + ? WHERE id = ?",
            (message, kind, raw, sent_at, now_iso(), attempts, request_id),
        )


def store_result(
    lib: Library,
    *,
    run_id: int,
    request: RequestRow,
    sample: SampleRef,
    model: ModelSpec,
    variants: Sequence[dict[str, Any]],
    call: CallRecord,
    one_step: bool = False,
    template_key: str = "",
    cot_pk: int | None = None,
    cot_text: str | None = None,
    guide: dict[str, Any] | None = None,
    claim: Claim | None = None,
) -> None:
    """Commit what ``request`` returned as its step asks: a critique (``template_key``), a CoT
    (``one_step``: with its answer; ``guide``: a guided CoT), a revised CoT (scored from its own
    text; ``template_key`` is the revision template's) or an extracted answer for CoT
    ``cot_pk`` whose text is ``cot_text``; ``variants`` are the run's prompt variants as stored
    (a critique has none). The one dispatch by step for direct, batch and guided runs. The keys
    this process used are redacted from all the provider sent (:func:`redact_call`); ``claim``
    is what the request must still be (else :class:`StaleClaim` and nothing is stored)."""
    call = redact_call(call)
    if request.step == "rollout":
        store_rollout(lib, run_id=run_id, request=request, sample=sample, model=model, call=call, claim=claim)
    elif request.step == "judge":
        store_verdict(lib, run_id=run_id, request=request, model=model, call=call, claim=claim)
    elif request.step == "critique":
        store_critique(
            lib, run_id=run_id, request=request, model=model, call=call, template_key=template_key, claim=claim
        )
    elif request.step == "revision":
        store_cot(
            lib,
            run_id=run_id,
            request=request,
            sample=sample,
            model=model,
            variant={"instruction": None, "cot_trigger": None, "cot_template": {"text": template_key}},
            call=call,
            one_step=True,
            revision=revision_of_request(request, template_key),
            claim=claim,
        )
    elif request.step in ("cot", "guided"):
        store_cot(
            lib,
            run_id=run_id,
            request=request,
            sample=sample,
            model=model,
            variant=variants[request.variant_index],
            call=call,
            one_step=one_step,
            guide=guide,
            claim=claim,
        )
    else:
        store_extraction(
            lib,
            run_id=run_id,
            request=request,
            sample=sample,
            model=model,
            variant=variants[request.variant_index],
            call=call,
            cot_pk=cot_pk or 0,
            cot_text=cot_text or "",
            claim=claim,
        )
