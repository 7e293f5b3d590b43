"""Retries with exponential backoff and jitter, concurrency and rate limits per provider.

:class:`ProviderGate` holds one provider's limits and is shared by every backend of that
provider, so two models of the same account share them:

- the concurrency the user set is a ceiling; the gate runs an adaptive window below it (AIMD,
  as TCP does): each success widens it by 1/window (about one request per round of answers),
  a 429 halves it when 429s are a real share of recent answers (:data:`OVERLOAD_SHARE`), at
  most once per round trip and per ``Retry-After`` (429s of requests sent before a halving do
  not count again). Only the rejected request waits its ``Retry-After``; the others go on within the
  smaller window, so one 429 no longer pauses the whole provider;
- where the provider sends rate-limit headers (OpenAI ``x-ratelimit-*``, Anthropic
  ``anthropic-ratelimit-*``), the gate keeps an estimate of the requests and tokens left
  (the last answer's ``remaining``, minus what was sent since that request, plus the refill
  at ``limit`` per minute) and starts a request only when the estimate covers it: the provider's
  limit is used up to the last request without being overrun;
- where it sends none, the :class:`Pacer` learns the rate it accepts: once nearly all recent
  answers are 429s (a limit reached, not a busy server's sporadic 429), requests are spaced at
  a rate cut on each 429 of a request sent after the previous cut and raised slowly while it
  holds requests back, so it settles just under the limit (the window alone let about 10 % of
  the requests be refused: a refused request frees its place at once, and the next one goes);
  until the pacer starts, a 429 without headers holds its place until the next success, so
  refusals do not chain (each refused request sending the next into the exhausted limit);
- the user's own requests and tokens per minute (``aiolimiter`` buckets) stay as they were.

:class:`ResilientBackend` wraps any backend: it waits at the gate, calls, and retries retryable
errors with tenacity, waiting what ``Retry-After`` asks for when the server says, else
exponential backoff with jitter.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from aiolimiter import AsyncLimiter
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base, wait_exponential, wait_random

from thoughtdesk.core.generation.backends.base import (
    Backend,
    BackendError,
    BadResponse,
    RateLimited,
    RateLimitHeaders,
    Request,
    Response,
    TokenCallback,
)
from thoughtdesk.core.generation.backends.learned_limits import PACE_SHARE, PACE_START, HeaderBudget, Pacer
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


#: The window is halved only when at least this share of recent answers were 429s: a provider
#: over its limit refuses most requests beyond it, while a sporadic 429 (10 % of answers in
#: bench_runs) says little about the load and halving for each collapsed the throughput.
OVERLOAD_SHARE = 0.2


@dataclass(slots=True)
class _Waiter:
    """A request waiting at the gate: its token estimate, and when it was started for it."""

    tokens: float
    started: asyncio.Event = field(default_factory=asyncio.Event)
    sent_at: float | None = None


class ProviderGate:
    """The shared limits of one provider; create one per provider and pass it to its backends
    (see the module docstring for the adaptive window, the header budgets and the pacer).

    Waiting requests queue in arrival order; when a request finishes (or a timer for the
    budgets and the pace fires) the gate starts the ones that now fit, in one step, and wakes
    only those (with a condition variable and ``notify_all`` every finish woke every queued
    request, and at concurrency 64 with 1,000 queued the client spent its time passing the lock
    around: 64 was no faster than 32).
    """

    def __init__(self, limits: ProviderLimits = ProviderLimits(), *, pacing: bool = True) -> None:
        """``pacing`` False: no pacer for providers without rate-limit headers (the window alone,
        as before the pacer; for comparisons)."""
        if limits.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.limits = limits
        self.window = float(limits.concurrency)  # adaptive concurrency, 1 <= window <= limits.concurrency
        self.in_flight = 0
        # Places held by 429s without rate-limit headers, until the next success: a refused
        # request frees its place at once, and the next one sent into the exhausted limit is
        # refused too (a chain of refusals before the pacer starts).
        self.held = 0
        self.rejected = 0  # 429s seen (for the benchmark and the run's log)
        self._queue: deque[_Waiter] = deque()  # waiting requests, oldest first
        self._timer: asyncio.TimerHandle | None = None  # calls _admit when the first may go
        self._holdoff_until = -math.inf  # no halving of the window before this monotonic time
        self._request_budget = HeaderBudget()
        self._token_budget = HeaderBudget()
        # Our token estimate (characters / 4 + max tokens) against the provider's count: raised
        # when a 429 comes although the estimate said the tokens were there, eased by successes.
        self.token_scale = 1.0
        self.limited_share = 0.0  # moving share of 429s among recent answers (over about a window)
        self.pacer = Pacer()
        self._recent: deque[bool] = deque(maxlen=PACE_START[1] if pacing else 0)  # the last answers: 429 or not
        self._pacing = pacing
        self._pace_share = 0.0  # moving share of 429s over at least 32 answers
        self._requests = AsyncLimiter(limits.requests_per_minute, limits.period) if limits.requests_per_minute else None
        self._tokens = AsyncLimiter(limits.tokens_per_minute, limits.period) if limits.tokens_per_minute else None

    def _wait_needed(self, tokens: float, now: float) -> float:
        if self.in_flight >= max(1, int(self.window) - self.held):  # one may always go
            return math.inf  # woken when a request finishes
        return max(
            self._request_budget.wait_for(1, now),
            self._token_budget.wait_for(tokens * self.token_scale, now),
            self.pacer.wait_for(now),
        )

    def _admit(self) -> None:
        """Start as many queued requests as the limits allow now, in arrival order, on their
        behalf and in one step (woken one after another, each would wait a turn of the event
        loop); for the first that must wait a known time, a timer calls this again."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._queue:
            waiter = self._queue[0]
            wait = self._wait_needed(waiter.tokens, time.monotonic())
            if wait > 0:
                if not math.isinf(wait):  # else: a finishing request calls this
                    self._timer = asyncio.get_running_loop().call_later(wait, self._admit)
                return
            self._queue.popleft()
            waiter.sent_at = self._start(waiter.tokens)
            waiter.started.set()

    async def _enter(self, tokens: float) -> float:
        """Wait for a place (in arrival order); returns the monotonic time the request starts."""
        if not self._queue and self._wait_needed(tokens, time.monotonic()) <= 0:
            return self._start(tokens)
        waiter = _Waiter(tokens)
        self._queue.append(waiter)
        if len(self._queue) == 1:
            self._admit()  # the first in the queue: a timer if it waits for a budget or the pace
        try:
            await waiter.started.wait()
        except BaseException:
            if waiter.sent_at is not None:
                self.in_flight -= 1  # started for it, then cancelled before it ran
            else:
                self._queue.remove(waiter)
            self._admit()
            raise
        assert waiter.sent_at is not None  # set before ``started``
        return waiter.sent_at

    def _start(self, tokens: float) -> float:
        self.in_flight += 1
        sent_at = time.monotonic()
        self._request_budget.take(1, sent_at)
        self._token_budget.take(tokens * self.token_scale, sent_at)
        self.pacer.take(sent_at)
        return sent_at

    async def run(self, call: Callable[[], Awaitable[T]], tokens: int) -> T:
        """Run ``call`` once the window and the rate budgets allow; ``tokens`` is its estimated
        token use (capped at a budget's size so one huge request still runs). ``call`` gives a
        Response (its rate-limit headers are read) or another result (a score)."""
        sent_at = await self._enter(tokens)
        try:
            if self._requests is not None:
                await self._requests.acquire()
            if self._tokens is not None and tokens > 0:
                await self._tokens.acquire(min(float(tokens), self._tokens.max_rate))
            response = await call()
        except RateLimited as error:
            self._finish(sent_at, error.rate_limits, limited=True, retry_after=error.retry_after)
            raise
        except BaseException as error:
            self._finish(sent_at, getattr(error, "rate_limits", None), limited=False, success=False)
            raise
        self._finish(sent_at, getattr(response, "rate_limits", None), limited=False)
        return response

    def _finish(
        self,
        sent_at: float,
        headers: RateLimitHeaders | None,
        *,
        limited: bool,
        success: bool = True,
        retry_after: float | None = None,
    ) -> None:
        now = time.monotonic()
        self.in_flight -= 1
        if headers is not None:
            self._request_budget.observe(
                headers.remaining_requests, headers.limit_requests, headers.reset_requests, sent_at, now
            )
            self._token_budget.observe(
                headers.remaining_tokens, headers.limit_tokens, headers.reset_tokens, sent_at, now
            )
        weight = 1.0 / max(4.0, self.window)
        self.limited_share += weight * (float(limited) - self.limited_share)
        if limited or success:
            self._recent.append(limited)
            if self._pacing:
                self._pace_share += (float(limited) - self._pace_share) / max(32.0, self.window)
        if limited:
            self.rejected += 1
            if headers is None and not self.pacer.active:
                self.held = min(self.held + 1, self.limits.concurrency)
            if headers is not None and headers.remaining_tokens is not None and headers.remaining_requests != 0:
                self.token_scale = min(4.0, self.token_scale * 1.1)  # tokens, not requests, ran out
            if headers is None and (
                self.pacer.active or sum(self._recent) >= PACE_START[0] or self._pace_share >= PACE_SHARE
            ):
                # No headers to budget by: the pacer learns the rate the provider accepts. It
                # starts when nearly all recent answers are 429s, or a third of them over a
                # longer run (successes of requests sent before the limit was reached come back
                # between the 429s): a limit just reached. A busy server's sporadic 429s almost
                # never look like that. Once pacing, each 429 of a request sent after the last
                # cut says the pace is above the limit.
                self.pacer.rejected(sent_at, now)
                self.held = 0  # the pace holds requests back now
            elif now >= self._holdoff_until and self.limited_share >= OVERLOAD_SHARE:
                # One halving per round trip, and none while the server's Retry-After runs:
                # the 429s of requests sent before a halving are answers to the old window.
                self.window = max(1.0, self.window / 2)
                self._holdoff_until = now + max(retry_after or 0.0, now - sent_at)
        elif success:
            self.held = max(0, self.held - 1)
            self.window = min(float(self.limits.concurrency), self.window + 1 / self.window)
            self.token_scale = max(1.0, self.token_scale * 0.999)
            self.pacer.accepted(now)
        self._admit()


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
        # Built once: they hold no state of a call (tenacity keeps that in its RetryCallState).
        self._wait = _WaitRetryAfterOrBackoff(retry)
        self._retryable = retry_if_exception(_should_retry(retry))

    @property
    def label(self) -> str:
        return self.inner.label

    def __repr__(self) -> str:
        return f"ResilientBackend({self.inner!r})"

    def _before_sleep(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        logging.getLogger(__name__).debug(
            "%s: attempt %d failed (%s: %s); retrying in %.1f s",
            self.inner.label,
            state.attempt_number,
            type(error).__name__,
            error,
            wait,
        )
        if self._on_retry is not None and isinstance(error, BackendError):
            self._on_retry(error, state.attempt_number, wait)

    def _retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            stop=stop_after_attempt(self.retry.max_attempts),
            wait=self._wait,
            retry=self._retryable,
            before_sleep=self._before_sleep,
            reraise=True,
        )

    async def complete(self, request: Request, on_token: TokenCallback | None = None) -> Response:
        """Call the wrapped backend within the gate's limits, retrying retryable errors."""
        prompt_tokens, completion_tokens = estimate_request_tokens(request)
        retrying = self._retrying()
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
        retrying = self._retrying()
        async for attempt in retrying:
            with attempt:
                scores = await self.gate.run(
                    lambda: self._guarded(lambda: self.inner.score(prefix, continuations)), tokens
                )
        return scores

    async def aclose(self) -> None:
        await self.inner.aclose()
