"""Posting JSON to a provider with httpx and turning every failure into a typed BackendError."""

from __future__ import annotations

import asyncio
import email.utils
import importlib.util
import json
import sys
import time
from dataclasses import dataclass
from typing import Any

import httpx

from thoughtdesk.core.generation.backends.base import (
    AuthError,
    BackendError,
    BadRequest,
    BadResponse,
    ConnectionLost,
    ModelNotFound,
    RateLimited,
    ServerDown,
    ServerError,
    Timeout,
)
from thoughtdesk.core.settings.logs import redact
from thoughtdesk.core.settings.network import require_network

# httpcore tries `import sniffio` at every lock it takes (about ten a request); without sniffio
# installed each try searches the whole import path again (~0.7 ms). A None entry in
# sys.modules makes the failed import immediate; it changes nothing else, since nothing could
# import the missing module anyway.
if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
    sys.modules["sniffio"] = None  # type: ignore[assignment]  # None marks a module known to be absent

_MODEL_MISSING_WORDS = (
    "model_not_found",
    "not_found_error",
    "does not exist",
    "unknown model",
    "model not found",
    "no such model",
)


#: The most bytes an answer may have, whatever the request: beyond this a server is broken or
#: hostile (an endless body reached MemoryError before this cap).
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
#: Room for the envelope (ids, usage, headers of the JSON) and for log-probs or echoed prompts.
_RESPONSE_BASE_BYTES = 1024 * 1024
#: Bytes per generated token allowed: a token is a few characters, but JSON may escape each
#: character as \\uXXXX (6 bytes) and a choice may carry per-token log-probs.
_BYTES_PER_TOKEN = 256


def response_byte_limit(max_tokens: int | None, n: int = 1) -> int:
    """How many body bytes an answer of ``n`` choices of at most ``max_tokens`` tokens may
    have: a generous bound (1 MiB plus 256 bytes per token) capped at 64 MiB."""
    tokens = max(1, max_tokens or 4096) * max(1, n)
    return min(MAX_RESPONSE_BYTES, _RESPONSE_BASE_BYTES + _BYTES_PER_TOKEN * tokens)


def valid_token_count(value: Any) -> int | None:
    """A provider's token count if it is a plausible one (a non-negative int), else None: a
    negative or non-integer figure is not stored as if it were true."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
        return value
    return None


@dataclass(slots=True)
class HttpResult:
    """A successful (2xx) answer: its parsed JSON, the body text and the seconds it took."""

    data: Any
    body: str
    latency: float


def new_client(max_connections: int = 100) -> httpx.AsyncClient:
    """An AsyncClient with enough pooled connections for concurrent requests.

    Timeouts are set per request (see :func:`post_json`); no proxy or netrc is read from the
    environment so that a test server on 127.0.0.1 is reached directly.
    """
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    return httpx.AsyncClient(limits=limits, trust_env=False)


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait from ``retry-after-ms``, ``Retry-After`` (seconds or HTTP date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


async def _read_limited(response: httpx.Response, max_bytes: int, *, provider: str, url: str) -> bytes:
    """The body, read until ``max_bytes``; a longer one fails without being read further."""
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(provider, url, max_bytes, f"it announces {int(declared):,} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            head = b"".join(chunks)[:2000].decode("utf-8", "replace")
            raise _too_large(provider, url, max_bytes, "it went on past that", raw_body=head)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(provider: str, url: str, max_bytes: int, why: str, raw_body: str | None = None) -> BadResponse:
    return BadResponse(
        provider,
        f"the answer from {url} is larger than the {max_bytes:,} bytes allowed for this request ({why}); "
        "reading stopped there",
        hint="the server is misbehaving or the request asks for far more tokens than it sets as max tokens; "
        "the start of the answer is kept with the failed request",
        raw_body=raw_body,
    )


def error_text(body: str) -> str:
    """The provider's own error message from a JSON error body, else the start of the body."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:200]
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:300]
        if isinstance(error, str):
            return error[:300]
        if isinstance(data.get("detail"), str):
            return data["detail"][:300]
    return body.strip()[:200]


def error_for_status(
    provider: str, status: int, body: str, headers: httpx.Headers, *, url: str, model: str
) -> BackendError:
    """The typed error for a non-2xx answer, worded with what the user can do."""
    detail = error_text(body)
    retry_after = parse_retry_after(headers)
    said = f" (server said: {detail})" if detail else ""

    def error(kind: type[BackendError], message: str, hint: str) -> BackendError:
        return kind(provider, message, hint=hint, status=status, raw_body=body, retry_after=retry_after)

    if status in (401, 403):
        return error(
            AuthError,
            f"the API key was refused (HTTP {status}){said}",
            f"check the {provider} API key in Edit > Settings > Providers (it is kept in the system keyring)",
        )
    if status == 429:
        return error(
            RateLimited,
            f"rate limit reached (HTTP 429){said}",
            "requests are retried after the wait the server asks for; lower "
            "the concurrency or the requests per minute if it persists",
        )
    lowered = body.lower()
    if status == 404 or (status in (400, 422) and any(w in lowered for w in _MODEL_MISSING_WORDS)):
        return error(
            ModelNotFound,
            f"model {model!r} was not found (HTTP {status}) at {url}{said}",
            "check the model name, and that the base URL is right (OpenAI-compatible servers usually end in /v1)",
        )
    if status == 503 and retry_after is not None:
        return error(
            RateLimited,
            f"the server is busy (HTTP 503){said}",
            "retried after the wait the server asks for",
        )
    if status >= 500:
        return error(
            ServerError,
            f"server error (HTTP {status}){said}",
            "retried automatically; if it persists, check the server's logs or the provider's status page",
        )
    return error(
        BadRequest,
        f"the request was rejected (HTTP {status}){said}",
        "check the model's parameters (max tokens, n, stop sequences)",
    )


async def post_json(
    client: httpx.AsyncClient,
    *,
    provider: str,
    url: str,
    payload: dict[str, Any],
    headers: dict[str, str],
    timeout: float,
    model: str,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> HttpResult:
    """POST ``payload`` as JSON and return the parsed 2xx answer; raise BackendError otherwise.

    ``timeout`` bounds the whole exchange in seconds, including a server that sends its body
    slowly; httpx's own per-read timeout alone would not. ``max_bytes`` bounds the body: reading
    stops there and the request fails with :class:`BadResponse` (see :func:`response_byte_limit`).
    """
    require_network(f"the {provider} API", url)  # offline mode: say so instead of trying
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            request = client.build_request("POST", url, json=payload, headers=headers, timeout=httpx.Timeout(timeout))
            response = await client.send(request, stream=True)
            try:
                body_bytes = await _read_limited(response, max_bytes, provider=provider, url=url)
            finally:
                await response.aclose()
    except TimeoutError:
        raise Timeout(
            provider,
            f"no complete answer within {timeout:g} s from {url}",
            hint="retried automatically; raise the timeout for slow models",
        ) from None
    except httpx.TimeoutException:
        raise Timeout(
            provider,
            f"no complete answer within {timeout:g} s from {url}",
            hint="retried automatically; raise the timeout for slow models",
        ) from None
    except httpx.ConnectError as error:
        raise ServerDown(
            provider,
            f"cannot connect to {url} ({redact(str(error))})",
            hint="start the server, or check the base URL and the network",
        ) from None
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as error:
        raise ConnectionLost(
            provider,
            f"the connection to {url} broke before the answer was complete ({type(error).__name__}: {redact(str(error))})",
            hint="retried automatically",
        ) from None
    except httpx.HTTPError as error:
        raise ServerDown(
            provider,
            # httpx quotes a header it refused, which may be the Authorization header: redacted.
            f"request to {url} failed ({type(error).__name__}: {redact(str(error))})",
            hint="check the base URL and the network",
        ) from None
    latency = time.perf_counter() - started
    body = body_bytes.decode(response.encoding or "utf-8", errors="replace")
    if not 200 <= response.status_code < 300:
        raise error_for_status(provider, response.status_code, body, response.headers, url=url, model=model)
    try:
        data = json.loads(body)
    except ValueError as error:
        raise BadResponse(
            provider,
            f"the answer from {url} is not valid JSON ({error})",
            hint="the raw answer is kept with the failed request; check that the "
            "base URL points at the API, not a web page",
            raw_body=body,
            status=response.status_code,
        ) from None
    return HttpResult(data=data, body=body, latency=latency)
