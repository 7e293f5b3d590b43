"""Benchmark: pairwise judging (issue 26, point 6).

Part ``runs``: a pairwise judge run of 1,000 pairs (2,000 requests: every pair in both orders)
against a local server process on 127.0.0.1 that answers every request after 200 ms with a
verdict, at concurrency 32. Printed beside the same number of concurrent calls through
ThoughtDesk's HTTP client alone, without storage (this machine's ceiling right now). The ideal is
2000 x 0.2 s / 32 = 12.5 s; the target is the judge run (planning, request rows, sending, parsing
and committing every verdict with its request) within 1.25x of it. It checks every request holds
exactly one verdict.

Part ``figures``: ``thoughtdesk judgements COLL --json`` over 100,000 verdicts (25,000 samples x 2
CoTs of two conditions, 2 judges, both orders), as a child process the way a user runs it (start-up
included) and in process; the target is under 2 s.

Each case runs ``--repeats`` times (interleaved for the runs), the best counts (other jobs on a
shared machine slow single runs; the bare baseline shows how much).

Run: ``PYTHONPATH=desktop /work/main/.venv/bin/python tests/benchmarks/bench_judges.py
[--part runs|figures|both] [--pairs 1000] [--concurrency 32] [--verdicts 100000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runs_setup import DELAY, copy_library, raw_client, serve, start_server

from thoughtdesk.core.generation.runs import (
    CotSelection,
    JudgeSpec,
    ModelSpec,
    RunLimits,
    create_judge_run,
    execute_run,
    plan_judge_run,
)
from thoughtdesk.core.judges.analysis import analyse_judgements
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import OnDuplicate, SampleWriter

VERDICT = "Assistant A gives the right answer with a sound reason; B does not. [[A]]"
ANSWER = json.dumps(
    {
        "id": "bench",
        "object": "chat.completion",
        "model": "bench",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": VERDICT}}],
        "usage": {"prompt_tokens": 500, "completion_tokens": 30, "total_tokens": 530},
    }
).encode()
ROOT = Path(__file__).resolve().parents[2]


def make_library(folder: Path, samples: int) -> Path:
    """``samples`` multiple-choice samples, each with two CoTs of two conditions (models m1, m2)."""
    path = folder / "bench.thoughtdesk"
    with Library.open(path) as lib:
        with lib.transaction():
            cid = lib.create_collection("bench")
            writer = SampleWriter(lib, cid, OnDuplicate.FAIL)
            for i in range(samples):
                cots = [
                    GeneratedCot(
                        id=f"c{i}-{m}",
                        cot=f"{i} plus 42 is {i + 42}; minus {i} leaves {42 if m == 1 else 41}. So the answer is "
                        f"{'B' if m == 1 else 'A'}.",
                        model=f"m{m}",
                        answers=[Answer(id=f"a{i}-{m}", answer="B" if m == 1 else "A", correct_answer=m == 1)],
                    )
                    for m in (1, 2)
                ]
                writer.add(
                    "bench",
                    "test",
                    Sample(
                        id=f"q{i}",
                        question=f"What is {i} + 42 - {i}?",
                        type="multiplechoice",
                        choices=["41", "42", "43"],
                        answer=["42"],
                        generated_cot=cots,
                    ),
                )
            writer.close("bench")
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def judge_run(template: Path, folder: Path, base_url: str, pairs: int, concurrency: int) -> tuple[float, str]:
    path = copy_library(template, folder, "judge")
    started = time.perf_counter()
    spec = JudgeSpec(CotSelection("bench"), (ModelSpec("openai", "bench", base_url=base_url, max_tokens=256),))
    with Library.open(path) as lib:
        plan = plan_judge_run(lib, spec)
        assert len(plan.pairs) == pairs and plan.total == 2 * pairs
        run_id = create_judge_run(lib, plan)
    final = execute_run(path, run_id, limits=RunLimits(concurrency=concurrency, max_attempts=10))
    elapsed = time.perf_counter() - started
    assert final.done == 2 * pairs and final.failed == 0, final
    with Library.open(path) as lib:
        once = lib.conn.execute(
            "SELECT count(*) FROM request q WHERE (SELECT count(*) FROM judge_verdict v WHERE v.request_id = q.id) = 1 "
            "AND q.result_verdict_pk IS NOT NULL"
        ).fetchone()[0]
        parsed = lib.conn.execute("SELECT count(*) FROM judge_verdict WHERE verdict = 'A'").fetchone()[0]
    assert once == 2 * pairs and parsed == 2 * pairs
    return elapsed, f"{once}/{2 * pairs} requests with exactly one verdict, {parsed} parsed"


def part_runs(args: argparse.Namespace) -> None:
    pairs, c = args.pairs, args.concurrency
    requests = 2 * pairs
    folder = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    template = make_library(folder, pairs)
    ideal = requests * DELAY / c
    server, url = start_server(__file__)
    bare: list[float] = []
    judged: list[float] = []
    note = ""
    try:
        for _ in range(args.repeats):
            bare.append(raw_client(url, requests, c))
            seconds, note = judge_run(template, folder, url, pairs, c)
            judged.append(seconds)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"\n{pairs} pairs = {requests} requests, server answers after {DELAY * 1000:.0f} ms; ideal {ideal:.2f} s at c={c}"
    )
    print(f"{'case':<44}{'seconds':>9}{'x ideal':>9}{'vs bare':>9}  note")
    best = f"best of {args.repeats}"
    for name, secs, what in (
        (f"the HTTP client alone, no storage, c={c}", min(bare), f"baseline: ceiling now; {best}"),
        (f"ThoughtDesk pairwise judge run, c={c}", min(judged), f"{note}; {best}"),
    ):
        print(f"{name:<44}{secs:>9.2f}{secs / ideal:>9.2f}{secs / min(bare):>9.2f}  {what}")
    verdict = "meets" if min(judged) <= 1.25 * ideal else "misses"
    print(
        f"judge run: {min(judged) / ideal:.2f}x the ideal ({verdict} the 1.25x target); all runs: "
        + ", ".join(f"{s:.2f}" for s in judged)
    )


def verdict_library(folder: Path, verdicts: int) -> Path:
    """A library whose collection holds ``verdicts`` judge verdicts: 2 judges x both orders of
    ``verdicts / 4`` pairs; one judge consistent (m1 wins), the other prefers the first shown."""
    samples = verdicts // 4
    path = make_library(folder, samples)
    with Library.open(path) as lib:
        rows = lib.conn.execute(
            "SELECT sample_pk, min(id), max(id) FROM generated_cot GROUP BY sample_pk ORDER BY sample_pk"
        ).fetchall()
        values = []
        for sample, m1, m2 in rows:
            for first, second in ((m1, m2), (m2, m1)):
                values.append((sample, first, second, "right", "A" if first == m1 else "B", m1))
                values.append((sample, first, second, "first", "A", first))
        with lib.transaction() as conn:
            conn.executemany(
                "INSERT INTO judge_verdict (sample_pk, first_cot_pk, second_cot_pk, judge_model, template, "
                "template_version, verdict, preferred_cot_pk, raw_text, created) "
                "VALUES (?, ?, ?, ?, 'td-pairwise-v1', 'v1', ?, ?, 'x', '2026-11-28T10:00:00Z')",
                values,
            )
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def part_figures(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-judgements-"))
    try:
        path = verdict_library(folder, args.verdicts)
        env = {**os.environ, "PYTHONPATH": str(ROOT / "desktop")}
        child: list[float] = []
        child_cpu: list[float] = []
        inside: list[float] = []
        inside_cpu: list[float] = []
        for _ in range(args.repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "thoughtdesk", "--library", str(path), "judgements", "bench", "--json"],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            child.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            child_cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            figures = json.loads(done.stdout)
            started, cpu = time.perf_counter(), time.process_time()
            with Library.open(path) as lib:
                analyse_judgements(lib, "bench")
            inside.append(time.perf_counter() - started)
            inside_cpu.append(time.process_time() - cpu)
        judges = {j["model"]: j for j in figures["judges"]}
        assert sum(j["verdicts"] for j in judges.values()) == args.verdicts
        assert judges["right"]["position_consistency"] == 1.0 and judges["first"]["first_position_rate"] == 1.0
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import sqlite3, json"], check=True)
        bare = time.perf_counter() - started
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\njudgements --json over {args.verdicts:,} verdicts ({args.verdicts // 4:,} pairs x 2 orders x 2 judges)")
    print(
        f"  as a command (start-up included): best {min(child):.2f} s wall, {min(child_cpu):.2f} s CPU "
        f"(all wall: {', '.join(f'{s:.2f}' for s in child)})"
    )
    print(f"  in process (analyse_judgements):  best {min(inside):.2f} s wall, {min(inside_cpu):.2f} s CPU")
    print(f"  a bare python -c 'import sqlite3, json': {bare:.2f} s wall; load average now {os.getloadavg()[0]:.1f}")
    print(
        f"  target under 2 s: {'met' if min(child) < 2.0 else 'missed'} on the wall clock, "
        f"{'met' if min(child_cpu) < 2.0 else 'missed'} in CPU time (what an idle machine takes; one thread)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", type=int)
    parser.add_argument("--part", choices=["runs", "figures", "both"], default="both")
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--verdicts", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each case; the best counts")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, ANSWER)
        return
    if args.part in ("figures", "both"):
        part_figures(args)
    if args.part in ("runs", "both"):
        part_runs(args)


if __name__ == "__main__":
    main()
