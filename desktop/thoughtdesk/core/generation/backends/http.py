"""Posting JSON to a provider with httpx and turning every failure into a typed BackendError.

Clients come from :func:`new_client`, whose connections are spread over several small httpx
connection pools (:class:`ShardedTransport`): httpcore's pool does work proportional to its
number of connections on every request start and end (it checks each idle connection with a
system call), so one pool of 64 connections cost more client CPU per request than the requests'
own work, and concurrency 64 was slower than 32 (docs/runs.md, "Throughput"). Their sockets
run on asyncio directly (:mod:`.network`), not through anyio.
"""

from __future__ import annotations

import asyncio
import codecs
import email.utils
import functools
import json
import re
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from thoughtdesk.core.generation.backends.base import (
    AuthError,
    BackendError,
    BadRequest,
    BadResponse,
    ConnectionLost,
    ModelNotFound,
    RateLimited,
    RateLimitHeaders,
    ServerDown,
    ServerError,
    Timeout,
)
from thoughtdesk.core.generation.backends.direct import BodyTooLarge, DirectPool
from thoughtdesk.core.generation.backends.network import use_asyncio_network
from thoughtdesk.core.generation.backends.response_cap import response_cap_bytes
from thoughtdesk.core.settings.logs import redact
from thoughtdesk.core.settings.network import require_network
from thoughtdesk.core.settings.transport import environment_mounts, ssl_context

_MODEL_MISSING_WORDS = (
    "model_not_found",
    "not_found_error",
    "does not exist",
    "unknown model",
    "model not found",
    "no such model",
)


#: The deepest nesting of objects and arrays a provider's answer may have. Real answers (with
#: log-probs) nest under ten levels; a hostile or broken one nested ~1,000 deep broke every
#: later step (Python's recursion limit) and crashed each resume the same way (issue 23, point 8).
MAX_JSON_DEPTH = 100


def json_depth_problem(value: Any, limit: int = MAX_JSON_DEPTH) -> str | None:
    """What is wrong with parsed JSON ``value``'s nesting (deeper than ``limit`` objects and
    arrays), else None. Iterative: it cannot overflow the stack itself."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return f"it is nested more than {limit} levels deep"
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return None


def parse_json(text: str | bytes) -> Any:
    """``json.loads(text)``, refusing an answer nested deeper than MAX_JSON_DEPTH: ValueError
    saying so (as for any text that is not JSON), never RecursionError."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"it is nested more than {MAX_JSON_DEPTH} levels deep") from None
    problem = json_depth_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def valid_token_count(value: Any) -> int | None:
    """A provider's token count if it is a plausible one (a non-negative int), else None: a
    negative or non-integer figure is not stored as if it were true."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
        return value
    return None


@dataclass(slots=True)
class HttpResult:
    """A successful (2xx) answer: its parsed JSON, the body text, the seconds it took and the
    provider's rate-limit headers (None when it sent none)."""

    data: Any
    body: str
    latency: float
    rate_limits: RateLimitHeaders | None = None


#: Connections per httpx pool of a :class:`ShardedTransport`: small enough that a pool's
#: per-request bookkeeping stays cheap, large enough that few pools are needed.
CONNECTIONS_PER_SHARD = 8


class _CountedStream(httpx.AsyncByteStream):
    """A response body that tells its shard when it is closed (the connection is free again)."""

    def __init__(self, inner: httpx.AsyncByteStream, release: Any) -> None:
        self._inner = inner
        self._release = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            self._release()


class ShardedTransport(httpx.AsyncBaseTransport):
    """``max_connections`` spread over pools of at most :data:`CONNECTIONS_PER_SHARD`; each
    request goes to the pool with the fewest requests open. All pools share one TLS context
    (making one reads the CA bundle: ~0.1 s each). Keep-alive: every connection is kept. The
    pools' connections use :class:`~.network.AsyncioNetworkBackend`."""

    def __init__(
        self, max_connections: int = 100, *, verify: ssl.SSLContext | None = None, proxy: str | None = None
    ) -> None:
        shards = max(1, -(-max_connections // CONNECTIONS_PER_SHARD))
        per_shard = -(-max_connections // shards)
        limits = httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard)
        context = verify or ssl.create_default_context()
        self._pools = [
            httpx.AsyncHTTPTransport(verify=context, limits=limits, trust_env=False, proxy=proxy) for _ in range(shards)
        ]
        for pool in self._pools:
            use_asyncio_network(pool)
        self._open = [0] * shards

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        index = min(range(len(self._pools)), key=self._open.__getitem__)
        self._open[index] += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._open[index] -= 1

        try:
            response = await self._pools[index].handle_async_request(request)
        except BaseException:
            release()
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)  # what AsyncHTTPTransport returns
        response.stream = _CountedStream(response.stream, release)
        return response

    async def aclose(self) -> None:
        for pool in self._pools:
            await pool.aclose()


class ProviderClient(httpx.AsyncClient):
    """The httpx client :func:`new_client` makes, with a :class:`~.direct.DirectPool` that
    :func:`post_json` uses for model calls on connections without a proxy (``direct_for``)."""

    def __init__(self, max_connections: int, verify: ssl.SSLContext, *, proxied: bool, **options: Any) -> None:
        super().__init__(**options)
        self.direct = DirectPool(max_connections, verify)
        self._proxied = proxied

    def direct_for(self, url: str) -> DirectPool | None:
        """The direct pool if ``url`` goes without a proxy (loopback always does), else None."""
        if self._proxied and not _is_loopback(url):
            return None
        return self.direct

    async def aclose(self) -> None:
        self.direct.close()
        await super().aclose()


@functools.lru_cache(maxsize=256)
def credentials_in(url: str) -> bool:
    """Whether ``url`` carries a user name or password (``https://user:pass@host/...``)."""
    return "@" in urlsplit(url).netloc


def without_credentials(url: str) -> str:
    """``url`` with its ``user:pass@`` part (if any) left out, to be shown."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def credentials_refused(provider: str, url: str) -> BadRequest:
    """The error for a base URL with a user name or password in it: never sent (on the direct
    path or through httpx), because base URLs are stored with every run and answer."""
    return BadRequest(
        provider,
        f"the base URL {without_credentials(url)} carries a user name or password (user:pass@); "
        "ThoughtDesk does not send them, because base URLs are stored with every run and answer",
        hint="remove them from the address; for a server that needs a key, save it in Edit > Settings > "
        "Providers (it is sent as a Bearer token)",
    )


@functools.lru_cache(maxsize=256)
def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("127.0.0.1", "localhost", "::1") or host.endswith(".localhost")


def new_client(max_connections: int = 100) -> ProviderClient:
    """An AsyncClient with enough kept-alive connections for concurrent requests: model calls
    by :func:`post_json` go on direct connections (:mod:`.direct`) where no proxy applies, any
    other request through httpx, its connections spread over small pools
    (:class:`ShardedTransport`).

    Timeouts are set per request (see :func:`post_json`). The environment's proxy and
    certificate settings are honoured and loopback always goes direct
    (:mod:`thoughtdesk.core.settings.transport`): on a hospital network generation works where
    dataset downloads work, and a model server on 127.0.0.1 is never sent through the proxy.
    """
    verify = ssl_context()
    mounts = environment_mounts(lambda proxy: ShardedTransport(max_connections, verify=verify, proxy=proxy))
    return ProviderClient(
        max_connections,
        verify,
        proxied=any(transport is not None for transport in mounts.values()),
        transport=ShardedTransport(max_connections, verify=verify),
        # A client given a transport reads no proxies from the environment: they are mounted here.
        mounts=mounts,
        trust_env=False,
    )


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def _seconds(value: str | None) -> float | None:
    """A reset time as seconds from now: OpenAI's durations ("1s", "6m0s", "20ms", "0.5s"),
    a plain number of seconds, or Anthropic's RFC 3339 time; None when unreadable."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if parts and "".join(number + unit for number, unit in parts) == text:
        scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
        return sum(float(number) * scale[unit] for number, unit in parts)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _count(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        number = int(float(value.strip()))
    except ValueError:
        return None
    return number if number >= 0 else None


def parse_rate_limits(headers: httpx.Headers) -> RateLimitHeaders | None:
    """The provider's rate-limit headers (OpenAI ``x-ratelimit-{limit,remaining,reset}-{requests,
    tokens}``, Anthropic ``anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}``), or
    None when the answer has none."""
    # one pass over the headers (each httpx Headers.get scans and decodes them all: 24 of them
    # were a few per cent of the client's CPU per request)
    sent = {name: value for name, value in headers.multi_items() if "ratelimit" in name}
    if not sent:
        return None
    values: dict[str, str | None] = {}
    for kind in ("requests", "tokens"):
        for part in ("limit", "remaining", "reset"):
            values[f"{part}_{kind}"] = sent.get(f"x-ratelimit-{part}-{kind}") or sent.get(
                f"anthropic-ratelimit-{kind}-{part}"
            )
    if not any(values.values()):
        return None
    return RateLimitHeaders(
        limit_requests=_count(values["limit_requests"]),
        remaining_requests=_count(values["remaining_requests"]),
        reset_requests=_seconds(values["reset_requests"]),
        limit_tokens=_count(values["limit_tokens"]),
        remaining_tokens=_count(values["remaining_tokens"]),
        reset_tokens=_seconds(values["reset_tokens"]),
    )


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
        "the start of the answer is kept with the failed request. If such answers are expected, raise the "
        "largest answer in Edit > Settings > Network (or --max-response-mb)",
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
        return kind(
            provider,
            message,
            hint=hint,
            status=status,
            raw_body=body,
            retry_after=retry_after,
            rate_limits=parse_rate_limits(headers),
        )

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
    if 300 <= status < 400:
        # Never followed: a redirect would take the API key (in the headers) to another address.
        location = redact(headers.get("location") or "") or "no address given"
        return error(
            BadRequest,
            f"the server at {url} redirected the request (HTTP {status}) to {location}",
            "redirects are not followed, so the API key never goes to another address; if you trust "
            "that address, use it as the base URL",
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
    max_bytes: int | None = None,
    events: bool = False,
) -> HttpResult:
    """POST ``payload`` as JSON and return the parsed 2xx answer; raise BackendError otherwise.

    ``events``: the answer may be server-sent events (a streamed answer): ``data`` is then the
    list of the events' parsed JSON (see :func:`parse_events`), or the parsed JSON of a body that
    is plain JSON after all (a server that does not stream).

    ``timeout`` bounds the whole exchange in seconds, including a server that sends its body
    slowly; httpx's own per-read timeout alone would not. ``max_bytes`` bounds the body: reading
    stops there and the request fails with :class:`BadResponse` (see :func:`response_byte_limit`).
    """
    require_network(f"the {provider} API", url)  # offline mode: say so instead of trying
    if credentials_in(url):  # httpx would send them as Basic auth, and they would be stored
        raise credentials_refused(provider, url)
    if max_bytes is None:
        max_bytes = response_cap_bytes()
    direct = client.direct_for(url) if isinstance(client, ProviderClient) else None
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            if direct is not None:
                content = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
                status, raw_headers, body_bytes = await direct.post(url, content, headers, max_bytes)
                response_headers = httpx.Headers(raw_headers)
            else:
                request = client.build_request(
                    "POST", url, json=payload, headers=headers, timeout=httpx.Timeout(timeout)
                )
                response = await client.send(request, stream=True)
                try:
                    body_bytes = await _read_limited(response, max_bytes, provider=provider, url=url)
                finally:
                    await response.aclose()
                status, response_headers = response.status_code, response.headers
    except BodyTooLarge as error:
        if error.declared is not None:
            raise _too_large(provider, url, max_bytes, f"it announces {error.declared:,} bytes") from None
        head = error.head.decode("utf-8", "replace")
        raise _too_large(provider, url, max_bytes, "it went on past that", raw_body=head) from None
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
    body = body_bytes.decode(_charset(response_headers), errors="replace")
    if not 200 <= status < 300:
        raise error_for_status(provider, status, body, response_headers, url=url, model=model)
    try:
        data = parse_events(body) if events and not body.lstrip().startswith("{") else parse_json(body)
    except ValueError as error:
        raise BadResponse(
            provider,
            f"the answer from {url} is not valid JSON ({error})",
            hint="the raw answer is kept with the failed request; check that the "
            "base URL points at the API, not a web page",
            raw_body=body,
            status=status,
        ) from None
    return HttpResult(data=data, body=body, latency=latency, rate_limits=parse_rate_limits(response_headers))


def parse_events(body: str) -> list[Any]:
    """The JSON of each ``data:`` event of a server-sent event stream, in order, up to
    ``data: [DONE]``; comments (``:``), ``event:``, ``id:`` and ``retry:`` lines are skipped.
    ValueError naming the event whose data is not JSON."""
    parsed: list[Any] = []
    lines: list[str] = []

    def flush() -> bool:
        if not lines:
            return True
        data = "\n".join(lines)
        lines.clear()
        if data.strip() == "[DONE]":
            return False
        try:
            parsed.append(parse_json(data))
        except ValueError as error:
            raise ValueError(f"event {len(parsed) + 1} of the stream: {error}") from None
        return True

    for line in body.splitlines():
        if not line.strip():
            if not flush():
                return parsed
        elif line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
    flush()
    return parsed


def _charset(headers: httpx.Headers) -> str:
    """The body's encoding: the Content-Type's charset when Python knows it, else UTF-8 (as
    httpx decides it)."""
    content_type = headers.get("content-type", "")
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            try:
                return codecs.lookup(value.strip().strip('"')).name
            except LookupError:
                return "utf-8"
    return "utf-8"
