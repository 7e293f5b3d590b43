"""Benchmark: how long a second process waits to write while another imports (issue 15, point 5).

Run on demand:  python tests/benchmarks/bench_import_writers.py [--samples 20000] [--repeats 2]

A ThoughtSource file of ``--samples`` GSM8K-shaped samples is imported by a subprocess into a
library holding the demo collection; once the import writes, this process makes one small write
(as an annotation or a run's result would) and times how long it waited. Baseline, measured in
the same run: the import as one transaction (``CHUNK_SECONDS`` = infinity, as before the staged
import), where the writer waits for the rest of the import. Also timed: the import itself.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT))

IMPORT = textwrap.dedent("""
    import sys, time
    from thoughtdesk.core.importing import importer
    from thoughtdesk.core.library.store import Library

    importer.CHUNK_SECONDS = float(sys.argv[3])
    started = time.monotonic()
    with Library.open(sys.argv[1]) as lib:
        importer.import_thoughtsource(lib, sys.argv[2], collection="Big")
    print(time.monotonic() - started)
""")


def one(workdir: Path, big: Path, chunk: float, index: int) -> tuple[float, float]:
    from tests.helpers.libraries import demo_library
    from thoughtdesk.core.library.store import Library

    library = demo_library(workdir / f"lib-{chunk}-{index}.thoughtdesk")
    note = library.with_name(library.name + "-writer.json")
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'desktop'}{os.pathsep}{ROOT}")
    process = subprocess.Popen(
        [sys.executable, "-c", IMPORT, str(library), str(big), str(chunk)], env=env, stdout=subprocess.PIPE, text=True
    )
    while not note.exists():  # the import is writing
        time.sleep(0.02)
    time.sleep(0.5)
    started = time.monotonic()
    with Library.open(library) as lib, lib.transaction() as conn:
        conn.execute("UPDATE collection SET source = source WHERE name = 'demo'")
    waited = time.monotonic() - started
    out, _ = process.communicate(timeout=600)
    return waited, float(out.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    from thoughtdesk.core.importing.importer import CHUNK_SECONDS
    from thoughtdesk.core.paths import resource_path

    workdir = Path(tempfile.mkdtemp(prefix="bench_import_writers_"))
    template = json.loads(resource_path("demo_collection.json").read_text())["gsm8k"]["test"][0]
    big = workdir / "big.json"
    big.write_text(json.dumps({"gsm8k": {"test": [dict(template, id=f"b-{i}") for i in range(args.samples)]}}))
    results: dict[str, list[tuple[float, float]]] = {"one transaction (before)": [], "staged (now)": []}
    for index in range(args.repeats):  # interleaved, so both see the same machine load
        results["one transaction (before)"].append(one(workdir, big, float("inf"), index))
        results["staged (now)"].append(one(workdir, big, CHUNK_SECONDS, index))
    print(f"\nImport of {args.samples:,} samples; a second process writes once while it runs; repeats {args.repeats}.")
    print("Ratio = median over the one-transaction import's median, measured in this run. The machine is shared.\n")
    print(f"{'import':26} {'writer waited s':>16} {'ratio':>6} {'import s':>9} {'ratio':>6}")
    print("-" * 68)
    base_wait = statistics.median(w for w, _ in results["one transaction (before)"])
    base_import = statistics.median(i for _, i in results["one transaction (before)"])
    for name, rows in results.items():
        wait, took = statistics.median(w for w, _ in rows), statistics.median(i for _, i in rows)
        print(f"{name:26} {wait:16.2f} {wait / base_wait:6.2f} {took:9.2f} {took / base_import:6.2f}")


if __name__ == "__main__":
    main()
