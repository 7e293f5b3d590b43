"""Server pools (issue 17, point 2): one model on several OpenAI-compatible endpoints, with
requests spread over them, broken endpoints taken out and probed later, and a request that
fails on one endpoint answered by another. Real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.backends import (
    OpenAICompatBackend,
    PooledBackend,
    ProviderLimits,
    Request,
    ResilientBackend,
    RetryPolicy,
    ServerDown,
)


@pytest.fixture
def servers() -> Iterator[tuple[FakeModelServer, FakeModelServer]]:
    with FakeModelServer() as first, FakeModelServer() as second:
        yield first, second


def pool_of(*servers: FakeModelServer, concurrency: int = 2, down_wait: float = 0.2, **options) -> PooledBackend:
    members = [OpenAICompatBackend(server.base_url, endpoint="completions", model="m") for server in servers]
    return PooledBackend(members, limits=ProviderLimits(concurrency), down_wait=down_wait, **options)


def request(index: int) -> Request:
    return Request(model="m", prompt=f"question {index}", max_tokens=8, timeout=5.0)


def slow(seconds: float):
    return lambda recorded: Reply(delay=seconds)


async def run_all(backend, count: int) -> list[str]:
    responses = await asyncio.gather(*(backend.complete(request(i)) for i in range(count)))
    return [response.texts[0] for response in responses]


def test_requests_spread_over_the_endpoints_within_each_ones_concurrency(servers) -> None:
    first, second = servers
    first.responder = second.responder = slow(0.05)
    pool = pool_of(first, second, concurrency=2)

    async def main() -> None:
        texts = await run_all(pool, 20)
        assert len(texts) == 20
        await pool.aclose()

    asyncio.run(main())
    # Both endpoints worked, each within its own limit of 2, together 4 at once.
    assert len(first.requests) + len(second.requests) == 20
    assert len(first.requests) >= 6 and len(second.requests) >= 6
    assert first.max_in_flight <= 2 and second.max_in_flight <= 2
    assert first.max_in_flight + second.max_in_flight >= 3
    assert pool.concurrency == 4


def test_a_killed_endpoint_is_taken_out_and_its_requests_answered_by_the_other(servers) -> None:
    first, second = servers
    first.responder = slow(0.05)
    held = threading.Event()  # the second answers nothing until it is killed: it dies holding its requests
    second.responder = lambda recorded: (held.wait(30), Reply())[1]
    pool = pool_of(first, second, concurrency=2, down_wait=30.0)

    async def main() -> list[str]:
        tasks = [asyncio.ensure_future(pool.complete(request(i))) for i in range(12)]
        deadline = time.monotonic() + 30
        while not (second.in_flight == 2 and first.requests):  # requests in flight on both (2: its limit)
            assert time.monotonic() < deadline, "the pool never sent to both endpoints"
            await asyncio.sleep(0.005)
        second.kill()
        held.set()
        texts = [(await task).texts[0] for task in tasks]
        await pool.aclose()
        return texts

    texts = asyncio.run(main())
    assert len(texts) == 12 and all(texts)
    down = pool.members[1]
    # The requests it held when it died failed together: one outage, one step of backoff.
    assert down.failures == 1 and down.down_until > time.monotonic()
    # Every request was answered once by the first (the ones lost on the second sent again).
    answered = {r.json["prompt"] for r in first.requests}
    assert answered == {f"question {i}" for i in range(12)}


def test_a_failing_endpoint_is_probed_again_after_its_backoff_and_used_when_it_answers(servers) -> None:
    first, second = servers
    second.script(Reply(status=500, body={"error": {"message": "engine crashed"}}))
    pool = pool_of(first, second, concurrency=1, down_wait=0.1)

    async def main() -> None:
        # Both start at once: the second's 500 sends its request to the first.
        await run_all(pool, 2)
        assert pool.members[1].failures == 1 and pool.members[1].served == 0
        assert len(first.requests) == 2
        await asyncio.sleep(0.15)  # the backoff is over: the second is probed and answers
        await run_all(pool, 4)
        await pool.aclose()

    asyncio.run(main())
    assert pool.members[1].failures == 0 and pool.members[1].served >= 1
    assert len(second.requests) >= 2


def test_the_backoff_doubles_while_an_endpoint_keeps_failing(servers) -> None:
    first, second = servers
    second.responder = lambda recorded: Reply(status=503, body={"error": {"message": "overloaded"}})
    pool = pool_of(first, second, concurrency=1, down_wait=0.05)

    async def main() -> None:
        for _ in range(3):
            await asyncio.sleep(pool.members[1].down_until - time.monotonic() + 0.01)
            await run_all(pool, 2)
        await pool.aclose()

    asyncio.run(main())
    member = pool.members[1]
    assert member.failures >= 3
    assert len(first.requests) == 6  # every request answered by the healthy one


def test_all_endpoints_down_gives_one_clear_error_and_the_retry_policy_waits_for_a_probe() -> None:
    with FakeModelServer() as first, FakeModelServer() as second:
        urls = (first.base_url, second.base_url)
    # Both are gone now: nothing listens at either address.
    pool = PooledBackend(
        [OpenAICompatBackend(url, endpoint="completions", model="m") for url in urls],
        limits=ProviderLimits(2),
        down_wait=0.05,
    )

    async def main() -> None:
        with pytest.raises(ServerDown) as failed:
            await pool.complete(request(0))
        # Both were tried; the next call finds them both out and says so.
        with pytest.raises(ServerDown) as again:
            await pool.complete(request(1))
        assert "all 2 endpoints of the pool are down" in str(again.value)
        assert again.value.retry_after is not None and 0 <= again.value.retry_after <= 0.1
        assert "\n" not in str(failed.value)
        await pool.aclose()

    asyncio.run(main())


def test_behind_the_resilient_backend_a_pool_that_recovers_answers_every_request(servers) -> None:
    first, second = servers
    refused = [Reply(status=502, body={"error": {"message": "bad gateway"}}) for _ in range(3)]
    first.script(*refused)
    second.script(*refused)
    pool = pool_of(first, second, concurrency=2, down_wait=0.05)
    backend = ResilientBackend(pool, retry=RetryPolicy(max_attempts=5, initial_wait=0.01, jitter=0.01))

    async def main() -> list[str]:
        texts = await run_all(backend, 6)
        await backend.aclose()
        return texts

    assert len(asyncio.run(main())) == 6


def test_scoring_goes_through_the_pool_and_around_a_dead_endpoint(servers) -> None:
    first, second = servers
    second.kill()
    pool = pool_of(first, second, concurrency=2)

    async def main():
        scores = [await pool.score("The answer is", [" yes", " no"]) for _ in range(3)]
        await pool.aclose()
        return scores

    scores = asyncio.run(main())
    assert all(len(pair) == 2 and pair[0].tokens for pair in scores)
    assert pool.scoring_detail.endswith("scores text exactly (log-probs of the given tokens)")
    assert pool.capabilities.scoring
    assert all(r.json["echo"] for r in first.requests)


def test_a_pool_needs_endpoints() -> None:
    with pytest.raises(ValueError, match="at least one endpoint"):
        PooledBackend([])
