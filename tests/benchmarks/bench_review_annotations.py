"""Latency of review actions in the core: toggling a label (with its counter update), reading a
CoT's review back, and merging a reviewer's file, against a bare one-row write transaction on the
same library as the baseline.

Run on demand: ``python tests/benchmarks/bench_review_annotations.py [--cots 60] [--rounds 200]``.
Target (issue 6): toggling a label repaints under 16 ms, so the core's share (write + read back)
must stay a few ms; the table prints p50/p95 in ms and the ratio to the baseline's p50.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))

from thoughtdesk.core.importing.importer import import_records  # noqa: E402 - after the environment is set
from thoughtdesk.core.library.records import GeneratedCot, Sample  # noqa: E402 - after the environment is set
from thoughtdesk.core.library.store import Library  # noqa: E402 - after the environment is set
from thoughtdesk.core.review import (  # noqa: E402 - after the environment is set
    AnnotationStore,
    export_annotations,
    import_annotations,
)

SENTENCE = "The patient presents with chest pain and the ECG shows ST elevation in leads II. "


def build(path: Path, n_samples: int, n_cots: int) -> Library:
    lib = Library.open(path)
    records = []
    for s in range(n_samples):
        cots = [GeneratedCot(id=f"s{s}-c{c}", cot=SENTENCE * 12) for c in range(n_cots)]
        records.append(("med_qa", "test", Sample(id=f"s{s}", question="Q?", generated_cot=cots), ""))
    import_records(lib, records, collection="bench")
    return lib


def timed(fn, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--cots", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        lib = build(Path(folder) / "bench.sqlite", args.samples, args.cots)
        cots = [r[0] for r in lib.conn.execute("SELECT id FROM generated_cot ORDER BY id")]
        store = AnnotationStore(lib, "bench")
        labels = ["Incorrect reasoning", "Too verbose", "Insufficient knowledge"]
        for index, cot in enumerate(cots[: len(cots) // 2]):  # a library with history
            store.toggle_label(cot, labels[index % 3])
        target = cots[len(cots) // 2]
        counter = iter(range(10**9))

        def baseline() -> None:
            with lib.transaction() as conn:
                conn.execute("UPDATE sample SET n_annotations = ? WHERE id = 1", (next(counter),))

        span = store.span(target, 10, 40)
        rows = [
            ("bare one-row write transaction (baseline)", timed(baseline, args.rounds)),
            ("toggle_label, whole CoT", timed(lambda: store.toggle_label(target, "Too verbose"), args.rounds)),
            ("toggle_label, span", timed(lambda: store.toggle_label(target, "Too verbose", span), args.rounds)),
            ("review(cot) read back", timed(lambda: store.review(target), args.rounds)),
            ("sample_annotations(sample of 60)", timed(lambda: store.sample_annotations(1), args.rounds)),
        ]
        exported = Path(folder) / "bench.json"
        n = export_annotations(lib, "bench", exported)
        merge = timed(lambda: import_annotations(lib, exported), 5)
        rows.append((f"re-import {n} annotations (idempotent merge)", merge))
        base = statistics.median(rows[0][1])
        print(f"{'operation':<48} {'p50 ms':>8} {'p95 ms':>8} {'x baseline':>11}")
        for name, samples in rows:
            samples = sorted(samples)
            p50 = statistics.median(samples)
            p95 = samples[min(len(samples) - 1, int(0.95 * len(samples)))]
            print(f"{name:<48} {p50:>8.3f} {p95:>8.3f} {p50 / base:>11.1f}")
        lib.close()


if __name__ == "__main__":
    main()
