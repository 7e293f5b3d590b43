"""Flat exports (issue 16, point 16) of 5,000 samples x 3 CoTs, each format with and without the
progress and cancel callbacks the GUI's export task passes, against the ThoughtSource export of
the same collection measured in the same run (the baseline).

Run on demand: ``python tests/benchmarks/bench_flat_export.py [--samples 5000] [--cots 3]``.
Prints wall and CPU seconds, samples per second and the CPU ratio to the baseline; the
"+ progress/cancel" rows show what reporting every 200 samples and checking Cancel costs
(a target: within a few per cent of the same format without them).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from thoughtdesk.core.importing.flat_export import FLAT_FORMATS, export_flat  # noqa: E402 - after sys.path
from thoughtdesk.core.importing.importer import export_thoughtsource, import_records  # noqa: E402 - as above
from thoughtdesk.core.library.records import Annotation, Answer, GeneratedCot, Sample  # noqa: E402 - as above
from thoughtdesk.core.library.store import Library  # noqa: E402 - as above

STEPS = [
    "The patient presents with chest pain radiating to the left arm.",
    "An ECG is the first test, because ST elevation changes the management at once.",
    "Troponin is measured as well, but its result takes hours.",
    "So the next step is the ECG, option A.",
]


def build(path: Path, n_samples: int, n_cots: int) -> Library:
    lib = Library.open(path)
    records = []
    for s in range(n_samples):
        cots = [
            GeneratedCot(
                id=f"s{s}-c{c}",
                cot=" ".join(STEPS * 3),
                model=f"model-{c}",
                answers=[Answer(id="a", answer="A" if (s + c) % 3 else "B", correct_answer=bool((s + c) % 3))],
                annotations=[Annotation(key="preferred", value=True)] if c == 0 else [],
            )
            for c in range(n_cots)
        ]
        sample = Sample(
            id=f"s{s}",
            question=f"Question {s}: a 54-year-old with chest pain. What is the next step?",
            choices=["ECG", "Chest X-ray", "CT angiography", "Discharge"],
            answer=["ECG"],
            cot=STEPS,
            generated_cot=cots,
        )
        records.append(("med_qa", "test", sample, ""))
    import_records(lib, records, collection="bench")
    return lib


def timed(fn) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``fn()`` (CPU time tells more on a busy machine)."""
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--cots", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        started = time.perf_counter()
        lib = build(folder / "bench.sqlite", args.samples, args.cots)
        print(f"library: {args.samples} samples x {args.cots} CoTs built in {time.perf_counter() - started:.1f} s")
        base = timed(lambda: export_thoughtsource(lib, "bench", folder / "base.json"))
        rows = [("ThoughtSource JSON (baseline)", base)]
        calls = [0]

        def progress(done: int, total: int) -> None:
            calls[0] += 1

        for fmt in FLAT_FORMATS:
            if fmt == "parquet":
                if importlib.util.find_spec("pyarrow") is None:  # only whether it is there
                    print("parquet: pyarrow is not installed, left out")
                    continue
            out = folder / f"out.{fmt}"
            rows.append((fmt, timed(lambda fmt=fmt, out=out: export_flat(lib, "bench", out, fmt))))
            rows.append(
                (
                    f"{fmt} + progress/cancel",
                    timed(
                        lambda fmt=fmt, out=out: export_flat(
                            lib, "bench", out, fmt, progress=progress, cancel=lambda: False
                        )
                    ),
                )
            )
        print(f"{'what':34} {'wall s':>8} {'CPU s':>8} {'samples/s':>10} {'x baseline (CPU)':>17}")
        for name, (wall, cpu) in rows:
            rate = args.samples / wall if wall else float("inf")
            print(f"{name:34} {wall:8.3f} {cpu:8.3f} {rate:10.0f} {cpu / base[1] if base[1] else 0:17.2f}")
        print(f"progress calls per export: {calls[0] // max(1, len(rows) // 2)}")
        lib.close()


if __name__ == "__main__":
    main()
