"""What committing any request's result shares: the call's record (tokens, cost, times) with the
keys redacted, the raw body stored without the text it carries (:func:`slim_raw_body`,
:func:`restore_raw_body`), the thinking split off, an answer scored, the provenance kept with a
result, the claim checked and the request row marked done (:func:`finish_request`), all inside
the caller's transaction. :mod:`.commit` and :mod:`.commit_judged` store the results themselves.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.evaluation.answers import Extraction, extract_answer
from thoughtdesk.core.generation.backends import Request, Response, estimate_request_tokens
from thoughtdesk.core.generation.runs.lease import Claim
from thoughtdesk.core.generation.runs.read import RequestRow
from thoughtdesk.core.generation.runs.samples import SampleRef
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.settings.logs import redact, redact_secrets
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


def check_claim(conn: sqlite3.Connection, request_id: int, claim: Claim | None) -> None:
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


def stored_raw(call: CallRecord, text: str, stored_as: str, more: dict[str, str] | None = None) -> str:
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


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def score_text(sample: SampleRef, extraction_output: str | None, cot: str) -> Extraction:
    return extract_answer(
        sample.type, extraction_output=extraction_output, cot=cot, choices=sample.choices, gold=sample.answer
    )


def provenance(
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


def finish_request(
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
