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

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.critiques import Critique, add_critique, critique_by_pk
from thoughtdesk.core.critiques.parse import parse_critique
from thoughtdesk.core.evaluation.answers import CORRECT, UNEXTRACTABLE, Extraction, extract_answer
from thoughtdesk.core.evaluation.answers.number import format_number
from thoughtdesk.core.generation.backends import BackendError, Request, Response, estimate_request_tokens
from thoughtdesk.core.generation.rollout_labels import METHOD, author_for, rollout_label
from thoughtdesk.core.generation.runs.lease import PENDING, Claim
from thoughtdesk.core.generation.runs.plan import SampleRef
from thoughtdesk.core.generation.runs.read import RequestRow
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.generation.runs.trajectories import attach_steps
from thoughtdesk.core.judges.parse import parse_verdict
from thoughtdesk.core.judges.store import JudgeVerdict, add_verdict, verdict_by_pk
from thoughtdesk.core.library import counters
from thoughtdesk.core.library.prompt_refs import prompt_ref, stored_prompt_ref
from thoughtdesk.core.library.records import model_repr
from thoughtdesk.core.library.store import Library, inserted_id
from thoughtdesk.core.library.timestamps import now_iso, thoughtsource_date
from thoughtdesk.core.library.writer import COT_SEARCH_SQL
from thoughtdesk.core.settings.logs import redact, redact_secrets
from thoughtdesk.core.steps.judge import PROCESSBENCH_KEY, judged_review, parse_first_error
from thoughtdesk.core.steps.split import cot_steps
from thoughtdesk.core.steps.store import StepReview, StepTarget, put_review, review_of
from thoughtdesk.core.thinking import estimate_reasoning_tokens, split_thinking

#: A response text at least this long is not kept again inside the raw body (shorter ones cost
#: less than the reference and the re-serialised body would).
SHARED_TEXT_CHARS = 1_000
#: The key of the object that stands for the stored text inside a slimmed raw body.
TEXT_REF_KEY = "$thoughtdesk_text"


def slim_raw_body(raw: str, text: str, stored_as: str, more: dict[str, str] | None = None) -> str:
    """``raw`` (a response body) with every JSON string equal to ``text`` replaced by
    ``{"$thoughtdesk_text": stored_as}``, e.g. ``"generated_cot.cot"``; ``raw`` itself when the
    text is short, the body is not JSON or does not hold the text as one string (a streamed or
    joined body). The slimmed body is JSON again (re-serialised: same values, compact spacing).
    ``more``: further texts stored elsewhere, by place (``{"generated_cot.reasoning": thinking}``),
    replaced the same way."""
    places = {t: place for place, t in (more or {}).items() if len(t) >= SHARED_TEXT_CHARS}
    if len(text) >= SHARED_TEXT_CHARS:
        places[text] = stored_as
    if not places or len(raw) < min(len(t) for t in places):
        return raw
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    found = False

    def walk(node: Any) -> Any:
        nonlocal found
        if isinstance(node, str) and node in places:
            found = True
            return {TEXT_REF_KEY: places[node]}
        if isinstance(node, dict):
            return {key: walk(item) for key, item in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    slim = walk(value)
    return json.dumps(slim, ensure_ascii=False, separators=(",", ":")) if found else raw


def restore_raw_body(slim: str, text: str, more: dict[str, str] | None = None) -> str:
    """The body :func:`slim_raw_body` slimmed, with ``text`` (read from where the reference says)
    back in place of each reference; ``slim`` itself when it holds none. ``more``: the texts of
    other places by place (``{"generated_cot.reasoning": thinking}``)."""
    if TEXT_REF_KEY not in slim:
        return slim
    try:
        value = json.loads(slim)
    except ValueError:
        return slim
    others = more or {}

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if len(node) == 1 and TEXT_REF_KEY in node:
                return others.get(node[TEXT_REF_KEY], text)
            return {key: walk(item) for key, item in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    # A key a server hid from the stored bytes behind JSON escapes is a key again once decoded.
    return redact_secrets(json.dumps(walk(value), ensure_ascii=False, separators=(",", ":")))


def _check(conn: sqlite3.Connection, request_id: int, claim: Claim | None) -> None:
    if claim is not None:
        claim.check(conn, request_id)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What one call cost and when: tokens as reported (or estimated), ``cost`` USD or None,
    ``latency`` seconds, times ISO 8601 UTC."""

    response: Response
    sent_at: str
    finished_at: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


#: What a call costs in USD for its prompt and completion tokens (a price table's ``cost`` or
#: ``batch_cost`` for one model), or None when the model has no price.
Pricer = Callable[[int, int], float | None]


def call_record(call: Request, response: Response, *, sent_at: str, price: Pricer) -> CallRecord:
    """The :class:`CallRecord` of ``response`` to ``call``: tokens as the provider reported them,
    else estimated (the prompt from the request, the completion at about 4 characters a token),
    the cost from ``price``, finished now. The one place a response's cost is worked out."""
    estimated_in, _ = estimate_request_tokens(call)
    prompt_tokens = response.prompt_tokens if response.prompt_tokens is not None else estimated_in
    # The thinking is paid as output tokens (OpenAI's and Anthropic's counts include it).
    completion_tokens = (
        response.completion_tokens
        if response.completion_tokens is not None
        else sum(max(1, len(t) // 4) for t in response.texts) + sum(len(r or "") // 4 for r in response.reasonings)
    )
    return CallRecord(
        response, sent_at, now_iso(), prompt_tokens, completion_tokens, price(prompt_tokens, completion_tokens)
    )


def redact_call(call: CallRecord) -> CallRecord:
    """``call`` with every key this process used (see ``logs.redact_secrets``) replaced by
    ``[redacted]`` in what the provider sent: texts, model name, finish reasons and raw body. A
    server that echoes the key in a 200 answer (in ``id``, ``system_fingerprint``, the text...)
    no longer gets it stored, nor exported (issue 23, point 2)."""
    r = call.response
    response = dataclasses.replace(
        r,
        texts=[redact_secrets(text) for text in r.texts],
        reasonings=[None if text is None else redact_secrets(text) for text in r.reasonings],
        model=redact_secrets(r.model),
        finish_reasons=[None if reason is None else redact_secrets(reason) for reason in r.finish_reasons],
        raw_body=redact_secrets(r.raw_body),
    )
    return dataclasses.replace(call, response=response)


def _stored_raw(call: CallRecord, text: str, stored_as: str, more: dict[str, str] | None = None) -> str:
    """The raw body to store: slimmed (see slim_raw_body), then redacted as an error body is
    (known keys and key-shaped text: it is kept for debugging, not read as data)."""
    return redact(slim_raw_body(call.response.raw_body, text, stored_as, more))


@dataclass(frozen=True, slots=True)
class Thought:
    """A response's first sample as stored: ``visible`` (the CoT column), ``reasoning`` (None:
    none), ``tokens`` (None: not known), and how they were found, for the CoT's provenance."""

    visible: str
    reasoning: str | None
    tokens: int | None
    facts: dict[str, Any]


def thought_of(response: Response, tags: tuple[str, str] | None) -> Thought:
    """The thinking and the visible text of ``response``'s first sample: the thinking the
    provider sent apart, else the text split at ``tags`` (core/thinking.py); the
    reasoning tokens the provider counted, else the backend's own count, else an estimate."""
    text = response.texts[0]
    reasoning = response.reasoning_of(0)
    facts: dict[str, Any] = {}
    note = response.reasoning_note_of(0)
    visible = text
    if reasoning is not None:
        # Sent apart by the provider, or split off the text by the backend (llama.cpp).
        facts["source"] = "tags" if response.reasoning_from else "field"
        if response.reasoning_from == "unclosed":
            facts["unclosed"] = True
    else:
        split = split_thinking(text, tags)
        if split.reasoning is not None:
            reasoning, visible = split.reasoning, split.visible
            facts["source"] = "tags"
            facts["tags"] = list(tags or ())
            note = "; ".join(n for n in (note, split.note) if n) or None
            if split.unclosed:
                facts["unclosed"] = True
    if note:
        facts["note"] = note
    # A provider's count covers the whole response: one sample's only when there is one. It is
    # kept without text too (OpenAI's o-series think without showing it).
    tokens = response.reasoning_tokens if len(response.texts) == 1 else None
    if tokens is not None:
        facts["tokens_source"] = "reported"
    elif reasoning is not None:
        tokens = estimate_reasoning_tokens(reasoning)
        facts["tokens_source"] = "estimate"
    return Thought(visible, reasoning, tokens, facts)


def has_output(response: Response) -> bool:
    """True when the response's first sample has something to store: visible text or thinking
    (a trace cut while thinking has thinking and no text)."""
    return bool(response.texts) and (bool(response.texts[0].strip()) or bool(response.reasoning_of(0)))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _score(sample: SampleRef, extraction_output: str | None, cot: str) -> Extraction:
    return extract_answer(
        sample.type, extraction_output=extraction_output, cot=cot, choices=sample.choices, gold=sample.answer
    )


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
            _json(extra),
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


def _provenance(
    model: ModelSpec, variant: dict[str, Any], request: RequestRow, call: CallRecord, run_id: int, raw: str
) -> dict[str, Any]:
    r = call.response
    return {
        "run_id": run_id,
        "request_id": request.id,
        "fingerprint": request.fingerprint,
        "step": request.step,
        "provider": model.provider,
        "model": model.model_name,
        "base_url": model.base_url,
        "params": json.loads(request.params),
        "prompt": request.prompt,
        "fragments": variant,
        "sent_at": call.sent_at,
        "finished_at": call.finished_at,
        "latency": r.latency,
        "attempts": r.attempts,
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "tokens_reported": r.prompt_tokens is not None,
        "cost": call.cost,
        "finish_reason": r.finish_reasons[0] if r.finish_reasons else None,
        "response_model": r.model,
        "raw_response": raw,
    }


def _finish_request(
    conn: sqlite3.Connection,
    request_id: int,
    call: CallRecord | None,
    *,
    cot_pk: int | None = None,
    answer_pk: int | None = None,
    cached_from: int | None = None,
    raw: str | None = None,
) -> None:
    if call is None:
        conn.execute(
            "UPDATE request SET status = 'done', error = NULL, error_kind = NULL, finished_at = ?, "
            "latency = 0, prompt_tokens = 0, completion_tokens = 0, cost = 0, result_cot_pk = ?, "
            "result_answer_pk = ?, cached_from = ? WHERE id = ?",
            (now_iso(), cot_pk, answer_pk, cached_from, request_id),
        )
        return
    r = call.response
    conn.execute(
        "UPDATE request SET status = 'done', error = NULL, error_kind = NULL, raw_response = ?, "
        "sent_at = ?, finished_at = ?, latency = ?, prompt_tokens = ?, completion_tokens = ?, "
        "cost = ?, result_cot_pk = ?, result_answer_pk = ?, attempts = attempts - 1 + ? WHERE id = ?",
        (
            r.raw_body if raw is None else raw,
            call.sent_at,
            call.finished_at,
            r.latency,
            call.prompt_tokens,
            call.completion_tokens,
            call.cost,
            cot_pk,
            answer_pk,
            r.attempts,
            request_id,
        ),
    )


def finish_request(
    conn: sqlite3.Connection, request_id: int, call: CallRecord | None, *, raw: str | None = None
) -> None:
    """Mark a request done with its call's times, tokens and cost (none: nothing was sent),
    inside the caller's transaction: for a feature's step (:mod:`.kinds`), after its result."""
    _finish_request(conn, request_id, call, raw=raw)


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
    raw = _stored_raw(call, text, "generated_cot.cot", more)
    extra = {"thoughtdesk": _provenance(model, variant, request, call, run_id, raw)}
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
        _check(conn, request.id, claim)
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
                    _json(extra),
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
            scored = _score(sample, None, text)
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
        _finish_request(conn, request.id, call, cot_pk=cot_pk, answer_pk=answer_pk, raw=raw)
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
    scored = _score(sample, text, cot_text)
    raw = _stored_raw(call, text, "answer.answer")
    extra = {"thoughtdesk": _provenance(model, variant, request, call, run_id, raw)}
    if thought.facts:
        extra["thoughtdesk"]["reasoning"] = thought.facts
    if extra["thoughtdesk"]["prompt"]:  # it quotes the CoT, stored once: a reference in its place
        extra["thoughtdesk"]["prompt"] = prompt_ref(extra["thoughtdesk"]["prompt"], cot_text, cot_pk)
    with lib.transaction() as conn:
        _check(conn, request.id, claim)
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
        _finish_request(conn, request.id, call, answer_pk=answer_pk, cot_pk=cot_pk, raw=raw)
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
        _finish_request(conn, request.id, None, cot_pk=new_cot, answer_pk=new_answer, cached_from=source)


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
        _finish_request(conn, request.id, None, cot_pk=cot_pk, answer_pk=answer_pk, cached_from=source)


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
    scored = _score(sample, output, cot_text)
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
        _check(conn, request_id, claim)
        conn.execute(
            "UPDATE request SET status = 'failed', error = ?, error_kind = ?, raw_response = ?, "
            "sent_at = ?, finished_at = ?, attempts = attempts - 1 + ? WHERE id = ?",
            (message, kind, raw, sent_at, now_iso(), attempts, request_id),
        )


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
    raw = _stored_raw(call, text, "critique.raw_text")
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
        extra={"thoughtdesk": _provenance(model, {"critique_template": template_key}, request, call, run_id, raw)},
    )
    with lib.transaction() as conn:
        _check(conn, request.id, claim)
        critique_pk = add_critique(conn, _with_prompt_refs(conn, critique))
        if template_key == PROCESSBENCH_KEY:
            _store_judged_first_error(conn, critique.cot_pk, model.model_name, text, critique_pk)
        _finish_request(conn, request.id, call, raw=raw)
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
        _finish_request(conn, request.id, None, cached_from=source)
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
    raw = _stored_raw(call, text, "judge_verdict.raw_text")
    params = json.loads(request.params)
    parsed = parse_verdict(text)
    with lib.transaction() as conn:
        _check(conn, request.id, claim)
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
                    **_provenance(model, {"judge_template": params.get("template")}, request, call, run_id, raw),
                    "prompt": None,  # the request row keeps it (it quotes both CoTs)
                }
            },
        )
        verdict_pk = add_verdict(conn, verdict)
        _finish_request(conn, request.id, call, raw=raw)
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
        _finish_request(conn, request.id, None, cached_from=source)
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
    outcomes = [_score(sample, None, text).outcome == CORRECT for text in list(call.response.texts)[:k]]
    label = rollout_label(int(params["step"]), str(params["step_id"]), outcomes)
    author = author_for(model)
    target = StepTarget(request.required_sample_pk, request.target_cot_pk)
    with lib.transaction() as conn:
        _check(conn, request.id, claim)
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
        _finish_request(conn, request.id, call, raw=redact(call.response.raw_body))


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
