"""Benchmark for the critique analysis (issue 13, point 7): the Critiques view redrawn under 200 ms
for 10,000 critiques.

Run on demand:  python tests/benchmarks/bench_critique_view.py [--critiques 10000] [--repeats 5]

Builds a library whose CoTs (4 datasets x 4 student models x 5 triggers) carry critiques by two
critique models, human explanation ratings by two raters on a fifth of the CoTs and two human
ratings on a fifth of the critiques. Measures, in this one run (medians over ``--repeats``):

- baseline: the bare data query (``load_critique_data``: four SELECTs, rows to records);
- ``analyse`` over those rows (pure Python + scipy; background thread in the GUI);
- the redraw of the Critiques view on the GUI thread, offscreen, painted: three tables, the
  human line and the three plots (target: under 200 ms);
- for comparison, the Results tab's accuracy view redrawn with its evaluation of the same
  collection.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from thoughtdesk.core.critiques import DIMENSIONS, Critique, CritiqueRating, ExplanationRating, ParsedCritique
from thoughtdesk.core.critiques.analysis import analyse, load_critique_data
from thoughtdesk.core.critiques.store import add_critique, add_explanation_rating
from thoughtdesk.core.importing.importer import import_records
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample, model_repr
from thoughtdesk.core.library.store import Library

DATASETS = ["gsm8k", "med_qa", "pubmed_qa", "commonsense_qa"]
MODELS = ["gpt-4o-mini", "llama-3.1-8b", "claude-haiku", "mistral-7b"]
TRIGGERS = ["kojima-01", "zhou-01", "qa-01", "plan-01", "none"]
CRITIQUE_MODELS = ["DS-13B", "DS-7B"]


def build_library(path: Path, critiques: int, seed: int = 7) -> int:
    """A library with ``critiques`` critiques (two per CoT); returns how many were written."""
    rng = random.Random(seed)
    cots_wanted = critiques // len(CRITIQUE_MODELS)
    per_sample = len(MODELS) * len(TRIGGERS)
    records = []
    for q in range((cots_wanted + per_sample - 1) // per_sample):
        cots = [
            GeneratedCot(
                id=f"c{q}-{i}",
                cot=f"Step one. Step two. So the answer is {i % 4}.",
                cot_trigger=TRIGGERS[i // len(MODELS) % len(TRIGGERS)],
                model=model_repr(MODELS[i % len(MODELS)], temperature=0),
                answers=[
                    Answer(id=f"a{q}-{i}", answer_extraction="kojima", answer="A", correct_answer=rng.random() < 0.6)
                ],
            )
            for i in range(per_sample)
        ]
        sample = Sample(
            id=f"q{q}",
            question=f"Question {q}?",
            type="multiplechoice",
            choices=["a", "b"],
            answer=["a"],
            generated_cot=cots,
        )
        records.append((DATASETS[q % len(DATASETS)], "test", sample, ""))
    written = 0
    with Library.open(path) as lib:
        import_records(lib, records, collection="bench")
        cot_pks = [pk for (pk,) in lib.conn.execute("SELECT id FROM generated_cot ORDER BY id LIMIT ?", (cots_wanted,))]
        with lib.transaction() as conn:
            for cot in cot_pks:
                for model in CRITIQUE_MODELS:
                    score = float(rng.randint(0, 5))
                    ratings = [CritiqueRating(w, rng.randint(0, 3)) for w in ("w1", "w2")] if rng.random() < 0.2 else []
                    parsed = ParsedCritique(dimension=rng.choice(DIMENSIONS), explanation_score=score)
                    add_critique(conn, Critique(cot, model, "critique", parsed, ratings=ratings))
                    written += 1
                if rng.random() < 0.2:
                    for rater in ("ann", "bob"):
                        add_explanation_rating(conn, cot, ExplanationRating(rater, rng.randint(0, 5)))
    return written


def _median(times: list[float]) -> float:
    return statistics.median(times)


def bench(path: Path, repeats: int) -> dict[str, float]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from thoughtdesk.ui.app.main_window import MainWindow
    from thoughtdesk.ui.app.startup import make_application
    from thoughtdesk.ui.evaluation.view import Snapshot, _evaluate_in_background

    query, analysis_times, redraw, accuracy = [], [], [], []
    with Library.open(path) as lib:
        for _ in range(repeats):
            start = time.perf_counter()
            data = load_critique_data(lib, "bench")
            query.append(time.perf_counter() - start)
            start = time.perf_counter()
            result = analyse(data)
            analysis_times.append(time.perf_counter() - start)
    app = make_application()
    window = MainWindow(Library.open(path))
    window.resize(1366, 768)
    window.show()
    view = window.evaluation
    window.show_tab(view)
    view.views.setCurrentWidget(view.critiques)
    app.processEvents()
    panel = view.critiques
    panel.apply(result)  # first draw: legends and items made once
    panel.grab()
    snapshot: Snapshot | None = _evaluate_in_background(path, "bench")
    for repeat in range(repeats):
        panel.plots.setCurrentIndex(repeat % 3)  # each plot painted in turn
        app.processEvents()
        start = time.perf_counter()
        panel.apply(result)
        panel.grab()  # paint the tables and the visible plot
        app.processEvents()
        redraw.append(time.perf_counter() - start)
    view.views.setCurrentIndex(0)
    app.processEvents()
    for _ in range(repeats):
        start = time.perf_counter()
        view._apply(snapshot)  # the accuracy view's own redraw, for comparison
        view.grab()
        app.processEvents()
        accuracy.append(time.perf_counter() - start)
    assert panel.models_model.rowCount() == len(CRITIQUE_MODELS)
    window.close()
    window.deleteLater()
    app.processEvents()
    return {
        "query": _median(query),
        "analyse": _median(analysis_times),
        "redraw": _median(redraw),
        "accuracy": _median(accuracy),
        "students": len(result.students),
        "points": len(result.points),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--critiques", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_critiques_") as folder:
        path = Path(folder) / "bench.thoughtdesk"
        start = time.perf_counter()
        n = build_library(path, args.critiques)
        print(f"{n:,} critiques stored (library built in {time.perf_counter() - start:.1f} s, not timed below)")
        f = bench(path, max(1, args.repeats))
    base = f["query"]
    print(f"{f['students']} student-condition rows, {f['points']:,} scatter points; medians of {args.repeats} runs")
    print(f"{'what':<62}{'ms':>9}{'vs baseline':>13}")
    rows = [
        ("baseline: bare data query (load_critique_data)", f["query"]),
        ("analyse (background thread)", f["analyse"]),
        ("Critiques view redraw on the GUI thread, painted (target 200)", f["redraw"]),
        ("Results accuracy view redraw, same collection (comparison)", f["accuracy"]),
        ("whole refresh: query + analyse + redraw", f["query"] + f["analyse"] + f["redraw"]),
    ]
    for what, seconds in rows:
        print(f"{what:<62}{seconds * 1000:>9.1f}{seconds / base:>12.2f}x")
    verdict = "OK" if f["redraw"] < 0.2 else "SLOWER THAN TARGET"
    print(f"Critiques view redraw for {n:,} critiques: {f['redraw'] * 1000:.1f} ms -> target 200 ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
