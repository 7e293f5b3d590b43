"""One model served by several OpenAI-compatible endpoints (vLLM replicas, llama.cpp servers).

:class:`PooledBackend` wraps one backend per endpoint, each behind its own
:class:`~thoughtdesk.core.generation.backends.retry.ProviderGate` (so each endpoint gets the
concurrency the user set, with its own adaptive window). A request goes to the healthy endpoint
with the most free room; while every healthy endpoint is full it waits for the first to free up.

Health: an endpoint that fails the way a broken server fails (connection refused or lost, 5xx,
timeout) is taken out for a backoff (``down_wait`` doubling up to ``max_down_wait``), then
probed again with one request at a time until it answers. The request that met the failure is
sent at once to another endpoint it has not tried; only when every endpoint failed it (or all
are out) does the error go up, to the :class:`ResilientBackend` around the pool, which waits and
calls again. The pool returns one response per call, so the run engine stores each request once
whichever endpoint answered it.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from thoughtdesk.core.generation.backends.base import (
    Backend,
    BackendError,
    ConnectionLost,
    RateLimited,
    Request,
    Response,
    ServerDown,
    ServerError,
    Timeout,
    TokenCallback,
)
from thoughtdesk.core.generation.backends.pricing import estimate_request_tokens, estimate_tokens
from thoughtdesk.core.generation.backends.retry import ProviderGate, ProviderLimits
from thoughtdesk.core.generation.scoring import TokenScores

T = TypeVar("T")

#: Failures that say the endpoint (not the request) is broken: it is taken out for a while.
ENDPOINT_FAILURES: tuple[type[BackendError], ...] = (ServerDown, ConnectionLost, ServerError, Timeout)


@dataclass
class PoolMember:
    """One endpoint of a pool: its backend, its gate and its health.

    ``down_until`` is the monotonic time before which it gets no request; ``failures`` counts
    its failures since it last answered (0: healthy; above 0 after the backoff: on probation,
    one request at a time); ``served`` counts its answers.
    """

    name: str
    backend: Backend
    gate: ProviderGate
    down_until: float = -math.inf
    failures: int = 0
    probing: bool = False
    served: int = 0

    def usable(self, now: float) -> bool:
        """Can take a request now (up, or due for a probe with none in flight)."""
        if now < self.down_until:
            return False
        return self.failures == 0 or not self.probing

    def room(self) -> float:
        """Free share of its window (above 0: a request starts at once)."""
        window = max(1, int(self.gate.window))
        return (window - self.gate.in_flight) / window


class PooledBackend(Backend):
    """Several backends serving the same model, used as one (see the module docstring).

    ``members`` are the endpoints' backends (``names`` name them in messages, default their
    ``base_url``); ``limits`` are each endpoint's own (concurrency per endpoint).
    """

    def __init__(
        self,
        members: Sequence[Backend],
        *,
        limits: ProviderLimits | None = None,
        names: Sequence[str] | None = None,
        down_wait: float = 1.0,
        max_down_wait: float = 30.0,
    ) -> None:
        if not members or (names is not None and len(names) != len(members)):
            raise ValueError("a server pool needs at least one endpoint, and one name per endpoint")
        labels = list(names) if names is not None else [str(getattr(m, "base_url", m.label)) for m in members]
        self.members = [
            PoolMember(label, backend, ProviderGate(limits or ProviderLimits()))
            for label, backend in zip(labels, members, strict=True)
        ]
        first = members[0]
        self.provider = first.provider
        self.capabilities = first.capabilities
        self.scoring_unsupported_reason = first.scoring_unsupported_reason
        self.down_wait = down_wait
        self.max_down_wait = max_down_wait
        self._changed = asyncio.Condition()

    @property
    def label(self) -> str:
        return f"{self.members[0].backend.label} pool of {len(self.members)}"

    @property
    def concurrency(self) -> int:
        """Requests the whole pool runs at once at most (the sum of the endpoints' limits)."""
        return sum(member.gate.limits.concurrency for member in self.members)

    def __repr__(self) -> str:
        return f"PooledBackend({[member.name for member in self.members]!r})"

    @property
    def scoring_detail(self) -> str:
        return self.members[0].backend.scoring_detail

    async def complete(self, request: Request, on_token: TokenCallback | None = None) -> Response:
        """Send ``request`` to one endpoint; on an endpoint failure, to the next untried one."""
        prompt_tokens, completion_tokens = estimate_request_tokens(request)
        return await self._dispatch(lambda m: m.backend.complete(request, on_token), prompt_tokens + completion_tokens)

    async def score(self, prefix: str, continuations: Sequence[str]) -> list[TokenScores]:
        """Scoring through the pool too (one endpoint scores all continuations of one call)."""
        tokens = estimate_tokens(prefix) + sum(estimate_tokens(text) for text in continuations)
        return await self._dispatch(lambda m: m.backend.score(prefix, continuations), tokens)

    async def _dispatch(self, call: Callable[[PoolMember], Awaitable[T]], tokens: int) -> T:
        tried: set[int] = set()
        last: BackendError | None = None
        while True:
            member = await self._pick(tried, last)
            tried.add(id(member))
            probe = member.failures > 0
            member.probing = member.probing or probe
            try:
                result = await member.gate.run(partial(call, member), tokens)
            except ENDPOINT_FAILURES as error:
                await self._went_down(member, probe)
                last = error
                continue
            except RateLimited as error:
                # The endpoint is up but busy: another one may have room (its gate already
                # narrowed this endpoint's window).
                await self._finished(member, probe, up=None)
                last = error
                continue
            except BaseException:
                await self._finished(member, probe, up=None)
                raise
            await self._finished(member, probe, up=True)
            return result

    async def _pick(self, tried: set[int], last: BackendError | None) -> PoolMember:
        """The usable untried endpoint with the most room, waiting while all usable ones are full;
        raises ``last`` (or ServerDown) when no untried endpoint can take the request soon."""
        async with self._changed:
            while True:
                now = time.monotonic()
                untried = [m for m in self.members if id(m) not in tried]
                usable = [m for m in untried if m.usable(now)]
                if not usable and last is not None:
                    raise last  # every endpoint failed this request or is out: the retry policy waits
                probing = any(m.probing and now >= m.down_until for m in untried)
                if not usable and not probing:
                    # Nothing tried yet and every endpoint out: let the retry policy wait until
                    # the first is due for a probe.
                    due = min(m.down_until for m in untried)
                    raise ServerDown(
                        self.provider,
                        f"all {len(self.members)} endpoints of the pool are down "
                        f"({', '.join(m.name for m in self.members)})",
                        hint="check the servers; the pool probes them again after a short wait",
                        retry_after=max(0.0, due - now) if math.isfinite(due) else self.down_wait,
                    )
                best = max(usable, key=lambda m: m.room()) if usable else None
                if best is not None and best.room() > 0:
                    return best
                # All usable endpoints are full, or the only one coming back is being probed:
                # wait for a free place or for the probe's outcome.
                # Woken when a request finishes or an endpoint goes down; an endpoint whose
                # backoff ends is due for a probe without anyone saying so: look again then.
                later = [m.down_until - now for m in untried if m.down_until > now]
                try:
                    await asyncio.wait_for(self._changed.wait(), min(later) if later else None)
                except TimeoutError:
                    pass

    async def _went_down(self, member: PoolMember, probe: bool) -> None:
        async with self._changed:
            now = time.monotonic()
            if now < member.down_until:
                # Already out: the other requests it held when it broke fail too, but they are
                # one outage, not several (else one crash would back it off for the maximum).
                if probe:
                    member.probing = False
                self._changed.notify_all()
                return
            member.failures += 1
            wait = min(self.max_down_wait, self.down_wait * 2 ** (member.failures - 1))
            member.down_until = now + wait
            if probe:
                member.probing = False
            self._changed.notify_all()

    async def _finished(self, member: PoolMember, probe: bool, *, up: bool | None) -> None:
        async with self._changed:
            if up:
                member.served += 1
                member.failures = 0
                member.down_until = -math.inf
            if probe:
                member.probing = False
            self._changed.notify_all()

    async def aclose(self) -> None:
        for member in self.members:
            await member.backend.aclose()
