"""Providers' batch APIs: OpenAI's Batch API (a JSONL file uploaded to ``/v1/files``, then
``/v1/batches``) and Anthropic's Message Batches (``/v1/messages/batches``).

A batch is answered within 24 hours at about half the price. These clients only talk to the
APIs: submit a list of request bodies under custom ids, read a batch's state, fetch its results
(one :class:`BatchResult` per custom id), cancel. The run engine
(:mod:`thoughtdesk.core.generation.runs.batch`) stores ids and results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from thoughtdesk.core.generation.backends.anthropic import ANTHROPIC_VERSION
from thoughtdesk.core.generation.backends.base import BadRequest, BadResponse, ServerDown, Timeout
from thoughtdesk.core.generation.backends.http import error_for_status, new_client
from thoughtdesk.core.settings.logs import redact, register_secret
from thoughtdesk.core.settings.network import require_network

#: The providers' limits per batch (requests, bytes of the input): a run is cut in chunks within them.
OPENAI_LIMITS = (50_000, 200 * 1024 * 1024)
ANTHROPIC_LIMITS = (100_000, 256 * 1024 * 1024)
#: Hours a provider has to answer a batch.
BATCH_WINDOW_HOURS = 24
#: States after which a batch changes no more (OpenAI's statuses; Anthropic's ``ended``).
FINAL_STATES = frozenset({"completed", "failed", "expired", "cancelled", "ended"})


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


class BatchClient:
    """Common transport: JSON over httpx with the provider's typed errors."""

    provider = "batch"
    limits: tuple[int, int] = OPENAI_LIMITS

    def __init__(self, base_url: str, client: httpx.AsyncClient | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = client or new_client(8)
        self._owns_client = client is None

    def _headers(self) -> dict[str, str]:
        return {}

    async def _send(
        self, method: str, url: str, *, extra_headers: dict[str, str] | None = None, **kwargs: Any
    ) -> httpx.Response:
        require_network(f"the {self.provider} batch API", url)
        headers = {**self._headers(), **(extra_headers or {})}
        try:
            response = await self._client.request(method, url, headers=headers, timeout=300.0, **kwargs)
        except httpx.TimeoutException:
            raise Timeout(self.provider, f"no answer within 300 s from {url}", hint="try again later") from None
        except httpx.HTTPError as error:
            raise ServerDown(
                self.provider,
                f"request to {url} failed ({type(error).__name__}: {redact(str(error))})",
                hint="check the base URL and the network; the batch is kept and polled again on resume",
            ) from None
        if response.status_code == 404:
            raise BadRequest(
                self.provider,
                f"{url} was not found (HTTP 404)",
                hint="check the base URL; a batch or file the provider deleted cannot be fetched any more",
                status=404,
                raw_body=response.text,
            )
        if not 200 <= response.status_code < 300:
            raise error_for_status(
                self.provider, response.status_code, response.text, response.headers, url=url, model="(batch)"
            )
        return response

    async def _json(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        response = await self._send(method, url, **kwargs)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise BadResponse(self.provider, f"the answer from {url} is not a JSON object", raw_body=response.text)
        return data

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


def _jsonl(text: str, provider: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL text; a line that is not one is an error naming its number."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict):
            raise BadResponse(provider, f"line {number} of the batch results is not a JSON object", raw_body=line)
        rows.append(row)
    return rows


def _object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (result lines are untrusted)."""
    return value if isinstance(value, dict) else {}


def _counts(data: Any) -> dict[str, int]:
    return {str(k): v for k, v in data.items() if isinstance(v, int)} if isinstance(data, dict) else {}


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

    async def find(self, marker: str, pages: int = 5) -> tuple[str, str] | None:
        """(batch id, input file id) of the batch created with ``marker``, looked for among the
        account's newest batches (``pages`` pages of 100); None when there is none."""
        after: str | None = None
        for _ in range(pages):
            params = {"limit": "100", **({"after": after} if after else {})}
            data = await self._json("GET", f"{self.base_url}/batches", params=params)
            rows = [row for row in data.get("data") or [] if isinstance(row, dict)]
            for row in rows:
                if _object(row.get("metadata")).get("thoughtdesk") == marker and isinstance(row.get("id"), str):
                    return row["id"], str(row.get("input_file_id") or "")
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

    async def results(self, state: BatchState) -> list[BatchResult]:
        """Every answered or failed request of a final batch (output file, then error file)."""
        results: list[BatchResult] = []
        for file_id in (state.output, state.errors):
            if file_id is None:
                continue
            text = (await self._send("GET", f"{self.base_url}/files/{file_id}/content")).text
            for row in _jsonl(text, self.provider):
                custom_id = str(row.get("custom_id") or "")
                response = _object(row.get("response"))
                body = response.get("body")
                status = response.get("status_code")
                error = row.get("error")
                if isinstance(body, dict) and status == 200 and not error:
                    results.append(BatchResult(custom_id, body, json.dumps(body, ensure_ascii=False)))
                    continue
                if isinstance(error, dict):
                    why = f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
                elif isinstance(body, dict) and isinstance(body.get("error"), dict):
                    why = f"HTTP {status}: {body['error'].get('message') or body['error']}"
                else:
                    why = f"HTTP {status}"
                code = error.get("code") if isinstance(error, dict) else None
                results.append(
                    BatchResult(
                        custom_id,
                        None,
                        json.dumps(row, ensure_ascii=False),
                        error=why[:300],
                        expired=code == "batch_expired",
                    )
                )
        return results

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
        metadata, so ``marker`` is unused and :meth:`find` cannot find a batch again."""
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

    async def find(self, marker: str, pages: int = 5) -> tuple[str, str] | None:
        """Always None: a message batch cannot be told from another one of the account."""
        return None

    async def state(self, remote_id: str) -> BatchState:
        data = await self._json("GET", f"{self.base_url}/v1/messages/batches/{remote_id}")
        status = str(data.get("processing_status") or "unknown")
        url = data.get("results_url")
        return BatchState(
            remote_id=remote_id,
            status=status,
            counts=_counts(data.get("request_counts")),
            results_url=url if isinstance(url, str) else None,
        )

    async def results(self, state: BatchState) -> list[BatchResult]:
        url = state.results_url or f"{self.base_url}/v1/messages/batches/{state.remote_id}/results"
        text = (await self._send("GET", url)).text
        results: list[BatchResult] = []
        for row in _jsonl(text, self.provider):
            custom_id = str(row.get("custom_id") or "")
            result = _object(row.get("result"))
            kind = result.get("type")
            message = result.get("message")
            if kind == "succeeded" and isinstance(message, dict):
                results.append(BatchResult(custom_id, message, json.dumps(message, ensure_ascii=False)))
                continue
            error = result.get("error")
            detail = ""
            if isinstance(error, dict):
                inner = _object(error.get("error")) or error
                detail = f": {inner.get('message') or inner.get('type') or ''}"
            results.append(
                BatchResult(
                    custom_id,
                    None,
                    json.dumps(row, ensure_ascii=False),
                    error=f"{kind or 'unknown result'}{detail}"[:300],
                    expired=kind == "expired",
                )
            )
        return results

    async def cancel(self, remote_id: str) -> None:
        await self._json("POST", f"{self.base_url}/v1/messages/batches/{remote_id}/cancel")


__all__ = [
    "ANTHROPIC_LIMITS",
    "BATCH_WINDOW_HOURS",
    "OPENAI_LIMITS",
    "AnthropicBatches",
    "BatchClient",
    "BatchResult",
    "BatchState",
    "OpenAIBatches",
]
