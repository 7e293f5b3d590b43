"""Retries with exponential backoff and jitter, concurrency and rate limits per provider.

:class:`ProviderGate` holds one provider's limits (a semaphore for concurrent requests and
``aiolimiter`` buckets for requests and tokens per minute) and is shared by every backend of
that provider, so two models of the same account share its limits. :class:`ResilientBackend`
wraps any backend: it waits at the gate, calls, and retries retryable errors with tenacity,
waiting what ``Retry-After`` asks for when the server says, else exponential backoff with jitter.
A 429 also pauses the whole gate, so concurrent requests stop hammering a limited provider.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from aiolimiter import AsyncLimiter
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base, wait_exponential, wait_random

from thoughtdesk.core.generation.backends.base import (
    Backend,
    BackendError,
    BadResponse,
    RateLimited,
    Request,
    Response,
    TokenCallback,
)
from thoughtdesk.core.generation.backends.pricing import estimate_request_tokens, estimate_tokens
from thoughtdesk.core.generation.scoring import TokenScores

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry; all times in seconds."""

    max_attempts: int = 6
    initial_wait: float = 1.0
    max_wait: float = 60.0
    jitter: float = 1.0
    max_retry_after: float = 300.0  # a server asking for longer than this is not waited for


@dataclass(frozen=True, slots=True)
class ProviderLimits:
    """Per-provider limits: concurrent requests, requests and tokens per minute (None: no limit)."""

    concurrency: int = 8
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    period: float = 60.0  # seconds the two budgets refill over (a minute; shorter in tests)


class ProviderGate:
    """The shared limits of one provider; create one per provider and pass it to its backends."""

    def __init__(self, limits: ProviderLimits = ProviderLimits()) -> None:
        if limits.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.limits = limits
        self._semaphore = asyncio.Semaphore(limits.concurrency)
        self._requests = AsyncLimiter(limits.requests_per_minute, limits.period) if limits.requests_per_minute else None
        self._tokens = AsyncLimiter(limits.tokens_per_minute, limits.period) if limits.tokens_per_minute else None
        self._paused_until = 0.0  # time.monotonic() before which no request starts

    def pause(self, seconds: float) -> None:
        """Hold back new requests for ``seconds`` (after the provider said it is overloaded)."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    async def run(self, call: Callable[[], Awaitable[T]], tokens: int) -> T:
        """Run ``call`` once a concurrency slot and the rate budgets allow; ``tokens`` is its
        estimated token use (capped at the per-minute budget so one huge request still runs)."""
        async with self._semaphore:
            while (delay := self._paused_until - time.monotonic()) > 0:
                await asyncio.sleep(delay)
            if self._requests is not None:
                await self._requests.acquire()
            if self._tokens is not None and tokens > 0:
                await self._tokens.acquire(min(float(tokens), self._tokens.max_rate))
            return await call()


class _WaitRetryAfterOrBackoff(wait_base):
    """Wait what the server asked for (plus a little jitter), else exponential backoff."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        # initial * 2^(attempt - 1), at most max_wait, plus up to `jitter` seconds at random.
        self.backoff = wait_exponential(multiplier=policy.initial_wait, max=policy.max_wait) + wait_random(
            0, policy.jitter
        )

    def __call__(self, retry_state: RetryCallState) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        retry_after = getattr(error, "retry_after", None)
        if retry_after is not None:
            # A small spread so that requests told the same wait do not return in one burst.
            spread = min(self.policy.jitter, 0.1 * retry_after + 0.05)
            return float(retry_after) + spread * random.random()
        return float(self.backoff(retry_state))


def _should_retry(policy: RetryPolicy) -> Callable[[BaseException], bool]:
    def check(error: BaseException) -> bool:
        if not isinstance(error, BackendError) or not error.retryable:
            return False
        return error.retry_after is None or error.retry_after <= policy.max_retry_after

    return check


class ResilientBackend(Backend):
    """A backend with retries and provider limits around another backend.

    ``complete`` returns the first successful response (``attempts`` says how many calls it
    took) or raises the last error once retries are used up or the error is not retryable.
    """

    def __init__(
        self,
        inner: Backend,
        *,
        retry: RetryPolicy = RetryPolicy(),
        gate: ProviderGate | None = None,
        on_retry: Callable[[BackendError, int, float], None] | None = None,
    ) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.capabilities = inner.capabilities
        self.retry = retry
        self.gate = gate or ProviderGate()
        self._on_retry = on_retry

    @property
    def label(self) -> str:
        return self.inner.label

    def __repr__(self) -> str:
        return f"ResilientBackend({self.inner!r})"

    def _before_sleep(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        if isinstance(error, RateLimited) and error.retry_after:
            self.gate.pause(error.retry_after)
        if self._on_retry is not None and isinstance(error, BackendError):
            self._on_retry(error, state.attempt_number, wait)

    async def complete(self, request: Request, on_token: TokenCallback | None = None) -> Response:
        """Call the wrapped backend within the gate's limits, retrying retryable errors."""
        prompt_tokens, completion_tokens = estimate_request_tokens(request)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.retry.max_attempts),
            wait=_WaitRetryAfterOrBackoff(self.retry),
            retry=retry_if_exception(_should_retry(self.retry)),
            before_sleep=self._before_sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                response = await self.gate.run(
                    lambda: self._complete(request, on_token), prompt_tokens + completion_tokens
                )
                response.attempts = attempt.retry_state.attempt_number
        return response

    async def _complete(self, request: Request, on_token: TokenCallback | None) -> Response:
        """The wrapped call; an error that is no BackendError (a bug, or an answer no check
        foresaw) becomes a failed request instead of ending the whole run."""
        return await self._guarded(lambda: self.inner.complete(request, on_token))

    async def _guarded(self, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except BackendError:
            raise
        except Exception as error:
            logging.getLogger(__name__).exception("unexpected error from the %s backend", self.inner.provider)
            raise BadResponse(
                self.inner.provider,
                f"the answer could not be read ({type(error).__name__}: {error})",
                hint="the request is kept as failed and can be retried with resume; the log has the details",
            ) from None

    @property
    def scoring_detail(self) -> str:
        return self.inner.scoring_detail

    async def score(self, prefix: str, continuations: Sequence[str]) -> list[TokenScores]:
        """The wrapped backend's ``score`` within the gate's limits, retrying retryable errors
        (ScoringUnsupported is not retryable: it comes back at once)."""
        tokens = estimate_tokens(prefix) + sum(estimate_tokens(text) for text in continuations)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.retry.max_attempts),
            wait=_WaitRetryAfterOrBackoff(self.retry),
            retry=retry_if_exception(_should_retry(self.retry)),
            before_sleep=self._before_sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                scores = await self.gate.run(
                    lambda: self._guarded(lambda: self.inner.score(prefix, continuations)), tokens
                )
        return scores

    async def aclose(self) -> None:
        await self.inner.aclose()
