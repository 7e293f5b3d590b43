"""Providers' batch APIs: OpenAI's Batch API (a JSONL file uploaded to ``/v1/files``, then
``/v1/batches``) and Anthropic's Message Batches (``/v1/messages/batches``).

A batch is answered within 24 hours at about half the price. These clients only talk to the
APIs: submit a list of request bodies under custom ids, read a batch's state, stream its results
(one :class:`BatchResult` per custom id, read within :class:`ResultLimits`), find a batch again
after a kill (:class:`BatchLookup`), cancel. The run engine
(:mod:`thoughtdesk.core.generation.runs.batch`) stores ids and results.

Every answer is read within a byte limit: results within what the batch's requests can produce,
any other answer within :data:`JSON_MAX_BYTES`. Anthropic's ``results_url`` is used only on the
API's own host: the key is never sent anywhere else.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from thoughtdesk.core.generation.backends.anthropic import ANTHROPIC_VERSION
from thoughtdesk.core.generation.backends.base import BackendError, BadResponse
from thoughtdesk.core.generation.backends.batch_transport import (
    JSON_MAX_BYTES,
    BatchClient,
    ResultLimits,
    UnreadableLine,
)
from thoughtdesk.core.settings.logs import redact, register_secret

#: The providers' limits per batch (requests, bytes of the input): a run is cut in chunks within them.
OPENAI_LIMITS = (50_000, 200 * 1024 * 1024)
ANTHROPIC_LIMITS = (100_000, 256 * 1024 * 1024)
#: Hours a provider has to answer a batch.
BATCH_WINDOW_HOURS = 24
#: States after which a batch changes no more (OpenAI's statuses; Anthropic's ``ended``).
FINAL_STATES = frozenset({"completed", "failed", "expired", "cancelled", "ended"})
#: How far around the submission time a batch left without its id by a kill is looked for
#: (clocks differ; a large upload takes minutes).
FIND_BEFORE = timedelta(minutes=10)
FIND_AFTER = timedelta(minutes=15)


@dataclass(frozen=True, slots=True)
class BatchState:
    """What the provider says about a batch: its ``status`` (the provider's word), request
    counts by outcome, and where its results are (``output``/``errors``: OpenAI file ids;
    ``results_url``: Anthropic)."""

    remote_id: str
    status: str
    counts: dict[str, int] = field(default_factory=dict)
    output: str | None = None
    errors: str | None = None
    results_url: str | None = None
    message: str | None = None  # why a batch failed as a whole (OpenAI's ``errors``)
    note: str | None = None  # something the user should know (a results_url on another host)

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATES


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One request's outcome: ``body`` (the answer as the normal endpoint gives it, and its
    JSON text) when it succeeded, else ``error`` (why: errored, expired, cancelled)."""

    custom_id: str
    body: dict[str, Any] | None
    raw: str
    error: str | None = None
    expired: bool = False
    #: The number of a results line that could not be read (``error`` says why), else None.
    line: int | None = None


@dataclass(frozen=True, slots=True)
class BatchLookup:
    """A batch a kill may have left without its id (the provider created it, its id was never
    stored): OpenAI's carry ``marker`` in their metadata; an Anthropic one is recognised by its
    size, its creation time (around ``submitted``, ISO UTC) and, once it ended, its custom ids,
    which must be one of ``custom_ids`` exactly. Batches in ``known`` are the library's own."""

    marker: str
    custom_ids: tuple[frozenset[str], ...]
    submitted: str
    known: frozenset[str] = frozenset()
    limits: ResultLimits = ResultLimits(JSON_MAX_BYTES, JSON_MAX_BYTES)

    @property
    def size(self) -> int:
        return len(self.custom_ids[0]) if self.custom_ids else 0


@dataclass(frozen=True, slots=True)
class BatchFound:
    """What :meth:`find` found: the batch to adopt (``remote_id``), or none yet while batches
    that may be it (``waiting``: same size, created then) are still processing."""

    remote_id: str | None
    file_id: str = ""
    waiting: tuple[str, ...] = ()


def _time(value: Any) -> datetime | None:
    """An RFC 3339 time (``2024-08-20T18:37:24.100435Z``) as an aware datetime, else None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _origin(url: str) -> tuple[str, str, int | None]:
    parsed = httpx.URL(url)
    return parsed.scheme, parsed.host.lower(), parsed.port


def _object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (result lines are untrusted)."""
    return value if isinstance(value, dict) else {}


def _counts(data: Any) -> dict[str, int]:
    return {str(k): v for k, v in data.items() if isinstance(v, int)} if isinstance(data, dict) else {}


def _openai_result(row: dict[str, Any]) -> BatchResult:
    """One line of an OpenAI output or error file."""
    custom_id = str(row.get("custom_id") or "")
    response = _object(row.get("response"))
    body = response.get("body")
    status = response.get("status_code")
    error = row.get("error")
    if isinstance(body, dict) and status == 200 and not error:
        return BatchResult(custom_id, body, json.dumps(body, ensure_ascii=False))
    if isinstance(error, dict):
        why = f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
    elif isinstance(body, dict) and isinstance(body.get("error"), dict):
        why = f"HTTP {status}: {body['error'].get('message') or body['error']}"
    else:
        why = f"HTTP {status}"
    code = error.get("code") if isinstance(error, dict) else None
    return BatchResult(
        custom_id, None, json.dumps(row, ensure_ascii=False), error=why[:300], expired=code == "batch_expired"
    )


def _anthropic_result(row: dict[str, Any]) -> BatchResult:
    """One line of an Anthropic results file."""
    custom_id = str(row.get("custom_id") or "")
    result = _object(row.get("result"))
    kind = result.get("type")
    message = result.get("message")
    if kind == "succeeded" and isinstance(message, dict):
        return BatchResult(custom_id, message, json.dumps(message, ensure_ascii=False))
    error = result.get("error")
    detail = ""
    if isinstance(error, dict):
        inner = _object(error.get("error")) or error
        detail = f": {inner.get('message') or inner.get('type') or ''}"
    return BatchResult(
        custom_id,
        None,
        json.dumps(row, ensure_ascii=False),
        error=f"{kind or 'unknown result'}{detail}"[:300],
        expired=kind == "expired",
    )


def _unreadable_result(line: UnreadableLine) -> BatchResult:
    """A results line that could not be read, for the request it seems to name (if any)."""
    return BatchResult(
        line.custom_id,
        None,
        line.raw,
        error=f"line {line.number} of the batch results could not be read ({line.why})",
        line=line.number,
    )


def _request_count(counts: dict[str, int]) -> int:
    """How many requests an Anthropic batch holds (its counts by outcome added up)."""
    return sum(counts.get(k, 0) for k in ("processing", "succeeded", "errored", "canceled", "expired"))


class OpenAIBatches(BatchClient):
    """OpenAI's Batch API at ``base_url`` (``https://api.openai.com/v1``) for ``endpoint``
    (``/v1/chat/completions`` or ``/v1/completions``)."""

    provider = "openai"
    limits = OPENAI_LIMITS

    def __init__(self, base_url: str, api_key: str | None, client: httpx.AsyncClient | None = None) -> None:
        super().__init__(base_url, client)
        self._api_key = api_key
        register_secret(api_key)  # redacted wherever a server echoes it

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIBatches({self.base_url!r})"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    @staticmethod
    def line(custom_id: str, url: str, body: dict[str, Any]) -> str:
        """One input line: ``url`` is the endpoint's path, e.g. ``/v1/chat/completions``."""
        return json.dumps({"custom_id": custom_id, "method": "POST", "url": url, "body": body}, ensure_ascii=False)

    async def submit(self, lines: list[str], endpoint: str, marker: str = "") -> tuple[str, str]:
        """Upload the JSONL and create the batch, tagged with ``marker`` in its metadata (so
        :meth:`find` can find it again); returns (batch id, input file id)."""
        content = ("\n".join(lines) + "\n").encode("utf-8")
        uploaded = await self._json(
            "POST",
            f"{self.base_url}/files",
            data={"purpose": "batch"},
            files={"file": ("thoughtdesk-batch.jsonl", content, "application/jsonl")},
        )
        file_id = uploaded.get("id")
        if not isinstance(file_id, str):
            raise BadResponse(self.provider, "the file upload answered without an id", raw_body=json.dumps(uploaded))
        created = await self._json(
            "POST",
            f"{self.base_url}/batches",
            json={
                "input_file_id": file_id,
                "endpoint": endpoint,
                "completion_window": f"{BATCH_WINDOW_HOURS}h",
                **({"metadata": {"thoughtdesk": marker}} if marker else {}),
            },
        )
        batch_id = created.get("id")
        if not isinstance(batch_id, str):
            raise BadResponse(self.provider, "the batch was created without an id", raw_body=json.dumps(created))
        return batch_id, file_id

    async def find(self, lookup: BatchLookup, pages: int = 5) -> BatchFound | None:
        """The batch created with ``lookup.marker`` in its metadata, looked for among the
        account's newest batches (``pages`` pages of 100); None when there is none."""
        after: str | None = None
        for _ in range(pages):
            params = {"limit": "100", **({"after": after} if after else {})}
            data = await self._json("GET", f"{self.base_url}/batches", params=params)
            rows = [row for row in data.get("data") or [] if isinstance(row, dict)]
            for row in rows:
                ident = row.get("id")
                if (
                    _object(row.get("metadata")).get("thoughtdesk") == lookup.marker
                    and isinstance(ident, str)
                    and ident not in lookup.known
                ):
                    return BatchFound(ident, str(row.get("input_file_id") or ""))
            if not data.get("has_more") or not rows or not isinstance(rows[-1].get("id"), str):
                return None
            after = rows[-1]["id"]
        return None

    async def state(self, remote_id: str) -> BatchState:
        """The batch's status, counts and result files."""
        data = await self._json("GET", f"{self.base_url}/batches/{remote_id}")
        errors = data.get("errors")
        message = None
        if isinstance(errors, dict) and isinstance(errors.get("data"), list) and errors["data"]:
            first = errors["data"][0]
            message = str(first.get("message") if isinstance(first, dict) else first)[:300]
        return BatchState(
            remote_id=remote_id,
            status=str(data.get("status") or "unknown"),
            counts=_counts(data.get("request_counts")),
            output=data.get("output_file_id") if isinstance(data.get("output_file_id"), str) else None,
            errors=data.get("error_file_id") if isinstance(data.get("error_file_id"), str) else None,
            message=message,
        )

    async def results(self, state: BatchState, limits: ResultLimits) -> AsyncIterator[BatchResult]:
        """Every answered or failed request of a final batch (output file, then error file),
        each file streamed within ``limits``."""
        for file_id in (state.output, state.errors):
            if file_id is not None:
                async for row in self._lines(f"{self.base_url}/files/{file_id}/content", limits):
                    yield _openai_result(row) if isinstance(row, dict) else _unreadable_result(row)

    async def cancel(self, remote_id: str) -> None:
        await self._json("POST", f"{self.base_url}/batches/{remote_id}/cancel")


class AnthropicBatches(BatchClient):
    """Anthropic's Message Batches at ``base_url`` (``https://api.anthropic.com``)."""

    provider = "anthropic"
    limits = ANTHROPIC_LIMITS

    def __init__(
        self,
        api_key: str | None,
        base_url: str = "https://api.anthropic.com",
        client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(base_url, client)
        self._api_key = api_key
        register_secret(api_key)  # redacted wherever a server echoes it

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicBatches({self.base_url!r})"

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    @staticmethod
    def line(custom_id: str, url: str, body: dict[str, Any]) -> str:
        """One request of the batch as JSON (``url`` is unused: every request is a message)."""
        return json.dumps({"custom_id": custom_id, "params": body}, ensure_ascii=False)

    async def submit(self, lines: list[str], endpoint: str, marker: str = "") -> tuple[str, str]:
        """Create the batch from its requests; returns (batch id, ""). Message batches carry no
        metadata (``marker`` is unused): :meth:`find` knows a batch by its custom ids."""
        body = '{"requests": [' + ",".join(lines) + "]}"
        created = await self._json(
            "POST",
            f"{self.base_url}/v1/messages/batches",
            content=body.encode("utf-8"),
            extra_headers={"content-type": "application/json"},
        )
        batch_id = created.get("id")
        if not isinstance(batch_id, str):
            raise BadResponse(self.provider, "the batch was created without an id", raw_body=json.dumps(created))
        return batch_id, ""

    async def find(self, lookup: BatchLookup, pages: int = 10) -> BatchFound | None:
        """The batch ``lookup`` describes, among the workspace's batches (newest first, ``pages``
        pages of 100): one of its size created around its submission time whose custom ids,
        read from its results once it ended, are exactly the lookup's. Batches of that size and
        time still processing cannot be told apart yet: they are returned as ``waiting``
        (looked at again when they end); None when there is no candidate at all."""
        submitted = _time(lookup.submitted)
        if submitted is None or not lookup.size:
            return None
        earliest, latest = submitted - FIND_BEFORE, submitted + FIND_AFTER
        waiting: list[str] = []
        after: str | None = None
        for _ in range(pages):
            params = {"limit": "100", **({"after_id": after} if after else {})}
            data = await self._json("GET", f"{self.base_url}/v1/messages/batches", params=params)
            rows = [row for row in data.get("data") or [] if isinstance(row, dict)]
            for row in rows:
                ident, created = row.get("id"), _time(row.get("created_at"))
                if created is not None and created < earliest:  # newest first: the rest are older still
                    return BatchFound(None, waiting=tuple(waiting)) if waiting else None
                if not isinstance(ident, str) or created is None or created > latest or ident in lookup.known:
                    continue
                if _request_count(_counts(row.get("request_counts"))) != lookup.size:
                    continue
                if row.get("processing_status") != "ended":
                    waiting.append(ident)
                    continue
                state = BatchState(ident, "ended", results_url=row.get("results_url"))
                try:
                    ids = frozenset([result.custom_id async for result in self.results(state, lookup.limits)])
                except BackendError:
                    continue  # results ours could not have (too large, not JSONL): not ours
                if ids in lookup.custom_ids:
                    return BatchFound(ident)
            last = data.get("last_id") or (rows[-1].get("id") if rows else None)
            if not data.get("has_more") or not isinstance(last, str):
                break
            after = last
        return BatchFound(None, waiting=tuple(waiting)) if waiting else None

    def _own_results_url(self, remote_id: str, given: Any) -> tuple[str, str | None]:
        """Where to read a batch's results, and a note when the provider named another host:
        the key goes only to the API's own host, so its own results endpoint is read instead."""
        own = f"{self.base_url}/v1/messages/batches/{remote_id}/results"
        if not isinstance(given, str) or not given:
            return own, None
        try:
            same = _origin(given) == _origin(self.base_url)
        except httpx.InvalidURL:
            same = False
        if same:
            return given, None
        shown = "".join(c if c.isprintable() else "?" for c in redact(given)[:200])
        return own, (
            f"the provider gave {shown} as the results' address, not on {self.base_url}: the API key is "
            f"not sent there; the results are read from {own}"
        )

    async def state(self, remote_id: str) -> BatchState:
        data = await self._json("GET", f"{self.base_url}/v1/messages/batches/{remote_id}")
        status = str(data.get("processing_status") or "unknown")
        url, note = self._own_results_url(remote_id, data.get("results_url"))
        return BatchState(
            remote_id=remote_id,
            status=status,
            counts=_counts(data.get("request_counts")),
            results_url=url,
            note=note,
        )

    async def results(self, state: BatchState, limits: ResultLimits) -> AsyncIterator[BatchResult]:
        """Every request's outcome, streamed within ``limits`` from the API's own host."""
        url, _ = self._own_results_url(state.remote_id, state.results_url)  # never the key to another host
        async for row in self._lines(url, limits):
            yield _anthropic_result(row) if isinstance(row, dict) else _unreadable_result(row)

    async def cancel(self, remote_id: str) -> None:
        await self._json("POST", f"{self.base_url}/v1/messages/batches/{remote_id}/cancel")


__all__ = [
    "ANTHROPIC_LIMITS",
    "BATCH_WINDOW_HOURS",
    "JSON_MAX_BYTES",
    "OPENAI_LIMITS",
    "AnthropicBatches",
    "BatchClient",
    "BatchFound",
    "BatchLookup",
    "BatchResult",
    "BatchState",
    "OpenAIBatches",
    "ResultLimits",
]
