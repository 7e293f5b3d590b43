"""Benchmark: parse 200,000 MedMCQA records into Samples with the medmc_qa loader.

Run: /work/venv/bin/python tests/benchmarks/bench_dataset_import_parse.py [N]
The MedMCQA file (../shared/datasets/medmcqa/MedMCQA_test.json) is replicated to N records
(default 200,000). Baselines measured in the same run on the same file: reading the lines only,
and decoding each line with json.loads / msgspec without building Samples, so the table shows
what the conversion to the schema costs on top of the bare parse.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from thoughtdesk.core.datasets import load_dataset

SOURCE = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "medmcqa" / "MedMCQA_test.json"


def _replicate(target: Path, count: int) -> None:
    lines = [line for line in SOURCE.read_bytes().splitlines() if line.strip()]
    with open(target, "wb") as handle:
        for index in range(count):
            handle.write(lines[index % len(lines)])
            handle.write(b"\n")


def _time(label: str, run, count: int, rows: list) -> float:
    start = time.perf_counter()
    produced = run()
    seconds = time.perf_counter() - start
    assert produced == count, (label, produced, count)
    rows.append((label, seconds, count / seconds))
    return seconds


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    if not SOURCE.exists():
        sys.exit(f"{SOURCE} is absent; this benchmark needs ../shared/datasets")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dev.json"  # 'dev.json' -> split validation
        _replicate(path, count)
        rows: list[tuple[str, float, float]] = []

        def read_lines() -> int:
            with open(path, "rb") as handle:
                return sum(1 for line in handle if line.strip())

        def decode_json() -> int:
            with open(path, "rb") as handle:
                return sum(1 for line in handle if json.loads(line))

        def decode_msgspec() -> int:
            decode = msgspec.json.decode
            with open(path, "rb") as handle:
                return sum(1 for line in handle if decode(line))

        def loader() -> int:
            # Ids repeat because the file is replicated; the loader suffixes them, as it must.
            return sum(1 for _ in load_dataset("medmc_qa", path))

        _time("read lines only", read_lines, count, rows)
        _time("json.loads per line (stdlib baseline)", decode_json, count, rows)
        _time("msgspec decode per line", decode_msgspec, count, rows)
        loader_seconds = _time("medmc_qa loader -> Sample", loader, count, rows)
        baseline = rows[1][1]
        print(f"MedMCQA replicated to {count:,} records ({path.stat().st_size / 1e6:.1f} MB)")
        print(f"{'step':42} {'seconds':>8} {'records/s':>12} {'x json.loads':>13}")
        for label, seconds, rate in rows:
            print(f"{label:42} {seconds:8.2f} {rate:12,.0f} {seconds / baseline:13.2f}")
        print(f"\nloader: {count / loader_seconds:,.0f} records/second")


if __name__ == "__main__":
    main()
