"""Benchmark: opening a sample with long unbroken text in the Samples and Review tabs (issue 15,
point 7: a 10 MB one-word question took 40 s to open its collection, then froze the window).

Run on demand:  python tests/benchmarks/bench_long_text.py [--repeats 5]

For each length (1 kB, 100 kB, 1 MB, 10 MB) a real library holds one sample whose question is
one unbroken word of that length and whose first CoT is one unbroken word of a tenth of it
(at least 1 kB). Timed, offscreen in a 1366x768 window: showing the sample in the Samples
detail pane (read from the library and laid out) and in the Review tab (read, compared,
every panel painted). Median and worst of ``--repeats``; the ratio column is against the 1 kB
sample, measured in the same run. Target: every sample under 200 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT))

# PySide6 6.12 on CPython 3.11 drops a reference to None per void Qt call (see bench_review.py).
_NONE_GUARD = [None] * 50_000_000

LENGTHS = [("1 kB", 1_000), ("100 kB", 100_000), ("1 MB", 1_000_000), ("10 MB", 10_000_000)]
TARGET_MS = 200.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench_long_text_"))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["XDG_CONFIG_HOME"] = str(workdir / "config")  # never touch the user's settings

    from PySide6.QtWidgets import QApplication

    from tests.helpers.libraries import long_text_library
    from thoughtdesk.core.library.store import Library
    from thoughtdesk.ui.app.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    results: dict[str, tuple[list[float], list[float]]] = {}
    for name, chars in LENGTHS:
        path = long_text_library(workdir / f"long-{chars}.thoughtdesk", chars, max(1_000, chars // 10))
        window = MainWindow(Library.open(path))
        window.resize(1366, 768)
        window.show()
        deadline = time.perf_counter() + 60
        while window.samples.detail.current is None and time.perf_counter() < deadline:
            app.processEvents()
        pk = window.samples.detail.current.pk
        samples, review = [], []
        window.tabs.setCurrentWidget(window.review.view)
        window.review.view.show_sample(pk)
        app.processEvents()
        for _ in range(args.repeats):
            window.tabs.setCurrentWidget(window.samples)
            app.processEvents()
            start = time.perf_counter()
            window.samples.detail.clear()
            window.samples._show_detail(window.library, _load(window.library, pk))
            window.samples.detail.grab()
            samples.append((time.perf_counter() - start) * 1000.0)

            window.tabs.setCurrentWidget(window.review.view)
            app.processEvents()
            view = window.review.view
            start = time.perf_counter()
            view.show_sample(pk)
            view.compare.paint_all()
            view.grab()
            review.append((time.perf_counter() - start) * 1000.0)
        results[name] = (samples, review)
        window.close()
        window.library.close()
        app.processEvents()

    print(f"\nOne sample with an unbroken question of each length (CoT a tenth of it); repeats {args.repeats}.")
    print("Ratio = median over the 1 kB sample's median, measured in this run. The machine is shared.\n")
    print(f"{'text':8} {'Samples p50':>12} {'worst':>8} {'ratio':>6}   {'Review p50':>11} {'worst':>8} {'ratio':>6}")
    print("-" * 70)
    base_s = statistics.median(results[LENGTHS[0][0]][0])
    base_r = statistics.median(results[LENGTHS[0][0]][1])
    verdicts = []
    for name, _chars in LENGTHS:
        samples, review = results[name]
        ms, mr = statistics.median(samples), statistics.median(review)
        print(
            f"{name:8} {ms:12.1f} {max(samples):8.1f} {ms / base_s:6.2f}   {mr:11.1f} {max(review):8.1f} {mr / base_r:6.2f}"
        )
        verdicts.append(max(ms, mr))
    worst = max(verdicts)
    print(f"\nslowest median {worst:.1f} ms vs target {TARGET_MS:.0f} ms: {'PASS' if worst < TARGET_MS else 'FAIL'}")


def _load(library, pk):
    from thoughtdesk.core.library.reader import load_sample

    return load_sample(library, pk)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # skip interpreter finalization, where the PySide6 None-refcount bug strikes
