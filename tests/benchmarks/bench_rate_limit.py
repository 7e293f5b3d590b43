"""Benchmark: throughput against a real rate limit, and concurrency 64 against 32 (issue 17.6).

Servers run in their own processes (they must not share the client's GIL):

* **Keep-alive server** (bench_runs' server: asyncio, HTTP/1.1, connections kept, answers
  after 200 ms): ``--requests`` calls at concurrency 32 and 64 through (1) raw asyncio streams
  with no HTTP library (what the server allows: if this row is near 2.0 the server is not the
  ceiling), (2) bare httpx with one pool of 100 kept-alive connections, (3) the same in pools of 8
  with httpcore's default (anyio) sockets, (4) httpx as ThoughtDesk uses it through a proxy
  (``new_client``'s httpx path: pools of 8, sockets on asyncio directly:
  core/generation/backends/network.py), (5) ThoughtDesk's client as a model call uses it
  (``post_json`` on direct connections: h11 on asyncio, core/generation/backends/direct.py) and
  (6) the whole ThoughtDesk path (ResilientBackend, ProviderGate, OpenAICompatBackend). Ratio 64/32 of the throughput; ideal 2.
  The client's CPU seconds are printed: on a busy 2-core machine a client needing about a core
  at c=64 (httpx costs ~1.5 ms of CPU a request) falls short of 2.0 for want of CPU.
* **Rate-limited server** (tests/helpers/rate_limit_server.py: token bucket of ``--rpm``
  requests a minute holding ``--burst`` seconds of it, 429 + Retry-After when exceeded,
  ``x-ratelimit-*`` headers) and ThoughtDesk's gate (AIMD window + header budget; without
  headers the pacer) at concurrency 64: sustained throughput after the first burst as a
  fraction of the limit (target >= 0.9), and the share of requests answered 429 (target < 5 %),
  over the whole run and after the burst; with and without the headers.
* **10 % random 429s** (Retry-After 1, bench_runs' server) at concurrency 32, as in
  bench_runs (the old gate paused the whole provider at every 429: 0.16 of ideal).

Run: ``PYTHONPATH=desktop:. python tests/benchmarks/bench_rate_limit.py [--requests 1000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import httpcore
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_runs

from thoughtdesk.core.generation.backends import OpenAICompatBackend, RateLimited, Request
from thoughtdesk.core.generation.backends.http import ShardedTransport, new_client, post_json
from thoughtdesk.core.generation.backends.retry import (
    ProviderGate,
    ProviderLimits,
    ResilientBackend,
    RetryPolicy,
)

ROOT = Path(__file__).resolve().parents[2]


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)


async def _post_all(client: httpx.AsyncClient, url: str, requests: int, concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            response = await client.post(
                f"{url}/chat/completions", json={"model": "bench", "messages": [{"role": "user", "content": f"q{i}"}]}
            )
            response.raise_for_status()

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(requests)))
    return time.perf_counter() - started


async def _direct_post_all(url: str, requests: int, concurrency: int) -> float:
    """ThoughtDesk's client as a model call uses it: ``post_json`` (direct connections)."""
    gate = asyncio.Semaphore(concurrency)
    async with new_client(100) as client:

        async def one(i: int) -> None:
            async with gate:
                await post_json(
                    client,
                    provider="openai",
                    url=f"{url}/chat/completions",
                    payload={"model": "bench", "messages": [{"role": "user", "content": f"q{i}"}]},
                    headers={},
                    timeout=60,
                    model="bench",
                )

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(requests)))
        return time.perf_counter() - started


async def _raw_post_all(url: str, requests: int, concurrency: int) -> float:
    """``requests`` calls over ``concurrency`` kept-alive connections, written and read with
    asyncio streams and no HTTP library: what the server allows with almost no client work."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": "q"}]}).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
    message = (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    left = [requests]

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        while left[0] > 0:
            left[0] -= 1
            writer.write(message)
            answer = await reader.readuntil(b"\r\n\r\n")
            assert answer.startswith(b"HTTP/1.1 200"), answer[:40]
            length = next(
                int(line.split(b":")[1])
                for line in answer.lower().split(b"\r\n")
                if line.startswith(b"content-length:")
            )
            await reader.readexactly(length)
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(concurrency)))
    return time.perf_counter() - started


async def _gate_post_all(url: str, requests: int, concurrency: int) -> float:
    """The whole ThoughtDesk path: ResilientBackend, ProviderGate and OpenAICompatBackend."""
    elapsed, _gate, failed = await _gate_run(url, requests, concurrency)
    assert failed == 0, f"{failed} requests failed"
    return elapsed


def _anyio_client() -> httpx.AsyncClient:
    """ThoughtDesk's client as it was before its sockets ran on asyncio directly: httpcore's
    default network backend (anyio) in the same pools of 8."""
    transport = ShardedTransport(100)
    for pool in transport._pools:
        pool._pool._network_backend = httpcore.AnyIOBackend()  # the default, back
    return httpx.AsyncClient(transport=transport, trust_env=False)


def keep_alive_rows(requests: int) -> list[tuple[str, float, float | None, str]]:
    rows: list[tuple[str, float, float | None, str]] = []
    server, url = bench_runs.start_server(bench_runs.__file__)

    def with_client(factory):
        async def run(c: int) -> float:
            async with factory() as client:
                return await _post_all(client, url, requests, c)

        return run

    try:
        for name, runner in (
            ("raw asyncio streams (no HTTP library)", lambda c: _raw_post_all(url, requests, c)),
            (
                "bare httpx, one pool of 100",
                with_client(
                    lambda: httpx.AsyncClient(
                        trust_env=False, limits=httpx.Limits(max_connections=100, max_keepalive_connections=100)
                    )
                ),
            ),
            ("httpx, pools of 8, anyio sockets (before)", with_client(_anyio_client)),
            ("httpx, pools of 8, asyncio sockets (proxied calls)", with_client(lambda: new_client(100))),
            ("ThoughtDesk client: post_json, direct h11", lambda c: _direct_post_all(url, requests, c)),
            ("ThoughtDesk gate + backend + retries", lambda c: _gate_post_all(url, requests, c)),
        ):
            seconds = {}
            for concurrency in (32, 64):

                async def run(c: int = concurrency, runner=runner) -> tuple[float, float]:
                    cpu = time.process_time()
                    elapsed = await runner(c)
                    return elapsed, time.process_time() - cpu

                elapsed, cpu = asyncio.run(run())
                seconds[concurrency] = elapsed
                ideal = requests * bench_runs.DELAY / concurrency
                rows.append((f"{name}, c={concurrency}", elapsed, ideal / elapsed, f"client CPU {cpu:.1f} s"))
            rows.append((f"  {name}: c=64 / c=32 throughput", seconds[32] / seconds[64], None, "ideal 2.0"))
    finally:
        server.terminate()
        server.wait()
    return rows


def _stats(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=10) as answer:
        return json.loads(answer.read())


class PausingGate(ProviderGate):
    """The gate before issue 17 (the baseline): a fixed number of concurrent requests, and
    every 429 with Retry-After pauses the whole provider for that long."""

    def __init__(self, limits: ProviderLimits) -> None:
        super().__init__(limits)
        self._slots = asyncio.Semaphore(limits.concurrency)
        self._paused_until = 0.0

    async def run(self, call, tokens: int):
        async with self._slots:
            while (delay := self._paused_until - time.monotonic()) > 0:
                await asyncio.sleep(delay)
            try:
                return await call()
            except RateLimited as error:
                self.rejected += 1
                if error.retry_after:
                    self._paused_until = max(self._paused_until, time.monotonic() + error.retry_after)
                raise


async def _gate_run(
    url: str, requests: int, concurrency: int, kind: type[ProviderGate] = ProviderGate
) -> tuple[float, ProviderGate, int]:
    """Seconds, the gate, and how many requests failed for good (30 attempts used up: with the
    old gate refusing three requests in four, that happens to a few)."""
    gate = kind(ProviderLimits(concurrency=concurrency))
    backend = ResilientBackend(
        OpenAICompatBackend(url), gate=gate, retry=RetryPolicy(max_attempts=30, initial_wait=0.1, max_wait=2.0)
    )
    started = time.perf_counter()
    try:
        results = await asyncio.gather(
            *(backend.complete(Request(model="bench", prompt=f"q{i}", max_tokens=16)) for i in range(requests)),
            return_exceptions=True,
        )
    finally:
        await backend.aclose()
    failed = sum(isinstance(result, BaseException) for result in results)
    return time.perf_counter() - started, gate, failed


def rate_limit_rows(requests: int, rpm: float, burst: float) -> list[tuple[str, float, float | None, str]]:
    rows: list[tuple[str, float, float | None, str]] = []
    limit = rpm / 60.0
    for headers, kind in ((True, ProviderGate), (False, ProviderGate), (True, PausingGate)):
        port = _port()
        command = [sys.executable, "-m", "tests.helpers.rate_limit_server", "--port", str(port)]
        command += ["--rpm", str(rpm), "--burst-seconds", str(burst), "--delay", "0.2"]
        if not headers:
            command.append("--no-headers")
        server = subprocess.Popen(command, cwd=ROOT)
        try:
            _wait_for(port)
            elapsed, gate, failed = asyncio.run(_gate_run(f"http://127.0.0.1:{port}/v1", requests, 64, kind))
            stats = _stats(port)
        finally:
            server.terminate()
            server.wait()
        times = stats["admit_times"]
        # the bucket starts full: "sustained" is the rate after the first burst (its size, and
        # a second more to settle)
        steady = [t for t in times if t >= burst + 1.0]
        rate = (len(steady) - 1) / (steady[-1] - steady[0]) if len(steady) > 1 else 0.0
        share = stats["rejected"] / (stats["admitted"] + stats["rejected"])
        # the same steady part for the 429s (the burst's end costs a round of 429s however
        # long the run: about the window less the limit times the latency)
        late = [t for t in stats.get("reject_times", []) if t >= burst + 1.0]
        late_share = len(late) / (len(late) + len(steady)) if steady else 0.0
        name = "old gate (pauses all)" if kind is PausingGate else "gate"
        rows.append(
            (
                f"{name} c=64, {'with' if headers else 'no'} x-ratelimit headers",
                elapsed,
                rate / limit,
                f"{rate:.1f}/s of {limit:.1f}/s sustained; {stats['rejected']} of "
                f"{stats['admitted'] + stats['rejected']} answered 429 ({100 * share:.1f} %; after the burst "
                f"{100 * late_share:.1f} %); window {gate.window:.1f}"
                + (f"; {failed} failed after 30 attempts" if failed else ""),
            )
        )
    return rows


def random_429_rows(requests: int) -> list[tuple[str, float, float | None, str]]:
    rows: list[tuple[str, float, float | None, str]] = []
    server, url = bench_runs.start_server(bench_runs.__file__, "--rate-429", "0.1")
    try:
        for kind in (ProviderGate, PausingGate):
            elapsed, gate, failed = asyncio.run(_gate_run(url, requests, 32, kind))
            ideal = requests * bench_runs.DELAY / 32
            name = "old gate (pauses all)" if kind is PausingGate else "gate"
            note = f"{gate.rejected} 429s; window {gate.window:.1f}" + (f"; {failed} failed" if failed else "")
            rows.append((f"{name} c=32, 10 % random 429 (Retry-After 1)", elapsed, ideal / elapsed, note))
    finally:
        server.terminate()
        server.wait()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--limited-requests", type=int, default=800)
    parser.add_argument("--rpm", type=float, default=1800)
    parser.add_argument("--burst", type=float, default=5.0)
    args = parser.parse_args()
    sniffio = importlib.util.find_spec("sniffio") is not None
    rows = keep_alive_rows(args.requests)
    rows += rate_limit_rows(args.limited_requests, args.rpm, args.burst)
    rows += random_429_rows(args.requests)
    print(
        f"\n{args.requests} requests (rate limit: {args.limited_requests}); server answers after 200 ms; "
        f"sniffio installed: {sniffio} (httpcore imports it on every lock: without it each failed import "
        "searches sys.path)\n"
    )
    print(f"{'case':<52}{'seconds':>9}{'fraction':>10}  note")
    for name, seconds, fraction, note in rows:
        share = "-" if fraction is None else f"{fraction:.2f}"
        print(f"{name:<52}{seconds:>9.2f}{share:>10}  {note}")
    print("fraction: of ideal (requests x 0.2 s / concurrency), or of the server's limit for the gate rows")


if __name__ == "__main__":
    main()
