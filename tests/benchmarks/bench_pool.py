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
import tempfile
import threading
import time
from pathlib import Path

from runs_setup import DELAY, copy_library, one_step_run, sample_library, serve, start_server, stored_once

from thoughtdesk.core.generation.backends import OpenAICompatBackend, PooledBackend, ProviderLimits, Request
from thoughtdesk.core.generation.runs import RunLimits

ANSWER = json.dumps(
    {
        "id": "bench",
        "object": "chat.completion",
        "model": "bench",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "42."}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 3, "total_tokens": 53},
    }
).encode()


def run_on(template: Path, folder: Path, urls: list[str], requests: int, concurrency: int) -> tuple[float, Path]:
    """Seconds to plan, store and execute ``requests`` one-step requests on the servers ``urls``."""
    path = copy_library(template, folder, f"run-{len(urls)}")
    limits = RunLimits(concurrency=concurrency, max_attempts=10, initial_wait=0.2)
    return one_step_run(path, urls, requests, limits), path


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=8, help="per endpoint")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, ANSWER)
        return
    n, c = args.requests, args.concurrency
    folder = Path(tempfile.mkdtemp(prefix="bench-pool-"))
    template = sample_library(folder, n)
    rows: list[tuple[str, float, str]] = []
    first, first_url = start_server(__file__)
    second, second_url = start_server(__file__)
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
