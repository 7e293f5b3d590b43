"""The provider gate adapts to a real rate limit (issue 17, point 6): AIMD window, rate-limit
headers, connection pools. Against real local servers: tests/helpers/rate_limit_server.py
(token buckets, 429 + Retry-After, x-ratelimit-* headers) and FakeModelServer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial

import httpx
import pytest

from tests.helpers.rate_limit_server import RateLimitServer
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.backends import OpenAICompatBackend, RateLimited, Request
from thoughtdesk.core.generation.backends.http import (
    CONNECTIONS_PER_SHARD,
    ShardedTransport,
    new_client,
    parse_rate_limits,
)
from thoughtdesk.core.generation.backends.learned_limits import PACE_CLIMB, PACE_CUT, PACE_GROWTH, HeaderBudget, Pacer
from thoughtdesk.core.generation.backends.retry import (
    ProviderGate,
    ProviderLimits,
    ResilientBackend,
    RetryPolicy,
)

RETRY = RetryPolicy(max_attempts=20, initial_wait=0.05, max_wait=0.2, jitter=0.02)


async def _send(gate: ProviderGate, url: str, count: int, retry: RetryPolicy = RETRY) -> None:
    backend = ResilientBackend(OpenAICompatBackend(url), gate=gate, retry=retry)
    try:
        await asyncio.gather(*(backend.complete(Request(model="m", prompt=str(i), max_tokens=8)) for i in range(count)))
    finally:
        await backend.aclose()


def test_window_halves_on_429s_once_per_round_and_grows_back(fake_server: FakeModelServer) -> None:
    # 10 requests a second, a bucket of one: a burst of 8 gets 7 rejections at once
    with RateLimitServer(rpm=600, burst_seconds=0.1, delay=0.02, headers=False) as server:
        gate = ProviderGate(ProviderLimits(concurrency=8))
        seen: dict[str, float] = {}

        async def main() -> None:
            await _send(gate, server.base_url, 8)
            seen["after 429s"] = gate.window
            # successes widen it again, by about one request per window of answers
            await _send(gate, fake_server.base_url, 12)

        asyncio.run(main())
        assert server.stats.admitted == 8 and gate.rejected == server.stats.rejected >= 7
    # the 7 simultaneous 429s answer one window: it was not halved 7 times
    assert 2.0 <= seen["after 429s"] < 8.0
    assert seen["after 429s"] < gate.window <= 8.0


def test_rate_limit_headers_keep_requests_within_the_limit() -> None:
    # 1,200 a minute (20/s), a bucket of 20 (the first window of 16 fits: before the first
    # answer nothing is known): with the headers the gate holds requests back instead of being
    # refused; without them it learns from 429s (more rejections)
    rejected = {}
    for headers in (True, False):
        with RateLimitServer(rpm=1200, burst_seconds=1.0, delay=0.05, headers=headers) as server:
            gate = ProviderGate(ProviderLimits(concurrency=16))
            asyncio.run(_send(gate, server.base_url, 50))
            assert server.stats.admitted == 50
            rejected[headers] = server.stats.rejected
    assert rejected[True] <= 2 < rejected[False]


def test_token_headers_pace_by_tokens() -> None:
    # tokens are the scarce budget here: 6,000 a minute (100/s), a bucket of 300; each request
    # costs 64 (40 characters / 4 + 4 per message + max_tokens 50): the first window of 4 fits
    with RateLimitServer(rpm=None, tpm=6000, burst_seconds=3, delay=0.02, headers=True) as server:
        gate = ProviderGate(ProviderLimits(concurrency=4))

        async def main() -> None:
            backend = ResilientBackend(OpenAICompatBackend(server.base_url), gate=gate, retry=RETRY)
            await asyncio.gather(
                *(backend.complete(Request(model="m", prompt="x" * 40, max_tokens=50)) for _ in range(12))
            )
            await backend.aclose()

        asyncio.run(main())
        assert server.stats.admitted == 12 and server.stats.rejected <= 2


def test_header_budget_counts_what_was_sent_since_and_refills() -> None:
    budget = HeaderBudget()
    assert budget.wait_for(1, 0.0) == 0.0  # nothing known: not limited
    budget.take(1, 10.0)
    budget.take(1, 10.5)
    # the answer to the request sent at 10.0 says 1 left; the one sent at 10.5 is not counted in it
    budget.observe(remaining=1, limit=60, reset=None, sent_at=10.0, now=11.0)
    assert budget.available(11.0) == pytest.approx(1 - 1 + 1.0)  # + 1 s of refill at 1/s
    # 2 more need 3 more seconds at 1/s: 2 plus a reserve of their size, minus the 1 left
    assert budget.wait_for(2, 11.0) == pytest.approx(3.0)
    assert budget.wait_for(100, 1000.0) == 0.0  # more than the whole limit: runs when it is full
    assert budget.available(1000.0) == 60  # never above the limit
    # without a limit there is no refill estimate: trusted until the reset time, then forgotten
    blind = HeaderBudget()
    blind.observe(remaining=0, limit=None, reset=2.0, sent_at=0.0, now=1.0)
    assert blind.wait_for(1, 1.5) == pytest.approx(1.5)
    assert blind.wait_for(1, 3.5) == 0.0


def test_parse_rate_limit_headers_of_both_providers() -> None:
    openai = parse_rate_limits(
        httpx.Headers(
            {
                "x-ratelimit-limit-requests": "500",
                "x-ratelimit-remaining-requests": "499",
                "x-ratelimit-reset-requests": "6m0s",
                "x-ratelimit-limit-tokens": "30000",
                "x-ratelimit-remaining-tokens": "29000",
                "x-ratelimit-reset-tokens": "20ms",
            }
        )
    )
    assert openai is not None
    assert (openai.limit_requests, openai.remaining_requests, openai.reset_requests) == (500, 499, 360.0)
    assert (openai.limit_tokens, openai.remaining_tokens) == (30000, 29000)
    assert openai.reset_tokens == pytest.approx(0.02)
    when = (datetime.now(UTC) + timedelta(seconds=30)).isoformat().replace("+00:00", "Z")
    anthropic = parse_rate_limits(
        httpx.Headers({"anthropic-ratelimit-requests-remaining": "7", "anthropic-ratelimit-requests-reset": when})
    )
    assert anthropic is not None and anthropic.remaining_requests == 7
    assert anthropic.reset_requests is not None and 25 < anthropic.reset_requests <= 30
    odd = parse_rate_limits(
        httpx.Headers({"x-ratelimit-remaining-requests": "lots", "x-ratelimit-reset-requests": "soon"})
    )
    assert odd is not None and odd.remaining_requests is None and odd.reset_requests is None
    assert parse_rate_limits(httpx.Headers({"content-type": "application/json"})) is None


def test_connections_spread_over_small_pools_and_are_released() -> None:
    transport = ShardedTransport(100)
    pools = transport._pools
    assert len(pools) == -(-100 // CONNECTIONS_PER_SHARD)

    async def main(url: str) -> list[int]:
        async with httpx.AsyncClient(transport=transport) as client:

            async def one(i: int) -> int:
                response = await client.post(f"{url}/chat/completions", json={"model": "m", "messages": []})
                return response.status_code

            codes = await asyncio.gather(*(one(i) for i in range(40)))
            assert transport._open == [0] * len(pools)
            used = [len(pool._pool.connections) for pool in pools]
            assert max(used) <= CONNECTIONS_PER_SHARD and sum(used) == 40  # spread, and kept alive
            return list(codes)

    with RateLimitServer(rpm=None, delay=0.1) as server:  # a keep-alive server without limits
        assert asyncio.run(main(server.base_url)) == [200] * 40
    assert isinstance(new_client()._transport, ShardedTransport)


def test_gate_keeps_the_user_concurrency_as_a_ceiling(fake_server: FakeModelServer) -> None:
    gate = ProviderGate(ProviderLimits(concurrency=3))
    started = time.monotonic()
    asyncio.run(_send(gate, fake_server.base_url, 9))
    assert fake_server.max_in_flight <= 3 and gate.window == 3.0 and gate.in_flight == 0
    assert time.monotonic() - started < 30


def test_without_headers_the_pacer_learns_the_limit_and_is_refused_less_than_the_window() -> None:
    # 20 requests a second, a bucket of 10, no rate-limit headers: the burst of 32 is refused
    # beyond the bucket; the pacer then spaces the requests at the rate the server accepts.
    # Against the same server the window alone (pacer never started) is refused more often.
    rejected = {}
    for pacing in (True, False):
        with RateLimitServer(rpm=1200, burst_seconds=0.5, delay=0.02, headers=False) as server:
            gate = ProviderGate(ProviderLimits(concurrency=32), pacing=pacing)
            # (without the pacer some requests are refused many times over)
            asyncio.run(_send(gate, server.base_url, 120, replace(RETRY, max_attempts=200)))
            assert server.stats.admitted == 120  # every request answered in the end
            rejected[pacing] = server.stats.rejected
            assert gate.pacer.active == pacing and gate.in_flight == 0
            if pacing:
                # it started from the accepted rate and was cut a few times, not once per 429
                assert 1 <= gate.pacer.cuts < server.stats.rejected
                assert gate.pacer.rate is not None and gate.pacer.rate < 60
    assert rejected[True] < rejected[False]


def test_sporadic_429s_do_not_start_the_pacer(fake_server: FakeModelServer) -> None:
    # every tenth answer a 429 (a busy server, not a limit being reached): no pacing, and the
    # window is not halved (429s are not a real share of the answers)
    refused = Reply(status=429, headers={"retry-after-ms": "10"}, body={"error": {"message": "busy"}})
    fake_server.script(*([Reply()] * 9 + [refused]) * 6)
    gate = ProviderGate(ProviderLimits(concurrency=16))
    asyncio.run(_send(gate, fake_server.base_url, 55))  # 60 calls: 6 of them refused
    assert gate.rejected == 6 and not gate.pacer.active and gate.window == 16.0


def test_pacer_cuts_once_per_round_and_grows_only_while_it_holds_requests_back() -> None:
    pacer = Pacer()
    assert pacer.wait_for(0.0) == 0.0  # inactive: no spacing
    for t in (9.1, 9.3, 9.5, 9.7, 9.9):  # 5 requests sent in the last second
        pacer.take(t)
    pacer.rejected(sent_at=9.9, now=10.1)
    assert pacer.rate is not None
    assert pacer.rate == pytest.approx(5 * PACE_CUT) and pacer.cuts == 1
    # the next request waits one interval of the new pace
    assert pacer.wait_for(10.1) == pytest.approx(1 / pacer.rate)
    # a 429 of a request sent before the cut answers the old rate: no second cut
    pacer.rejected(sent_at=10.0, now=10.2)
    assert pacer.cuts == 1
    # a 429 of a request sent after it, soon after the cut: still far above, a deep cut
    pacer.rejected(sent_at=10.3, now=10.3)
    assert pacer.cuts == 2 and pacer.rate == pytest.approx(4.0 * PACE_CUT**3) and pacer.ceiling == 4.0
    # successes raise the rate only while the pace delayed a request in the last second
    rate = pacer.rate
    assert rate is not None
    pacer.accepted(20.0)
    assert pacer.rate == rate
    assert pacer.wait_for(pacer.next_start - 0.01) > 0  # holds one back now
    pacer.accepted(pacer.next_start)
    # fast while under the last cut's rate (known to be near what is accepted), then slowly
    assert pacer.rate == pytest.approx(rate + PACE_CLIMB)
    pacer.rate = 3.5
    pacer.accepted(pacer.held_at + 0.5)
    assert pacer.rate == pytest.approx(3.5 + PACE_GROWTH)
    # requests start one interval apart
    start = pacer.next_start
    pacer.take(start)
    assert pacer.next_start == pytest.approx(start + 1 / pacer.rate)
    # a 429 long after the last cut: an ordinary cut
    pacer.rejected(sent_at=30.0, now=30.0)
    assert pacer.cuts == 3 and pacer.rate == pytest.approx((3.5 + PACE_GROWTH) * PACE_CUT)


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Let the event loop turn until ``condition()`` holds (the requests reached the state the
    test looks at), never a fixed sleep: what a fixed sleep covers a loaded machine may not."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out waiting for the gate"
        await asyncio.sleep(0)


def test_queued_requests_start_in_arrival_order_and_a_cancelled_one_does_not_block() -> None:
    gate = ProviderGate(ProviderLimits(concurrency=2))
    started: list[int] = []

    async def main() -> None:
        release = asyncio.Event()

        async def call(i: int) -> int:
            started.append(i)
            await release.wait()
            return i

        tasks = [asyncio.create_task(gate.run(partial(call, i), 1)) for i in range(8)]
        await until(lambda: gate.in_flight + len(gate._queue) == 8)  # every request at the gate
        assert started == [0, 1] and gate.in_flight == 2
        tasks[3].cancel()  # cancelled while queued: leaves the queue
        await until(tasks[3].done)
        assert len(gate._queue) == 5
        release.set()
        done = await asyncio.gather(*tasks, return_exceptions=True)
        assert isinstance(done[3], asyncio.CancelledError)
        assert [d for d in done if not isinstance(d, BaseException)] == [0, 1, 2, 4, 5, 6, 7]

    asyncio.run(main())
    assert started == [0, 1, 2, 4, 5, 6, 7] and gate.in_flight == 0


def test_a_429_without_headers_holds_its_place_until_the_next_success() -> None:
    # Concurrency 2: one request runs long, the other is refused (no rate-limit headers). The
    # next request must not take the refused one's place at once (sent into the exhausted
    # limit, it would be refused too: a chain of refusals); it goes when the long one succeeds.
    async def main() -> list[str]:
        gate = ProviderGate(ProviderLimits(concurrency=2))
        events: list[str] = []
        release = asyncio.Event()

        async def long_call() -> str:
            await release.wait()
            events.append("long done")
            return "ok"

        async def refused() -> str:
            events.append("refused")
            raise RateLimited("openai", "too many requests", status=429, retry_after=0.01)

        async def next_call() -> str:
            events.append("next started")
            return "ok"

        long_task = asyncio.create_task(gate.run(long_call, 1))
        await asyncio.sleep(0)
        with pytest.raises(RateLimited):
            await gate.run(refused, 1)
        next_task = asyncio.create_task(gate.run(next_call, 1))
        await until(lambda: len(gate._queue) == 1 or "next started" in events)  # queued (or, wrongly, sent)
        assert "next started" not in events and gate.held == 1
        release.set()
        await asyncio.gather(long_task, next_task)
        assert gate.held == 0 and gate.in_flight == 0
        return events

    assert asyncio.run(main()) == ["refused", "long done", "next started"]
