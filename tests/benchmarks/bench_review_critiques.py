"""Benchmark: the Review tab with and without critiques, side by side in one run (issue 13).

Run on demand:  python tests/benchmarks/bench_review_critiques.py [--repeats 15] [--critiques 3]

Two real library files hold the same three samples of 60 CoTs (bench_review.py's); in one every
CoT also has ``--critiques`` critiques (the first quoting its CoT, so flaw marks are drawn). Two
``ReviewView``s, offscreen, take turns step by step, so both see the same machine load; the
ratio column is "with critiques" over "without" (the baseline measured in this run). Targets:
next sample < 100 ms, a rating (e) or critique rating (r) written and repainted < 16 ms. Two
windows of 1600x900 make every absolute figure here higher than in bench_review.py (whose
``--critiques 3`` run is the one to hold against the targets): read the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_highlight import p50_p95
from bench_review import add_critiques, write_collection

# PySide6 6.12 on CPython 3.11 drops a reference to None per void Qt call (see bench_review.py).
_NONE_GUARD = [None] * 50_000_000


def _neighbour(pks: list[int], pk: int | None, step: int) -> int | None:
    """The sample ``step`` away from ``pk`` among ``pks``, round the end (the first when ``pk`` is not one)."""
    return pks[(pks.index(pk) + step) % len(pks)] if pk in pks else pks[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--critiques", type=int, default=3, help="critiques per CoT in the second library")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench_review_critiques_"))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["XDG_CONFIG_HOME"] = str(workdir / "config")  # never touch the user's settings

    from PySide6.QtWidgets import QApplication

    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.core.library.store import Library
    from thoughtdesk.ui.review.view import ReviewView

    app = QApplication.instance() or QApplication([])
    write_collection(workdir / "bench.json")
    sides = []
    for per_cot in (0, args.critiques):
        library = Library.open(workdir / f"bench-{per_cot}.thoughtdesk")
        import_thoughtsource(library, workdir / "bench.json", collection="Bench")
        add_critiques(library, per_cot)
        pks = [r[0] for r in library.conn.execute("SELECT id FROM sample ORDER BY id")]
        view = ReviewView()
        view.set_library(library)
        view.resize(1600, 900)
        view.show()
        view.sample_neighbour = partial(_neighbour, pks)
        view.show_sample(pks[0])
        sides.append((library, view))
    app.processEvents()

    def settle() -> None:
        """Let both views finish painting off-screen panels (idle work the other view's timing
        must not include)."""
        while any(view.compare.painter.stale for _library, view in sides):
            app.processEvents()
        app.processEvents()

    def timed(view, action) -> float:
        settle()
        start = time.perf_counter()
        action(view)
        app.processEvents()
        return (time.perf_counter() - start) * 1000.0

    def next_sample(view) -> None:  # n after reading: similarity and critiques prepared ahead
        view.nav.move_sample(+1)
        view.repaint()

    counters: dict[int, int] = {}

    def rate_explanation(view) -> None:  # e then 2 or 3: never the score the CoT has, so it writes
        cot_pk = view.current_cot_pk()
        mine = view.my_explanation_rating(cot_pk) if cot_pk is not None else None
        view.ratings.set_score(3 if mine is not None and mine.score == 2 else 2)

    def rate_critique(view) -> None:  # r then 1 or 2 on the focused critique, never its current rating
        focused = view.focused_critique()
        mine = next((r.score for r in focused.ratings if r.author == view.author), None) if focused else None
        view.ratings.rate_critique(2 if mine == 1 else 1)

    def step_cot(view) -> None:  # j j j j k k k k ...
        counters[-id(view)] = counters.get(-id(view), -1) + 1
        view.move_cot(+1 if counters[-id(view)] % 8 < 4 else -1)

    steps = [
        ("next sample (n), prepared ahead", next_sample, "target < 100 ms"),
        ("next CoT (j/k) + Qt's repaint", step_cot, ""),
        ("label toggle (1) + Qt's repaint", lambda v: v.edits.toggle_label_digit(1), "target < 16 ms"),
        ("rating: e score + Qt's repaint", rate_explanation, "target < 16 ms"),
        ("rating: d dimension + Qt's repaint", lambda v: v.ratings.toggle_dimension_digit(5), ""),
        # r (the prefix key) brings the rating tab to the front and fills it; the digit then writes.
        ("rating tab brought to the front (r, e, d)", lambda v: v.side_tabs.setCurrentIndex(1), ""),
        ("next CoT (j/k) with the rating tab shown", step_cot, ""),
        ("rating: r critique + Qt's repaint", rate_critique, "target < 16 ms"),
    ]
    results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _, _ in steps}
    for _ in range(args.repeats):
        for _library, view in sides:  # the reviewer reads: next sample's similarity and critiques are prepared
            view.prefetch.schedule()
        deadline = time.perf_counter() + 0.3
        while time.perf_counter() < deadline:
            app.processEvents()
            time.sleep(0.005)
        for _library, view in sides:
            view.prefetch.wait()
        app.processEvents()
        for name, action, _note in steps:
            for side, (_library, view) in enumerate(sides):
                results[name][side].append(timed(view, action))
        for _library, view in sides:
            view.side_tabs.setCurrentIndex(0)
    written = sides[1][0].conn.execute("SELECT count(*) FROM critique_rating").fetchone()[0]
    assert written or not args.critiques, "no critique rating was written: that row would time nothing"
    for library, _view in sides:
        assert library.conn.execute("SELECT count(*) FROM explanation_rating").fetchone()[0], "no rating written"

    print(f"\nThe same 3 samples of 60 CoTs, 0 vs {args.critiques} critique(s) per CoT; repeats {args.repeats}.")
    print("Ratio = p50 with critiques / p50 without, both measured in this run, turn by turn.\n")
    print(f"{'step':40} {'without p50':>12} {'with p50':>10} {'with p95':>10} {'ratio':>7}  note")
    print("-" * 100)
    verdicts = []
    for name, _action, note in steps:
        without, with_ = p50_p95(results[name][0]), p50_p95(results[name][1])
        ratio = with_[0] / without[0] if without[0] else float("nan")
        print(f"{name:40} {without[0]:12.2f} {with_[0]:10.2f} {with_[1]:10.2f} {ratio:7.2f}  {note}")
        if note.startswith("target < "):
            verdicts.append((name, with_[0], float(note.split()[2])))
    print()
    for name, value, target in verdicts:
        print(
            f"{name}: {value:.1f} ms with critiques vs target {target:.0f} ms: {'PASS' if value < target else 'FAIL'}"
        )
    for library, view in sides:
        view.prefetch.wait()
        view.close()
        library.close()


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # skip interpreter finalization, where the PySide6 None-refcount bug strikes
