"""Posting JSON to a provider with httpx and turning every failure into a typed BackendError."""

from __future__ import annotations

import asyncio
import email.utils
import json
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
from thoughtdesk.core.settings.network import require_network

_MODEL_MISSING_WORDS = (
    "model_not_found",
    "not_found_error",
    "does not exist",
    "unknown model",
    "model not found",
    "no such model",
)


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
) -> HttpResult:
    """POST ``payload`` as JSON and return the parsed 2xx answer; raise BackendError otherwise.

    ``timeout`` bounds the whole exchange in seconds, including a server that sends its body
    slowly; httpx's own per-read timeout alone would not.
    """
    require_network(f"the {provider} API", url)  # offline mode: say so instead of trying
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            response = await client.post(url, json=payload, headers=headers, timeout=httpx.Timeout(timeout))
            body_bytes = await response.aread()
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
            f"cannot connect to {url} ({error})",
            hint="start the server, or check the base URL and the network",
        ) from None
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as error:
        raise ConnectionLost(
            provider,
            f"the connection to {url} broke before the answer was complete ({type(error).__name__}: {error})",
            hint="retried automatically",
        ) from None
    except httpx.HTTPError as error:
        raise ServerDown(
            provider,
            f"request to {url} failed ({type(error).__name__}: {error})",
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
