"""Importing DS Critique Bank records: ``import_dscb`` against a plain ``json.loads`` +
``executemany`` baseline, on the same generated file, in the same run.

Run on demand: ``python tests/benchmarks/bench_dscb_import.py [--records 10000] [--rounds 3]``.

The file is generated (the real DSCB files are not available offline): N records over N/4
questions (four students each, as DSCB has), 1-3 critiques per record with elements, crowd
annotations on a third of them, explanation annotations on a fifth, some unknown fields.

- baseline: read the file line by line, ``json.loads`` each record, ``executemany`` one row per
  record (its fields as columns, the critiques as JSON text) into a fresh SQLite file (WAL,
  synchronous NORMAL, as a library), one transaction: storing the records without understanding
  them;
- ThoughtDesk: ``import_dscb`` into a fresh library: validation, choices parsed, one sample per
  question with counters and full-text index, one generated CoT and answer per record, critiques
  and ratings as rows, all in one transaction.

Target (issue 13, point 7): ThoughtDesk within 2.5x of the baseline (best of ``--rounds``). The
table also shows the export back to DSCB, and the run checks that it equals the file.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))

from thoughtdesk.core.importing.dscb import export_dscb, import_dscb  # noqa: E402 - after the path is set
from thoughtdesk.core.library.store import Library  # noqa: E402 - after the path is set

STUDENTS = ("gpt-4-0613", "gpt-3.5-turbo-0613", "Llama-2-70b-Chat", "Llama-2-7b-Chat")
CRITICS = ("gpt-4-0613", "DS-13B", "DS-7B")
DIMENSIONS = ("misunderstanding", "incorrect_reasoning", "incorrect_information", "lack_justification", "None")
WORDS = "the heat of the sun makes gases in a closed can expand so the pressure rises and the can bulges".split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def generate(path: Path, count: int, seed: int = 13) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            q, student = divmod(i, len(STUDENTS))
            choices = " ".join(f"({chr(65 + c)}) {sentence(rng, 3)}" for c in range(4))
            gold = rng.choice("ABCD")
            answer = gold if rng.random() < 0.6 else rng.choice("ABCD")
            explanation = " ".join(sentence(rng, 12) for _ in range(3))
            critiques = []
            for c in range(rng.randint(1, 3)):
                flaw = "None" if answer == gold else sentence(rng, 8)
                dimension = "None" if answer == gold else rng.choice(DIMENSIONS[:4])
                score = 5 if answer == gold else rng.randint(0, 3)
                general, specific = sentence(rng, 10), sentence(rng, 12)
                critique: dict[str, Any] = {
                    "critique_model": CRITICS[c],
                    "critique_llm_options": {"max_tokens": 512, "temperature": 0},
                    "critique_text": (
                        "The explanation states or suggests the following:\n"
                        f' * Main flaw (standalone statement): "{flaw}"\n * Dimension: {dimension}\n\n'
                        "Consider these points for revising the explanation:\n"
                        f" * General: {general}\n * Specific: {specific}\n\nExplanation score: {score}"
                    ),
                    "critique_elements": {
                        "main_flaw": flaw,
                        "dimension": dimension,
                        "general_feedback": general,
                        "specific_feedback": specific,
                        "explanation_score": score,
                    },
                }
                if i % 3 == 0:
                    critique["critique_annotations"] = [
                        {"critique_score": rng.randint(0, 3), "worker": f"W{rng.randint(1, 40)}"} for _ in range(2)
                    ]
                critiques.append(critique)
            record: dict[str, Any] = {
                "id": f"Q{q}_{STUDENTS[student]}_QA_explanation1",
                "qid": f"Q{q}",
                "dataset": rng.choice(("ARC-Challenge", "ARC-Easy", "OBQA")) if student == 0 else None,
                "question": f"{sentence(rng, 14)[:-1]}? {choices}",
                "gold_answer": gold,
                "student_model": STUDENTS[student],
                "student_prompt": "QA_explanation1",
                "student_llm_options": {"max_tokens": 512, "temperature": 0},
                "student_answer": answer,
                "student_accuracy": int(answer == gold),
                "student_explanation": explanation,
                "student_raw_output": f"Explanation: {explanation}\nAnswer: ({answer})",
                "critiques": critiques,
            }
            if i % 5 == 0:
                record["explanation_annotations"] = [
                    {"explanation_score": rng.randint(0, 5), "dimensions": [rng.choice(DIMENSIONS[:4])], "worker": "W7"}
                ]
            if i % 50 == 0:
                record["source_batch"] = i // 50
            out.write(json.dumps(record) + "\n")
    # One question's four records share its dataset and question text, as in DSCB.
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for index, record in enumerate(lines):
        first = lines[index - index % len(STUDENTS)]
        record["dataset"], record["question"], record["gold_answer"] = (
            first["dataset"],
            first["question"],
            first["gold_answer"],
        )
        record["student_accuracy"] = int(record["student_answer"] == record["gold_answer"])
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")


BASE_COLUMNS = (
    "id qid dataset question gold_answer student_model student_prompt student_llm_options student_answer "
    "student_accuracy student_explanation student_raw_output critiques explanation_annotations"
).split()


def baseline(path: Path, db: Path) -> tuple[float, float]:
    conn = sqlite3.connect(db, isolation_level=None)
    # The library's own settings (core/library/store.py), so the comparison is of the work done,
    # not of fsync policies.
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"CREATE TABLE records ({', '.join(BASE_COLUMNS)})")
    start, cpu = time.perf_counter(), time.process_time()
    rows = []
    with path.open("r", encoding="utf-8") as handle:
        for line in handle:
            r = json.loads(line)
            rows.append(
                tuple(json.dumps(r.get(k)) if isinstance(r.get(k), dict | list) else r.get(k) for k in BASE_COLUMNS)
            )
    conn.execute("BEGIN")
    conn.executemany(f"INSERT INTO records VALUES ({', '.join('?' * len(BASE_COLUMNS))})", rows)
    conn.execute("COMMIT")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    conn.close()
    return seconds, cpu


def ours(path: Path, library: Path) -> tuple[float, float]:
    with Library.open(library) as lib:  # schema created before the clock starts, as for the baseline
        start, cpu = time.perf_counter(), time.process_time()
        report = import_dscb(lib, path, collection="bench")
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert report.records == sum(1 for _ in path.open(encoding="utf-8"))
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "DSCB-bench.jsonl"
        generate(data, args.records)
        size = data.stat().st_size / 1e6
        base_times, our_times = [], []
        for round_ in range(args.rounds):
            base_times.append(baseline(data, folder / f"base{round_}.db"))
            our_times.append(ours(data, folder / f"lib{round_}.thoughtdesk"))
        with Library.open(folder / "lib0.thoughtdesk") as lib:
            start = time.perf_counter()
            export_dscb(lib, "bench", folder / "back.jsonl")
            export_seconds = time.perf_counter() - start
            counts = {
                t: lib.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("sample", "generated_cot", "critique", "critique_rating", "explanation_rating")
            }
        original = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
        back = [json.loads(line) for line in (folder / "back.jsonl").read_text(encoding="utf-8").splitlines()]
        assert back == original, "the export differs from the file"
    base, best = min(t for t, _ in base_times), min(t for t, _ in our_times)
    base_cpu, best_cpu = min(c for _, c in base_times), min(c for _, c in our_times)
    print(f"{args.records} DSCB records ({size:.1f} MB); stored: {counts}")
    print(
        f"{'operation (best of ' + str(args.rounds) + ')':<52} {'wall s':>8} {'x base':>7} {'CPU s':>7} {'x base':>7}"
    )
    print(f"{'json.loads + executemany (baseline)':<52} {base:>8.3f} {1.0:>7.2f} {base_cpu:>7.3f} {1.0:>7.2f}")
    print(
        f"{'import_dscb (validate, samples, CoTs, critiques)':<52} {best:>8.3f} {best / base:>7.2f} "
        f"{best_cpu:>7.3f} {best_cpu / base_cpu:>7.2f}"
    )
    print(f"{'export_dscb (equal to the file: checked)':<52} {export_seconds:>8.3f} {export_seconds / base:>7.2f}")
    # Wall time decides; CPU time is shown because a shared machine's load moves wall time a lot.
    verdict = "within" if best / base <= 2.5 else "NOT within"
    print(f"target: import within 2.5x of the baseline (wall): {verdict} ({best / base:.2f}x)")


if __name__ == "__main__":
    main()
