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
import json
import shutil
import tempfile
import time
from pathlib import Path

import httpx
from runs_setup import DELAY, copy_library, one_step_run, raw_client, sample_library, serve, start_server, stored_once

from thoughtdesk.core.generation.runs import RunLimits

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


def thoughtdesk_run(template: Path, folder: Path, base_url: str, requests: int, concurrency: int) -> tuple[float, Path]:
    """Seconds to plan, store and execute ``requests`` one-step requests on a fresh copy."""
    path = copy_library(template, folder, f"run-c{concurrency}-{requests}")
    return one_step_run(path, [base_url], requests, RunLimits(concurrency=concurrency, max_attempts=10)), path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int)
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--c1-requests", type=int, default=100)
    parser.add_argument("--ts-requests", type=int, default=20)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, ANSWER, args.rate_429)
        return
    n = args.requests
    folder = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    template = sample_library(folder, n, answer_type="number")
    rows: list[tuple[str, float, float | None, str]] = []
    server, url = start_server(__file__)
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
                bare = raw_client(url, n, concurrency)
                rows.append(
                    (
                        f"  the HTTP client alone, no storage, c={concurrency}",
                        bare,
                        ideal / bare,
                        "baseline: this machine's ceiling in this run",
                    )
                )
        seconds_at = {
            int(name.rsplit(" ", 1)[1]): seconds
            for name, seconds, _, _ in rows
            if name.startswith("ThoughtDesk concurrency")
        }
        rows.append(("ThoughtDesk c=64 / c=32 throughput", seconds_at[32] / seconds_at[64], None, "ideal 2.0"))
    finally:
        server.terminate()
        server.wait()
    server, url = start_server(__file__, "--rate-429", "0.1")
    try:
        seconds, path = thoughtdesk_run(template, folder, url, n, 32)
        once, total = stored_once(path)
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
        if "throughput" in name:  # a ratio, not seconds
            print(f"{name:<44}{seconds:>10.2f}{'-':>10}{'-':>8}  {note}")
            continue
        share = f"{fraction:.2f}" if fraction is not None else "-"
        print(f"{name:<44}{seconds:>10.1f}{share:>10}{ts / seconds:>7.1f}x  {note}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
