"""Benchmark: generation throughput of the run executor against a local server (issue 4).

A server process on 127.0.0.1 answers every request after 200 ms. Printed in one run:

* a ThoughtSource-style sequential loop with a 1 s pause after each call (timed over 20
  requests, extrapolated to 1,000);
* ThoughtDesk (plan, store every request row, send, commit every result) at concurrency 1, 8,
  32 and 64, as a fraction of the ideal 1000 x 0.2 s / concurrency (target >= 0.8 at 32);
* the same with 10 % of answers being 429 with ``Retry-After: 1``: all 1,000 must be stored,
  none twice.

Run: ``/work/venv/bin/python tests/benchmarks/bench_runs.py [--requests 1000] [--c1-requests 100]``.
Concurrency 1 takes 200 s for 1,000 requests; by default it runs ``--c1-requests`` and
extrapolates (said so in the table).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import OnDuplicate, SampleWriter

DELAY = 0.2
ANSWER = json.dumps(
    {
        "id": "bench",
        "object": "chat.completion",
        "model": "bench",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Step one. Step two. The answer is 42."},
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }
).encode()


# --- the server (runs in its own process so it does not share the client's GIL) -------------


async def _handle(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    rate_429: float,
    rng: random.Random,
    counts: dict[str, int],
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            await asyncio.sleep(DELAY)
            if rng.random() < rate_429:
                counts["429"] += 1
                body = b'{"error": {"message": "rate limited"}}'
                status = b"429 Too Many Requests\r\nRetry-After: 1"
            else:
                counts["200"] += 1
                body, status = ANSWER, b"200 OK"
            writer.write(
                b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve(port: int, rate_429: float) -> None:
    rng = random.Random(4)
    counts = {"200": 0, "429": 0}
    server = await asyncio.start_server(
        lambda r, w: _handle(r, w, rate_429, rng, counts), "127.0.0.1", port, backlog=512
    )
    async with server:
        await server.serve_forever()


def start_server(rate_429: float = 0.0) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--rate-429", str(rate_429)])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, f"http://127.0.0.1:{port}/v1"


# --- the client side ---------------------------------------------------------------------------


def make_library(folder: Path, count: int) -> Path:
    path = folder / "bench.thoughtdesk"
    with Library.open(path) as lib:
        with lib.transaction():
            cid = lib.create_collection("bench")
            writer = SampleWriter(lib, cid, OnDuplicate.FAIL)
            for i in range(count):
                writer.add(
                    "bench",
                    "test",
                    Sample(id=f"q{i}", question=f"What is {i} + 42 - {i}?", type="number", answer=["42"]),
                )
            writer.close("bench")
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def thoughtsource_loop(base_url: str, requests: int) -> float:
    """Seconds for ``requests`` calls made one at a time with a 1 s pause after each."""
    started = time.perf_counter()
    with httpx.Client(trust_env=False) as client:
        for i in range(requests):
            client.post(
                f"{base_url}/chat/completions",
                json={"model": "bench", "messages": [{"role": "user", "content": f"q{i}"}]},
            ).raise_for_status()
            time.sleep(1.0)
    return time.perf_counter() - started


async def _raw_httpx(base_url: str, requests: int, concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)
    # Every connection kept alive: httpx's default keeps 20, so at concurrency 64 the baseline
    # itself closed and reopened 44 connections a round (issue 17.6).
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    async with httpx.AsyncClient(trust_env=False, limits=limits) as client:

        async def one(i: int) -> None:
            async with gate:
                response = await client.post(
                    f"{base_url}/chat/completions",
                    json={"model": "bench", "messages": [{"role": "user", "content": f"q{i}"}]},
                )
                response.raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(requests)))
        return time.perf_counter() - started


def raw_httpx(base_url: str, requests: int, concurrency: int) -> float:
    """Seconds for bare concurrent httpx calls (no storage): what this machine allows right now."""
    return asyncio.run(_raw_httpx(base_url, requests, concurrency))


def thoughtdesk_run(template: Path, folder: Path, base_url: str, requests: int, concurrency: int) -> tuple[float, Path]:
    """Seconds to plan, store and execute ``requests`` one-step requests on a fresh copy."""
    path = folder / f"run-c{concurrency}-{requests}-{time.monotonic_ns()}.thoughtdesk"
    shutil.copy(template, path)
    started = time.perf_counter()
    spec = RunSpec(
        samples=SampleSelection("bench", limit=requests),
        models=(ModelSpec("openai", "bench", base_url=base_url, max_tokens=32),),
        cot_triggers=("kojima-01",),
        mode=PromptMode.ONE_STEP,
    )
    with Library.open(path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    final = execute_run(path, run_id, limits=RunLimits(concurrency=concurrency, max_attempts=10))
    elapsed = time.perf_counter() - started
    assert final.done == requests and final.failed == 0, final
    return elapsed, path


def stored_once(path: Path, requests: int) -> tuple[int, int]:
    """(samples with exactly one CoT, CoTs in total)."""
    with Library.open(path) as lib:
        once = lib.conn.execute(
            "SELECT count(*) FROM sample WHERE n_cots = 1 AND "
            "(SELECT count(*) FROM generated_cot c WHERE c.sample_pk = sample.id) = 1"
        ).fetchone()[0]
        total = lib.conn.execute("SELECT count(*) FROM generated_cot").fetchone()[0]
    return once, total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int)
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--c1-requests", type=int, default=100)
    parser.add_argument("--ts-requests", type=int, default=20)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.serve, args.rate_429))
        return
    n = args.requests
    folder = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    template = make_library(folder, n)
    rows: list[tuple[str, float, float | None, str]] = []
    server, url = start_server()
    try:
        ts = thoughtsource_loop(url, args.ts_requests) * n / args.ts_requests
        rows.append(("ThoughtSource loop, 1 s pause", ts, None, f"estimated from {args.ts_requests} requests"))
        for concurrency in (1, 8, 32, 64):
            count = min(n, args.c1_requests) if concurrency == 1 else n
            seconds, _ = thoughtdesk_run(template, folder, url, count, concurrency)
            note = ""
            if count != n:
                seconds *= n / count
                note = f"measured on {count} requests, x{n / count:g}"
            ideal = n * DELAY / concurrency
            rows.append((f"ThoughtDesk concurrency {concurrency}", seconds, ideal / seconds, note))
            if concurrency >= 32:
                bare = raw_httpx(url, n, concurrency)
                rows.append(
                    (
                        f"  bare httpx, no storage, concurrency {concurrency}",
                        bare,
                        ideal / bare,
                        "baseline: this machine's ceiling in this run",
                    )
                )
    finally:
        server.terminate()
        server.wait()
    server, url = start_server(rate_429=0.1)
    try:
        seconds, path = thoughtdesk_run(template, folder, url, n, 32)
        once, total = stored_once(path, n)
        rows.append(
            (
                "ThoughtDesk c=32, 10% 429 (Retry-After 1)",
                seconds,
                n * DELAY / 32 / seconds,
                f"{once}/{n} samples with exactly one CoT, {total} CoTs stored",
            )
        )
        assert once == n and total == n
    finally:
        server.terminate()
        server.wait()
    print(f"\n{n} requests, server answers after {DELAY * 1000:.0f} ms\n")
    print(f"{'case':<44}{'seconds':>10}{'of ideal':>10}{'vs TS':>8}  note")
    for name, seconds, fraction, note in rows:
        share = f"{fraction:.2f}" if fraction is not None else "-"
        print(f"{name:<44}{seconds:>10.1f}{share:>10}{ts / seconds:>7.1f}x  {note}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
