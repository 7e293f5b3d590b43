"""Benchmark: the Review tab with one sample of 60 CoTs of about 12 sentences (issue 6).

Run on demand:  python tests/benchmarks/bench_review.py [--repeats 20] [--critiques 3]

``--critiques N`` gives every CoT N critiques (the first quoting the CoT, so flaw marks are
drawn) and times the human-rating keys too (issue 13: explanation score and critique rating
written and repainted < 16 ms; the next sample still < 100 ms with the critiques read).

Targets: highlight computation p50 < 50 ms; the compare view repainted < 100 ms after moving to
the next sample; toggling a label repaints < 16 ms; rating a step in the Steps tab (issue 25) repaints
< 16 ms. Everything runs on a real library file
(SQLite, WAL) and the real ``ReviewView`` offscreen; each step is timed up to and including a
synchronous ``repaint()`` of the view, i.e. until the user sees the result. Ratios are against
the highlight computation measured in the same run; the "rebuild" baseline is the first compare
view's approach (new panels for every CoT, all painted at once), also measured in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_highlight import build_sample, p50_p95, timings

N_SAMPLES = 3
# PySide6 6.12.0 on CPython 3.11 drops one reference to None per call of a void Qt method
# (QTextEdit.setHtml, QWidget.setFixedHeight...: measured with sys.getrefcount(None)); None is
# not immortal before 3.12, so a long run dies with "none_dealloc". Holding extra references
# keeps this benchmark alive; it does not change any timing.
_NONE_GUARD = [None] * 50_000_000


def write_collection(path: Path) -> str:
    """A ThoughtSource file with three samples of 60 generated CoTs each; returns the source."""
    samples, source = [], ""
    for number in range(N_SAMPLES):
        cots, source = build_sample(seed=number + 1)
        samples.append(
            {
                "id": f"bench_{number}",
                "question": f"Benchmark question {number}?",
                "type": "multiplechoice",
                "choices": ["A", "B", "C", "D"],
                "answer": ["B"],
                "cot": [cots[0][:200]],
                "context": "",
                "generated_cot": [
                    {
                        "id": f"c{number}-{i}",
                        "cot": text,
                        "model": repr({"name": f"model-{i % 3}"}),
                        "cot_trigger": f"prompt-{i % 2}",
                        "instruction": None,
                        "annotations": [],
                        "answers": [
                            {"id": f"a{number}-{i}", "answer": "B" if i % 2 else "C", "correct_answer": i % 2 == 1}
                        ],
                    }
                    for i, text in enumerate(cots)
                ],
            }
        )
    path.write_text(json.dumps({"med_qa": {"test": samples}}), encoding="utf-8")
    return source


def add_critiques(library, per_cot: int) -> None:
    """``per_cot`` critiques of every CoT; the first one's main flaw quotes a stretch of the CoT."""
    from thoughtdesk.core.critiques import ELEMENTS, Critique, ElementOutcome, ParsedCritique, add_critique

    outcomes = {e: ElementOutcome("parsed") for e in ELEMENTS}
    rows = library.conn.execute("SELECT id, cot FROM generated_cot").fetchall()
    with library.transaction() as conn:
        for cot_pk, text in rows:
            words = (text or "").split()
            for number in range(per_cot):
                quote = " ".join(words[5:12]) if number == 0 else ""
                flaw = f'The explanation states "{quote}", which is unsupported.' if quote else "None"
                parsed = ParsedCritique(
                    flaw,
                    "incorrect_reasoning",
                    "General feedback " * 8,
                    "Specific feedback " * 8,
                    float(number % 6),
                    outcomes,
                )
                add_critique(conn, Critique(cot_pk, f"critic-{number}", f"critique {number} of {cot_pk}", parsed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--critiques", type=int, default=0, help="critiques per CoT (default 0)")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench_review_"))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["XDG_CONFIG_HOME"] = str(workdir / "config")  # never touch the user's settings

    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication

    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.core.library.store import Library
    from thoughtdesk.core.review.compare.similarity import (
        DEFAULT_THRESHOLD,
        SimilarityMatrix,
        align_sentences,
        group_colours,
    )
    from thoughtdesk.ui.qt import QHBoxLayout, QWidget
    from thoughtdesk.ui.review.compare.cot_panel import CotPanel
    from thoughtdesk.ui.review.compare.safe_text import highlighted_cot_html
    from thoughtdesk.ui.review.view import ReviewView

    app = QApplication.instance() or QApplication([])
    source = write_collection(workdir / "bench.json")
    library = Library.open(workdir / "bench.thoughtdesk")
    import_thoughtsource(library, workdir / "bench.json", collection="Bench")
    if args.critiques:
        add_critiques(library, args.critiques)
    pks = [r[0] for r in library.conn.execute("SELECT id FROM sample ORDER BY id")]
    texts = [
        r[0]
        for r in library.conn.execute("SELECT cot FROM generated_cot WHERE sample_pk = ? ORDER BY position", (pks[0],))
    ]

    view = ReviewView()
    view.set_library(library)
    view.resize(1600, 900)
    view.show()
    view.show_sample(pks[-1])
    app.processEvents()
    rows: list[tuple[str, float, float, str]] = []

    highlight = timings(lambda: SimilarityMatrix.compute(texts).groups(DEFAULT_THRESHOLD), args.repeats)
    rows.append(("highlight: split + matrix + groups (60 CoTs)", *p50_p95(highlight), "target p50 < 50 ms"))

    turn = iter(range(10**6))
    view.sample_neighbour = lambda pk, step: pks[(pks.index(pk) + step) % len(pks)] if pk in pks else pks[0]

    def next_sample() -> None:  # n, as the reviewer presses it
        view.nav.move_sample(+1)
        view.repaint()

    def read_for_a_while() -> None:  # the reviewer reads: the next sample is prepared meanwhile
        deadline = time.perf_counter() + 0.4
        while time.perf_counter() < deadline:
            app.processEvents()
            time.sleep(0.005)
        view.prefetch.wait()
        app.processEvents()

    view.prefetch.enabled = False
    cold = timings(next_sample, args.repeats)
    view.prefetch.enabled = True
    ahead: list[float] = []
    for _ in range(args.repeats):
        view.prefetch.schedule()
        read_for_a_while()
        ahead.extend(timings(next_sample, 1))
    rows.append(("next sample (n), similarity computed ahead", *p50_p95(ahead), "target < 100 ms"))
    rows.append(("next sample (n), nothing ahead (cold)", *p50_p95(cold), "e.g. jumping far"))

    fill: list[float] = []
    for _ in range(max(3, args.repeats // 4)):
        next_sample()
        start = time.perf_counter()
        while view.compare.painter.stale:
            app.processEvents()
        fill.append((time.perf_counter() - start) * 1000.0)
    rows.append(("  then off-screen panels in idle steps", *p50_p95(fill), "does not block keys"))

    def toggle_label() -> None:
        view.edits.toggle_label_digit(1)  # write (one transaction) + panel note and check box update
        app.processEvents()  # Qt repaints what changed (the check box, the note, the layout)

    def toggle_label_full() -> None:
        view.edits.toggle_label_digit(1)
        view.repaint()  # upper bound: repaint the whole tab, every visible panel included

    rows.append(("label toggle: write + Qt's repaint", *p50_p95(timings(toggle_label, args.repeats)), "target < 16 ms"))
    rows.append(
        ("label toggle: write + full tab repaint", *p50_p95(timings(toggle_label_full, args.repeats)), "upper bound")
    )

    panel = view.compare.panels[view.compare.current_index()]

    def toggle_span() -> None:
        panel.select_range(10, 40)
        view.edits.toggle_label_digit(2)  # a span label: the CoT's document is re-marked too
        app.processEvents()

    rows.append(("span label toggle: write + re-mark + Qt's repaint", *p50_p95(timings(toggle_span, args.repeats)), ""))

    scores = iter(range(10**6))

    def rate_explanation() -> None:  # e then 2 / 3, alternately: write, re-read the CoT's ratings, show
        view.ratings.set_score(2 + next(scores) % 2)
        app.processEvents()

    def toggle_dimension() -> None:  # d then 5
        view.ratings.toggle_dimension_digit(5)
        app.processEvents()

    rows.append(
        ("rating: e score, write + Qt's repaint", *p50_p95(timings(rate_explanation, args.repeats)), "target < 16 ms")
    )
    rows.append(("rating: d dimension, write + Qt's repaint", *p50_p95(timings(toggle_dimension, args.repeats)), ""))
    if args.critiques:

        def rate_critique() -> None:  # r then 1 / 2, alternately, on the focused critique
            view.ratings.rate_critique(1 + next(scores) % 2)
            app.processEvents()

        def next_critique() -> None:  # f
            view.rating_tab.move_critique(+1)
            app.processEvents()

        rows.append(
            (
                "rating: r critique, write + Qt's repaint",
                *p50_p95(timings(rate_critique, args.repeats)),
                "target < 16 ms",
            )
        )
        rows.append(("focus next critique (f) + Qt's repaint", *p50_p95(timings(next_critique, args.repeats)), ""))
        rated = library.conn.execute("SELECT count(*) FROM critique_rating").fetchone()[0]
        assert rated, "the critique-rating step wrote nothing: its timing would be meaningless"

    def next_cot() -> None:
        view.move_cot(+1 if next(turn) % 8 < 4 else -1)
        app.processEvents()

    rows.append(("next CoT (j/k) + Qt's repaint", *p50_p95(timings(next_cot, args.repeats)), ""))

    def rebuild_baseline() -> None:
        alignment = align_sentences(texts)
        container = QWidget()
        layout = QHBoxLayout(container)
        colours = group_colours(12, "light")
        for index, cot in enumerate(view.compare.cots[1:]):
            built = CotPanel(index, cot, len(alignment.sentences[index]))
            built.setFixedWidth(340)
            layout.addWidget(built)
            built.paint(
                highlighted_cot_html(
                    alignment.texts[index], alignment.sentences[index], alignment.group_of[index], colours
                ),
                alignment.texts[index],
            )
        container.resize(340 * 60, 900)
        container.show()
        container.repaint()
        container.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)

    rows.append(
        (
            "baseline: rebuild 60 panels, paint all",
            *p50_p95(timings(rebuild_baseline, max(3, args.repeats // 4))),
            "first compare view",
        )
    )

    # Step labels (issue 25): the Steps tab shown, a step rated by key (write + the row's repaint),
    # alternately +1 and 0 so every press changes the label; then "first error here", which also
    # rates the steps before it.
    view.show_steps_tab()
    app.processEvents()
    steps = view.steps.steps
    view.steps.index = len(steps) // 2

    def rate_step() -> None:
        view.steps.rate(1 if next(turn) % 2 else 0)
        app.processEvents()

    def first_error_step() -> None:
        view.steps.first_error()  # pressed again it takes the mark off: both are timed
        app.processEvents()

    rows.append(
        (
            f"step rated (of {len(steps)}): write + Qt's repaint",
            *p50_p95(timings(rate_step, args.repeats)),
            "target < 16 ms",
        )
    )
    rows.append(("first error here: write + Qt's repaint", *p50_p95(timings(first_error_step, args.repeats)), ""))

    view.prefetch.wait()
    view.undo_stack.clear()
    view.close()
    view.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    library.close()

    reference = statistics.median(highlight)
    print(
        f"\nOne sample of {len(texts)} CoTs ({source}), {args.critiques} critique(s) per CoT; "
        f"{N_SAMPLES} such samples alternate; repeats {args.repeats}."
    )
    print("Ratio = p50 / p50 of the highlight computation in this run.\n")
    print(f"{'step':48} {'p50 ms':>9} {'p95 ms':>9} {'ratio':>8}  note")
    print("-" * 92)
    for name, p50, p95, note in rows:
        print(f"{name:48} {p50:9.2f} {p95:9.2f} {p50 / reference:8.2f}  {note}")
    verdicts = [
        ("highlight p50", rows[0][1], 50.0),
        ("next sample p50", rows[1][1], 100.0),
        ("next sample (cold) p50", rows[2][1], 100.0),
        ("label toggle p50", rows[4][1], 16.0),
        ("rating (e) p50", rows[7][1], 16.0),
    ]
    if args.critiques:
        verdicts.append(("critique rating (r) p50", rows[9][1], 16.0))
    verdicts.append(("step rated p50", next(r[1] for r in rows if r[0].startswith("step rated")), 16.0))
    print()
    for name, value, target in verdicts:
        print(f"{name} {value:.1f} ms vs target {target:.0f} ms: {'PASS' if value < target else 'FAIL'}")


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # skip interpreter finalization, where the PySide6 None-refcount bug strikes
