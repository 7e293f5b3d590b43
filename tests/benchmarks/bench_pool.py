"""Benchmark: a server pool's throughput against one server (issue 17, point 2).

Local servers (each its own process, so they share no GIL with the client) answer every
request after 200 ms. ThoughtDesk runs (plan, store every request row, send, commit every
result) at the same per-endpoint concurrency on:

* one server (the baseline, measured in the same run);
* a pool of two servers: about twice the throughput (the ratio is printed; target ~2x);
* a pool of two where one server process is killed a third of the way through: every request
  still stored exactly once (checked), the survivor doing the rest.

Run: ``PYTHONPATH=desktop /work/main/.venv/bin/python tests/benchmarks/bench_pool.py
[--requests 600] [--concurrency 8]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from thoughtdesk.core.generation.backends import OpenAICompatBackend, PooledBackend, ProviderLimits, Request
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
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "42."}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 3, "total_tokens": 53},
    }
).encode()


# --- the servers ---------------------------------------------------------------------------------


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:  # keep-alive: one connection serves many requests
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            await asyncio.sleep(DELAY)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(ANSWER)).encode()
                + b"\r\n\r\n"
                + ANSWER
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve(port: int) -> None:
    server = await asyncio.start_server(_handle, "127.0.0.1", port, backlog=512)
    async with server:
        await server.serve_forever()


def start_server() -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, f"http://127.0.0.1:{port}/v1"


# --- the client side -----------------------------------------------------------------------------


def make_library(folder: Path, count: int) -> Path:
    path = folder / "bench.thoughtdesk"
    with Library.open(path) as lib:
        with lib.transaction():
            cid = lib.create_collection("bench")
            writer = SampleWriter(lib, cid, OnDuplicate.FAIL)
            for i in range(count):
                writer.add("bench", "test", Sample(id=f"q{i}", question=f"What is {i} + 42 - {i}?", answer=["42"]))
            writer.close("bench")
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def run_on(template: Path, folder: Path, urls: list[str], requests: int, concurrency: int) -> tuple[float, Path]:
    """Seconds to plan, store and execute ``requests`` one-step requests on the servers ``urls``."""
    path = folder / f"run-{len(urls)}-{time.monotonic_ns()}.thoughtdesk"
    shutil.copy(template, path)
    started = time.perf_counter()
    spec = RunSpec(
        samples=SampleSelection("bench", limit=requests),
        models=(ModelSpec("openai", "bench", base_url=urls[0], more_base_urls=tuple(urls[1:]), max_tokens=32),),
        cot_triggers=("kojima-01",),
        mode=PromptMode.ONE_STEP,
    )
    with Library.open(path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    final = execute_run(path, run_id, limits=RunLimits(concurrency=concurrency, max_attempts=10, initial_wait=0.2))
    elapsed = time.perf_counter() - started
    assert final.done == requests and final.failed == 0, final
    return elapsed, path


async def _bare_pool(urls: list[str], requests: int, concurrency: int) -> float:
    pool = PooledBackend([OpenAICompatBackend(url, model="bench") for url in urls], limits=ProviderLimits(concurrency))
    started = time.perf_counter()
    await asyncio.gather(
        *(pool.complete(Request(model="bench", prompt=f"q{i}", max_tokens=32)) for i in range(requests))
    )
    elapsed = time.perf_counter() - started
    await pool.aclose()
    return elapsed


def bare_pool(urls: list[str], requests: int, concurrency: int) -> float:
    """Seconds for the pool backend alone (no planning, no storage): what spreading itself gives."""
    return asyncio.run(_bare_pool(urls, requests, concurrency))


def stored_once(path: Path) -> tuple[int, int]:
    """(samples with exactly one CoT, CoTs in total)."""
    with Library.open(path) as lib:
        once = lib.conn.execute(
            "SELECT count(*) FROM sample WHERE (SELECT count(*) FROM generated_cot c WHERE c.sample_pk = sample.id) = 1"
        ).fetchone()[0]
        total = lib.conn.execute("SELECT count(*) FROM generated_cot").fetchone()[0]
    return once, total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=8, help="per endpoint")
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.serve))
        return
    n, c = args.requests, args.concurrency
    folder = Path(tempfile.mkdtemp(prefix="bench-pool-"))
    template = make_library(folder, n)
    rows: list[tuple[str, float, str]] = []
    first, first_url = start_server()
    second, second_url = start_server()
    try:
        bare_one = bare_pool([first_url], n, c)
        bare_two = bare_pool([first_url, second_url], n, c)
        one, _ = run_on(template, folder, [first_url], n, c)
        rows.append(("one server (baseline)", one, f"ideal {n * DELAY / c:.1f} s"))
        two, _ = run_on(template, folder, [first_url, second_url], n, c)
        rows.append(("pool of two servers", two, f"ideal {n * DELAY / (2 * c):.1f} s"))
        # A third of the way through (at the pool's pace), the second server's process dies.
        timer = threading.Timer(two / 3, second.kill)
        timer.start()
        killed, path = run_on(template, folder, [first_url, second_url], n, c)
        timer.cancel()
        once, total = stored_once(path)
        assert once == n and total == n, (once, total)
        rows.append(
            ("pool of two, one killed at 1/3", killed, f"{once}/{n} samples with exactly one CoT, {total} stored")
        )
    finally:
        for process in (first, second):
            process.kill()
            process.wait()
    print(f"\n{n} requests, servers answer after {DELAY * 1000:.0f} ms, concurrency {c} per server\n")
    print(f"{'pool backend alone (no storage)':<34}{'seconds':>9}{'req/s':>8}{'vs one':>8}")
    for name, seconds in (("one server", bare_one), ("two servers", bare_two)):
        print(f"  {name:<32}{seconds:>9.2f}{n / seconds:>8.1f}{bare_one / seconds:>7.2f}x")
    print()
    print(f"{'full run (plan, store, commit)':<34}{'seconds':>9}{'req/s':>8}{'vs one':>8}  note")
    for name, seconds, note in rows:
        print(f"  {name:<32}{seconds:>9.2f}{n / seconds:>8.1f}{one / seconds:>7.2f}x  {note}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
