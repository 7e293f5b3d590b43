"""The transport under the providers' batch clients (:mod:`.batches`): JSON over httpx with the
provider's typed errors, every answer read within a byte limit, and JSONL results streamed line
by line within limits derived from the batch (:class:`ResultLimits`): a provider or base URL
that sends more (an endless or enormous results file) is stopped there with a message saying
what the limit came from, instead of filling memory.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from thoughtdesk.core.generation.backends.base import BadRequest, BadResponse, ServerDown, Timeout
from thoughtdesk.core.generation.backends.http import error_for_status, new_client, parse_json
from thoughtdesk.core.generation.backends.response_cap import response_byte_limit
from thoughtdesk.core.settings.logs import redact
from thoughtdesk.core.settings.network import require_network

#: The most bytes of an answer that is not a batch's results (a state, a list, an error).
JSON_MAX_BYTES = 16 * 1024 * 1024
#: A batch's results may have this many bytes per request (its result line's envelope: ids,
#: usage, an error) plus :data:`RESULT_BYTES_PER_TOKEN` per token the request may generate.
RESULT_BASE_BYTES = 16 * 1024
RESULT_BYTES_PER_TOKEN = 32


@dataclass(frozen=True, slots=True)
class ResultLimits:
    """How many bytes a batch's results may have in all (``total``) and per result line
    (``line``), and what that was derived from (``requests``, ``max_tokens``), to be said
    when a provider sends more."""

    total: int
    line: int
    requests: int = 0
    max_tokens: int = 0

    @classmethod
    def for_batch(cls, requests: int, max_tokens: int) -> ResultLimits:
        """Limits for ``requests`` answers of at most ``max_tokens`` tokens: per line what one
        direct answer may have (:func:`~.response_cap.response_byte_limit`, plus the line's envelope);
        in all, :data:`RESULT_BASE_BYTES` per request plus :data:`RESULT_BYTES_PER_TOKEN` per
        token, many times what such answers take (about 1.5 KB for 256 tokens)."""
        tokens = max(1, max_tokens)
        return cls(
            total=1024 * 1024 + max(1, requests) * (RESULT_BASE_BYTES + RESULT_BYTES_PER_TOKEN * tokens),
            line=response_byte_limit(tokens) + RESULT_BASE_BYTES,
            requests=requests,
            max_tokens=tokens,
        )


class BatchClient:
    """Common transport: JSON over httpx with the provider's typed errors, every answer read
    within a byte limit."""

    provider = "batch"
    limits: tuple[int, int] = (0, 0)  # (requests, bytes) per batch: each provider sets its own

    def __init__(self, base_url: str, client: httpx.AsyncClient | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = client or new_client(8)
        self._owns_client = client is None

    def _headers(self) -> dict[str, str]:
        return {}

    async def _open(
        self, method: str, url: str, *, extra_headers: dict[str, str] | None = None, **kwargs: Any
    ) -> httpx.Response:
        """The answer with its body not read yet (close it); errors for non-2xx answers."""
        require_network(f"the {self.provider} batch API", url)
        headers = {**self._headers(), **(extra_headers or {})}
        try:
            request = self._client.build_request(method, url, headers=headers, timeout=300.0, **kwargs)
            response = await self._client.send(request, stream=True)
        except httpx.TimeoutException:
            raise Timeout(self.provider, f"no answer within 300 s from {url}", hint="try again later") from None
        except httpx.HTTPError as error:
            raise ServerDown(
                self.provider,
                f"request to {url} failed ({type(error).__name__}: {redact(str(error))})",
                hint="check the base URL and the network; the batch is kept and polled again on resume",
            ) from None
        if 200 <= response.status_code < 300:
            return response
        try:
            text = (await self._read(response, url, JSON_MAX_BYTES)).decode("utf-8", "replace")
        finally:
            await response.aclose()
        if response.status_code == 404:
            raise BadRequest(
                self.provider,
                f"{url} was not found (HTTP 404)",
                hint="check the base URL; a batch or file the provider deleted cannot be fetched any more",
                status=404,
                raw_body=text,
            )
        raise error_for_status(self.provider, response.status_code, text, response.headers, url=url, model="(batch)")

    async def _read(self, response: httpx.Response, url: str, max_bytes: int) -> bytes:
        """The body, at most ``max_bytes`` (else BadResponse, reading stopped there)."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise self._too_large(url, f"it announces {int(declared):,} bytes, more than the {max_bytes:,} allowed")
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise self._too_large(url, f"it went on past the {max_bytes:,} bytes allowed")
                chunks.append(chunk)
        except httpx.HTTPError as error:
            raise ServerDown(
                self.provider,
                f"the answer from {url} broke off ({type(error).__name__}: {redact(str(error))})",
                hint="the batch is kept and polled again on resume",
            ) from None
        return b"".join(chunks)

    def _too_large(self, url: str, why: str) -> BadResponse:
        return BadResponse(
            self.provider,
            f"the answer from {url} is too large ({why}); reading stopped there",
            hint="the provider or the base URL is misbehaving; the batch is kept and polled again on resume",
        )

    async def _json(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        response = await self._open(method, url, **kwargs)
        try:
            raw = await self._read(response, url, JSON_MAX_BYTES)
        finally:
            await response.aclose()
        try:
            data = parse_json(raw)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise BadResponse(
                self.provider,
                f"the answer from {url} is not a JSON object",
                raw_body=raw[:2000].decode("utf-8", "replace"),
            )
        return data

    async def _lines(self, url: str, limits: ResultLimits) -> AsyncIterator[dict[str, Any] | UnreadableLine]:
        """The JSON objects of a JSONL answer, streamed: at most ``limits.total`` bytes in all
        and ``limits.line`` per line, else BadResponse saying what the limit came from. A line
        that is not a JSON object is yielded as an :class:`UnreadableLine` (its number and why),
        and the lines after it are read on (one bad line once stopped every later result)."""
        response = await self._open("GET", url)
        try:
            size = number = 0
            pending = bytearray()
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                start = 0
                while (end := chunk.find(b"\n", start)) != -1:
                    pending += chunk[start:end]
                    start = end + 1
                    number += 1
                    self._check_line(url, limits, pending, number)
                    row = _jsonl_row(bytes(pending), number)
                    pending.clear()
                    if row is not None:
                        yield row
                pending += chunk[start:]
                self._check_line(url, limits, pending, number + 1)  # a line too long is said as such
                if size > limits.total:
                    raise self._results_too_large(url, limits, f"more than the {limits.total:,} bytes allowed in all")
            if row := _jsonl_row(bytes(pending), number + 1):
                yield row
        except httpx.HTTPError as error:
            raise ServerDown(
                self.provider,
                f"the batch results from {url} broke off ({type(error).__name__}: {redact(str(error))})",
                hint="the batch is kept; its results are fetched again on resume",
            ) from None
        finally:
            await response.aclose()

    def _check_line(self, url: str, limits: ResultLimits, line: bytearray, number: int) -> None:
        if len(line) > limits.line:
            raise self._results_too_large(
                url, limits, f"line {number} is longer than the {limits.line:,} bytes one result may have"
            )

    def _results_too_large(self, url: str, limits: ResultLimits, why: str) -> BadResponse:
        return BadResponse(
            self.provider,
            f"the batch results from {url} are larger than {limits.requests:,} answers of at most "
            f"{limits.max_tokens:,} tokens can be ({why}); reading stopped there",
            hint="the provider or the base URL is misbehaving; results read before that are stored, the "
            "batch is kept and its results fetched again on resume",
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


#: A custom id as it appears in a line that cannot be read as JSON (to name its request).
_CUSTOM_ID_IN_LINE = re.compile(rb'"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,64})"')


@dataclass(frozen=True, slots=True)
class UnreadableLine:
    """A line of a JSONL answer that is not a JSON object: its ``number`` (from 1), its start
    (``raw``), ``why`` it cannot be read, and the custom id it seems to carry ('' when none)."""

    number: int
    raw: str
    why: str
    custom_id: str


def _jsonl_row(line: bytes, number: int) -> dict[str, Any] | UnreadableLine | None:
    """The JSON object of one JSONL line (None for a blank one); an :class:`UnreadableLine`
    for a line that is not one (invalid JSON, another value, nested too deeply)."""
    if not line.strip():
        return None
    try:
        row = parse_json(line)
    except ValueError as error:
        why = f"not valid JSON: {error}"
    else:
        if isinstance(row, dict):
            return row
        why = "not a JSON object"
    found = _CUSTOM_ID_IN_LINE.search(line[:4096])
    return UnreadableLine(
        number,
        line[:2000].decode("utf-8", "replace"),
        why[:200],
        found.group(1).decode("ascii") if found else "",
    )


__all__ = ["JSON_MAX_BYTES", "BatchClient", "ResultLimits", "UnreadableLine"]
