"""Benchmark: critique-run throughput of the run executor against a local server (issue 13).

A server process on 127.0.0.1 answers every request after 200 ms with a critique in the
Digital Socrates layout. Printed in one run:

* concurrent calls through ThoughtDesk's HTTP client alone (post_json) at concurrency 32, no storage: this machine's ceiling right now
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
import json
import shutil
import tempfile
import time
from pathlib import Path

from runs_setup import DELAY, copy_library, one_step_run, raw_client, serve, start_server

from thoughtdesk.core.generation.runs import (
    CotSelection,
    CritiqueSpec,
    ModelSpec,
    RunLimits,
    create_critique_run,
    execute_run,
    plan_critique_run,
)
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import OnDuplicate, SampleWriter

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


def generation_run(template: Path, folder: Path, base_url: str, requests: int, concurrency: int) -> float:
    path = copy_library(template, folder, "generation")
    return one_step_run(path, [base_url], requests, RunLimits(concurrency=concurrency, max_attempts=10))


def critique_run(template: Path, folder: Path, base_url: str, requests: int, concurrency: int) -> tuple[float, str]:
    path = copy_library(template, folder, "critique")
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
        serve(args.serve, ANSWER)
        return
    n, c = args.requests, args.concurrency
    folder = Path(tempfile.mkdtemp(prefix="bench-critique-"))
    template = make_library(folder, n)
    ideal = n * DELAY / c
    rows: list[tuple[str, float, str]] = []
    server, url = start_server(__file__)
    try:
        # Interleaved repeats, best of each: a machine shared with other jobs slows single runs.
        bare, generation, critique = [], [], []
        note = ""
        for _ in range(args.repeats):
            bare.append(raw_client(url, n, c))
            generation.append(generation_run(template, folder, url, n, c))
            seconds, note = critique_run(template, folder, url, n, c)
            critique.append(seconds)
        best = f"best of {args.repeats}"
        rows.append((f"the HTTP client alone, no storage, c={c}", min(bare), f"baseline: ceiling now; {best}"))
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
        f"the HTTP client alone on this machine now: {baseline / ideal:.2f}x, so the run adds {critique_seconds / baseline:.2f}x"
    )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
