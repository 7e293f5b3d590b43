"""Benchmark: critique-run throughput of the run executor against a local server (issue 13).

A server process on 127.0.0.1 answers every request after 200 ms with a critique in the
Digital Socrates layout. Printed in one run:

* bare concurrent httpx calls at concurrency 32, no storage: this machine's ceiling right now
  (the baseline);
* a ThoughtDesk generation run of the same size (one-step CoTs, as bench_runs.py measures);
* a ThoughtDesk critique run of 1,000 requests (plan every prompt, store every request row,
  send, parse and commit every critique with its request) at concurrency 32.

Each as seconds and as a fraction of the ideal 1000 x 0.2 s / 32 = 6.25 s; the target is a
critique run within 1.25x of the ideal (fraction >= 0.8), as generation runs are. It also checks
that every planned request has exactly one critique.

Each case runs ``--repeats`` times, interleaved, and the best time counts (other jobs on a shared
machine slow single runs; the bare baseline shows how much).

Run: ``PYTHONPATH=desktop /work/main/.venv/bin/python tests/benchmarks/bench_critique_runs.py
[--requests 1000] [--concurrency 32] [--repeats 3]``.
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
import time
from pathlib import Path

import httpx

from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    CotSelection,
    CritiqueSpec,
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_critique_run,
    create_run,
    execute_run,
    plan_critique_run,
    plan_run,
)
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import OnDuplicate, SampleWriter

DELAY = 0.2
CRITIQUE = (
    "The explanation states or suggests the following:\n"
    '* Main flaw (standalone statement): "The explanation skips the subtraction."\n'
    "* Dimension: incomplete_reasoning\n\n"
    "Consider these points for revising the explanation:\n"
    "* General: Show every step.\n"
    "* Specific: Subtract the number you added.\n\n"
    "Explanation score: 3"
)
ANSWER = json.dumps(
    {
        "id": "bench",
        "object": "chat.completion",
        "model": "bench",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": CRITIQUE}}],
        "usage": {"prompt_tokens": 400, "completion_tokens": 80, "total_tokens": 480},
    }
).encode()


# --- the server (its own process, so it does not share the client's GIL) ---------------------


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            await asyncio.sleep(DELAY)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(ANSWER)).encode() + b"\r\n\r\n" + ANSWER
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


# --- the client side ---------------------------------------------------------------------------


def make_library(folder: Path, count: int) -> Path:
    """``count`` multiple-choice samples, each with one generated CoT and its scored answer."""
    path = folder / "bench.thoughtdesk"
    with Library.open(path) as lib:
        with lib.transaction():
            cid = lib.create_collection("bench")
            writer = SampleWriter(lib, cid, OnDuplicate.FAIL)
            for i in range(count):
                cot = GeneratedCot(
                    id=f"c{i}",
                    cot=f"{i} plus 42 is {i + 42}; minus {i} leaves 42. So the answer is B.",
                    answers=[Answer(id=f"a{i}", answer="B", correct_answer=i % 3 != 0)],
                )
                writer.add(
                    "bench",
                    "test",
                    Sample(
                        id=f"q{i}",
                        question=f"What is {i} + 42 - {i}?",
                        type="multiplechoice",
                        choices=["41", "42", "43"],
                        answer=["42"],
                        generated_cot=[cot],
                    ),
                )
            writer.close("bench")
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


async def _raw_httpx(base_url: str, requests: int, concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(trust_env=False, limits=httpx.Limits(max_connections=100)) as client:

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


def _copy(template: Path, folder: Path, name: str) -> Path:
    path = folder / f"{name}-{time.monotonic_ns()}.thoughtdesk"
    shutil.copy(template, path)
    return path


def generation_run(template: Path, folder: Path, base_url: str, requests: int, concurrency: int) -> float:
    path = _copy(template, folder, "generation")
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
    assert final.done == requests and final.failed == 0, final
    return time.perf_counter() - started


def critique_run(template: Path, folder: Path, base_url: str, requests: int, concurrency: int) -> tuple[float, str]:
    path = _copy(template, folder, "critique")
    started = time.perf_counter()
    spec = CritiqueSpec(
        CotSelection("bench", limit=requests), (ModelSpec("openai", "bench", base_url=base_url, max_tokens=512),)
    )
    with Library.open(path) as lib:
        run_id = create_critique_run(lib, plan_critique_run(lib, spec))
    final = execute_run(path, run_id, limits=RunLimits(concurrency=concurrency, max_attempts=10))
    elapsed = time.perf_counter() - started
    assert final.done == requests and final.failed == 0, final
    with Library.open(path) as lib:
        once = lib.conn.execute(
            "SELECT count(*) FROM request q WHERE (SELECT count(*) FROM critique c WHERE c.request_id = q.id) = 1 "
            "AND q.result_critique_pk IS NOT NULL"
        ).fetchone()[0]
        total = lib.conn.execute("SELECT count(*) FROM critique").fetchone()[0]
        parsed = lib.conn.execute("SELECT count(*) FROM critique WHERE dimension = 'incomplete_reasoning'").fetchone()[
            0
        ]
    assert once == requests and total == requests and parsed == requests
    return elapsed, f"{once}/{requests} requests with exactly one critique, {parsed} parsed"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs of each case; the best counts")
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.serve))
        return
    n, c = args.requests, args.concurrency
    folder = Path(tempfile.mkdtemp(prefix="bench-critique-"))
    template = make_library(folder, n)
    ideal = n * DELAY / c
    rows: list[tuple[str, float, str]] = []
    server, url = start_server()
    try:
        # Interleaved repeats, best of each: a machine shared with other jobs slows single runs.
        bare, generation, critique = [], [], []
        note = ""
        for _ in range(args.repeats):
            bare.append(asyncio.run(_raw_httpx(url, n, c)))
            generation.append(generation_run(template, folder, url, n, c))
            seconds, note = critique_run(template, folder, url, n, c)
            critique.append(seconds)
        best = f"best of {args.repeats}"
        rows.append((f"bare httpx, no storage, c={c}", min(bare), f"baseline: ceiling now; {best}"))
        rows.append((f"ThoughtDesk generation run, c={c}", min(generation), f"one-step CoTs; {best}"))
        rows.append((f"ThoughtDesk critique run, c={c}", min(critique), f"{note}; {best}"))
    finally:
        server.terminate()
        server.wait()
    baseline = rows[0][1]
    print(f"\n{n} requests, server answers after {DELAY * 1000:.0f} ms; ideal {ideal:.2f} s at concurrency {c}\n")
    print(f"{'case':<40}{'seconds':>9}{'of ideal':>10}{'x ideal':>9}{'vs bare':>9}  note")
    for name, secs, note in rows:
        print(f"{name:<40}{secs:>9.2f}{ideal / secs:>10.2f}{secs / ideal:>9.2f}{secs / baseline:>9.2f}  {note}")
    critique_seconds = rows[-1][1]
    verdict = "meets" if critique_seconds <= 1.25 * ideal else "misses"
    print(
        f"\ncritique run: {critique_seconds / ideal:.2f}x the ideal ({verdict} the 1.25x target); "
        f"bare httpx on this machine now: {baseline / ideal:.2f}x, so the run adds {critique_seconds / baseline:.2f}x"
    )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
