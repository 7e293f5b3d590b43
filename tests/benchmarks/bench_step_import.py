"""Importing a PRM800K file: ``import_step_file`` against a plain ``json.loads`` + ``executemany``
baseline of the same rows, on the same generated file, in the same run.

Run on demand: ``python tests/benchmarks/bench_step_import.py [--solutions 100000] [--rounds 3]``.

The file is generated like PRM800K phase 2 (the real one is Git LFS, not available offline):
N labelled solutions over N/8 problems, 6-14 steps each (about 10 step ratings a solution, so
100,000 solutions carry about a million), every step with one completion, the last step of a
solution that found an error with ``chosen_completion`` null and a second, alternative
completion on a tenth of them; ``pre_generated_steps`` repeat the steps, as in the file.

- baseline: read the file line by line, ``json.loads`` each line, ``executemany`` one row per
  solution (problem, labeler, timestamp, the step texts, the question and the rest as JSON) and
  one labels row per solution (each step's rating and flag as JSON, finish reason, time) into a
  fresh SQLite file (WAL, synchronous NORMAL, as a library), one transaction: the rows
  ThoughtDesk writes (a CoT and a step-label row per solution), stored without understanding them;
- ThoughtDesk: ``import_step_file`` into a fresh library: every field checked, one sample per
  problem with counters and full-text index, one generated CoT per solution with its step list,
  a step label per step and a step review per solution, staged and published as every import.

Target (issue 25, point 7): ThoughtDesk within 2.5x of the baseline (best of ``--rounds``). The
table also shows the export back to PRM800K, and the run checks that it equals the file.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))

from thoughtdesk.core.importing.step_files import export_steps, import_step_file  # noqa: E402 - after the path is set
from thoughtdesk.core.library.store import Library  # noqa: E402 - after the path is set

WORDS = "we add the two numbers then divide by three so the total is twelve and x equals four".split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + f" ${rng.randint(1, 99)}$."


def generate(path: Path, count: int, seed: int = 25) -> int:
    """Write ``count`` solutions; return the number of step ratings."""
    rng = random.Random(seed)
    ratings = 0
    problems = []
    for p in range(max(1, count // 8)):
        problems.append(
            {
                "problem": f"Problem {p}: {sentence(rng, 20)}",
                "ground_truth_solution": " ".join(sentence(rng, 12) for _ in range(4)),
                "ground_truth_answer": str(rng.randint(1, 1000)),
            }
        )
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            problem = problems[i % len(problems)]
            texts = [sentence(rng, rng.randint(8, 18)) for _ in range(rng.randint(6, 14))]
            texts[-1] += f"\n\n# Answer\n\n{rng.randint(1, 1000)}"
            error = rng.random() < 0.6
            steps = []
            for k, text in enumerate(texts):
                last = k == len(texts) - 1
                rating = -1 if (error and last) else rng.choice((1, 1, 1, 0))
                completions = [{"text": text, "rating": rating, "flagged": None if rng.random() < 0.9 else False}]
                if error and last and rng.random() < 0.1:
                    completions.append({"text": sentence(rng, 10), "rating": 0, "flagged": False})
                steps.append(
                    {
                        "completions": completions,
                        "human_completion": None,
                        "chosen_completion": None if (error and last) else 0,
                    }
                )
                ratings += len(completions)
            record = {
                "labeler": f"{rng.randint(0, 60):08x}-0000-4000-8000-000000000000",
                "timestamp": f"2023-01-{1 + i % 28:02d}T04:34:27.052924",
                "generation": rng.randint(1, 10),
                "is_quality_control_question": rng.random() < 0.05,
                "is_initial_screening_question": False,
                "question": {
                    **problem,
                    "pre_generated_steps": texts,
                    "pre_generated_answer": str(rng.randint(1, 1000)),
                    "pre_generated_verifier_score": rng.random(),
                },
                "label": {
                    "steps": steps,
                    "total_time": rng.randint(5_000, 600_000),
                    "finish_reason": "found_error" if error else "solution",
                },
            }
            out.write(json.dumps(record) + "\n")
    return ratings


def baseline(path: Path, db: Path) -> tuple[float, float]:
    conn = sqlite3.connect(db, isolation_level=None)
    # The library's own settings (core/library/store.py), so the comparison is of the work done.
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE solution (id INTEGER PRIMARY KEY, problem, labeler, timestamp, steps, question, rest)")
    conn.execute("CREATE TABLE labels (solution, labeler, ratings, finish_reason, total_time)")
    start, cpu = time.perf_counter(), time.process_time()
    solutions, labels = [], []
    with path.open("r", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            r = json.loads(line)
            question, label = r["question"], r["label"]
            rest = {k: v for k, v in r.items() if k not in ("question", "label")}
            chosen = [step["completions"][step["chosen_completion"] or 0] for step in label["steps"]]
            solutions.append(
                (
                    number,
                    question["problem"],
                    r.get("labeler"),
                    r.get("timestamp"),
                    json.dumps([c["text"] for c in chosen]),
                    json.dumps(question),
                    json.dumps(rest),
                )
            )
            ratings = json.dumps([[c["rating"], c["flagged"]] for c in chosen])
            labels.append((number, r.get("labeler"), ratings, label.get("finish_reason"), label.get("total_time")))
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO solution VALUES (?, ?, ?, ?, ?, ?, ?)", solutions)
    conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?, ?)", labels)
    conn.execute("COMMIT")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    conn.close()
    return seconds, cpu


def ours(path: Path, library: Path) -> tuple[float, float]:
    with Library.open(library) as lib:  # schema created before the clock starts, as for the baseline
        start, cpu = time.perf_counter(), time.process_time()
        report = import_step_file(lib, path, collection="bench")
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert report.solutions == sum(1 for _ in path.open(encoding="utf-8"))
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solutions", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "phase2_bench.jsonl"
        ratings = generate(data, args.solutions)
        size = data.stat().st_size / 1e6
        base_times, our_times = [], []
        for round_ in range(args.rounds):
            base_times.append(baseline(data, folder / f"base{round_}.db"))
            (folder / f"base{round_}.db").unlink()
            our_times.append(ours(data, folder / f"lib{round_}.thoughtdesk"))
            if round_:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{folder / f'lib{round_}.thoughtdesk'}{suffix}").unlink(missing_ok=True)
        with Library.open(folder / "lib0.thoughtdesk") as lib:
            start = time.perf_counter()
            export_steps(lib, "bench", folder / "back.jsonl", "prm800k")
            export_seconds = time.perf_counter() - start
            counts = {
                t: lib.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("sample", "generated_cot", "step_label")
            }
        with data.open(encoding="utf-8") as a, (folder / "back.jsonl").open(encoding="utf-8") as b:
            for line_a, line_b in zip(a, b, strict=True):
                assert json.loads(line_a) == json.loads(line_b), "the export differs from the file"
    base, best = min(t for t, _ in base_times), min(t for t, _ in our_times)
    base_cpu, best_cpu = min(c for _, c in base_times), min(c for _, c in our_times)
    print(f"{args.solutions} PRM800K solutions, {ratings} step ratings ({size:.1f} MB); stored: {counts}")
    print(
        f"{'operation (best of ' + str(args.rounds) + ')':<52} {'wall s':>8} {'x base':>7} {'CPU s':>7} {'x base':>7}"
    )
    print(f"{'json.loads + executemany (baseline)':<52} {base:>8.3f} {1.0:>7.2f} {base_cpu:>7.3f} {1.0:>7.2f}")
    print(
        f"{'import_step_file (checked, samples, CoTs, labels)':<52} {best:>8.3f} {best / base:>7.2f} "
        f"{best_cpu:>7.3f} {best_cpu / base_cpu:>7.2f}"
    )
    print(f"{'export prm800k (equal to the file: checked)':<52} {export_seconds:>8.3f} {export_seconds / base:>7.2f}")
    # Wall time decides; CPU time is shown because a shared machine's load moves wall time a lot.
    verdict = "within" if best / base <= 2.5 else "NOT within"
    print(f"target: import within 2.5x of the baseline (wall): {verdict} ({best / base:.2f}x)")


if __name__ == "__main__":
    main()
