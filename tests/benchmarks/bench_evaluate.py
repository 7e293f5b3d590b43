"""Benchmark for evaluation (issue 5): re-scoring stored answers, evaluating, redrawing the Results tab.

Run on demand:  python tests/benchmarks/bench_evaluate.py [--answers 200000] [--conditions 200]

Measures, in this one run:
- ``rescore`` of N stored answers of mixed types (read, extract, write td_* columns, counters, in
  batched transactions), in answers per second, against the baseline of ``extract_answer`` alone
  over the same texts in memory (so the ratio is the cost of the library round trip);
- ``evaluate`` without re-score over the same collection (read answers + accuracy table);
- for 200 conditions: rebuilding the accuracy table and redrawing the Results tab (table model,
  accuracy plot with legend, Pareto plot, correctness map, comparison choosers) on the GUI
  thread, offscreen, painted (target under 200 ms), against the grouping-only baseline.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scoring import CONDITIONS, synthetic_answers

from thoughtdesk.core.evaluation.answers import extract_answer
from thoughtdesk.core.evaluation.evaluate import EvaluationResult, PairedOutcomes, evaluate
from thoughtdesk.core.evaluation.metrics import ScoredAnswer, accuracy_table
from thoughtdesk.core.evaluation.rescoring import rescore
from thoughtdesk.core.importing.importer import import_records
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample, model_repr
from thoughtdesk.core.library.store import Library

MODELS = ["gpt-4o-mini", "llama-3.1-8b", "claude-haiku", "mistral-7b"]
TRIGGERS = ["kojima-01", "zhou-01", "qa-01", "plan-01", "none"]


def build_library(path: Path, total: int) -> list[tuple]:
    """A library with ``total`` answers: questions answered under 20 conditions (4 models x 5 triggers)."""
    answers = synthetic_answers(total)
    records = []
    for q in range(0, len(answers), CONDITIONS):
        group = answers[q : q + CONDITIONS]
        kind, _, _, choices, gold = group[0]
        cots = [
            GeneratedCot(
                id=f"c{q + i}",
                cot=cot,
                cot_trigger=TRIGGERS[i // len(MODELS) % len(TRIGGERS)],
                model=model_repr(MODELS[i % len(MODELS)], temperature=0),
                answers=[Answer(id=f"a{q + i}", answer_extraction="kojima", answer=output, correct_answer=None)],
            )
            for i, (_, output, cot, _, _) in enumerate(group)
        ]
        sample = Sample(
            id=f"q{q // CONDITIONS}",
            question=f"Question {q}",
            type=kind,
            choices=choices,
            answer=gold,
            generated_cot=cots,
        )
        records.append(("synthetic", "test", sample, ""))
    with Library.open(path) as lib:
        import_records(lib, records, collection="bench")
    return answers


def bench_rescore(path: Path, answers: list[tuple]) -> dict[str, float]:
    start = time.perf_counter()
    for kind, output, cot, choices, gold in answers:
        extract_answer(kind, extraction_output=output, cot=cot, choices=choices, gold=gold)
    baseline = time.perf_counter() - start
    with Library.open(path) as lib:
        start = time.perf_counter()
        report = rescore(lib, "bench")
        elapsed = time.perf_counter() - start
        assert report.answers == len(answers)
        start = time.perf_counter()
        result = evaluate(lib, "bench", comparisons=False)
        evaluated = time.perf_counter() - start
        assert result.scored_by_thoughtdesk == len(answers)
    return {"baseline": baseline, "rescore": elapsed, "evaluate": evaluated, "rows": len(result.rows)}


def synthetic_result(conditions: int, questions: int) -> EvaluationResult:
    rng = random.Random(3)
    answers = [
        ScoredAnswer(
            f"ds{c % 4}",
            "test",
            f"model{c % 5}",
            f"cond{c}",
            f"ds{c % 4}/test/q{q}",
            rng.choice(["correct", "correct", "incorrect", "unextractable"]),
            tokens=rng.randrange(50, 500),
            cost=0.001,
        )
        for c in range(conditions)
        for q in range(questions)
    ]
    pks = {sid: i for i, sid in enumerate(dict.fromkeys(a.sample_id for a in answers))}
    return EvaluationResult("bench", [], [], answers, pks, {})


def bench_redraw(conditions: int, questions: int = 100, repeats: int = 5) -> tuple[float, float, float, float, float]:
    """(first draw, live redraw, table alone, grouping baseline, live redraw's CPU time) in seconds;
    the live redraw (same dataset splits, panels reused) is the mean over ``repeats``, the first
    draw builds the panels. The CPU time (of the GUI thread) shows the work on a loaded machine,
    where waiting for a core inflates the wall-clock figure."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from thoughtdesk.ui.app.main_window import MainWindow
    from thoughtdesk.ui.app.startup import make_application
    from thoughtdesk.ui.evaluation.view import Snapshot

    app = make_application()
    folder = Path(tempfile.mkdtemp(prefix="bench_redraw_"))
    window = MainWindow(Library.open(folder / "small.thoughtdesk"))
    window.resize(1400, 900)
    window.show()
    view = window.evaluation
    window.show_tab(view)
    app.processEvents()
    result = synthetic_result(conditions, questions)
    by_split: dict = {}
    for a in result.answers:
        by_split.setdefault((a.dataset, a.split), []).append(a)
    baseline = table_only = redraw = first = cpu = 0.0
    for repeat in range(repeats + 1):
        start = time.perf_counter()
        grouped: dict = {}
        for a in result.answers:
            grouped.setdefault((a.dataset, a.split, a.model, a.condition), []).append(a.outcome == "correct")
        baseline += time.perf_counter() - start
        start = time.perf_counter()
        result.rows = accuracy_table(result.answers)
        table_only += time.perf_counter() - start
        snapshot = Snapshot("bench", result, PairedOutcomes(result.answers), by_split)
        start, start_cpu = time.perf_counter(), time.thread_time()
        result.rows = accuracy_table(result.answers)
        view._apply(snapshot)
        view.grab()  # paint the table and the visible plot
        app.processEvents()
        if repeat == 0:
            first = time.perf_counter() - start
            baseline = table_only = 0.0
        else:
            redraw += time.perf_counter() - start
            cpu += time.thread_time() - start_cpu
    assert view.table_model.rowCount() == conditions
    window.close()
    window.deleteLater()
    app.processEvents()
    gc.collect()
    return first, redraw / repeats, table_only / repeats, baseline / repeats, cpu / repeats


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=200_000)
    parser.add_argument("--conditions", type=int, default=200)
    args = parser.parse_args(argv)
    if args.answers <= 0:  # only the redraw part
        args.answers = 0
    with tempfile.TemporaryDirectory(prefix="bench_evaluate_") as folder:
        path = Path(folder) / "bench.thoughtdesk"
        if not args.answers:
            return _redraw_report(args.conditions)
        start = time.perf_counter()
        answers = build_library(path, args.answers)
        print(
            f"{len(answers):,} stored answers (library built in {time.perf_counter() - start:.1f} s, not timed below)"
        )
        f = bench_rescore(path, answers)
    n = len(answers)
    print(f"{'what':<52}{'seconds':>9}{'answers/s':>12}{'vs baseline':>13}")
    print(f"{'baseline: extract_answer in memory':<52}{f['baseline']:>9.2f}{n / f['baseline']:>12,.0f}{1:>12.2f}x")
    print(
        f"{'rescore (read, extract, write td_*, counters)':<52}{f['rescore']:>9.2f}{n / f['rescore']:>12,.0f}"
        f"{f['rescore'] / f['baseline']:>12.2f}x"
    )
    print(
        f"{'evaluate without re-score (' + str(f['rows']) + ' rows)':<52}{f['evaluate']:>9.2f}"
        f"{n / f['evaluate']:>12,.0f}"
    )
    return _redraw_report(args.conditions)


def _redraw_report(conditions: int) -> int:
    first, redraw, table, baseline, cpu = bench_redraw(conditions)
    verdict = "OK" if redraw < 0.2 else "SLOWER THAN TARGET"
    print(f"{conditions} conditions x 100 questions ({conditions * 100:,} answers):")
    print(
        f"  grouping-only baseline {baseline * 1000:.1f} ms; accuracy table {table * 1000:.1f} ms "
        f"({table / baseline:.1f}x); table + Results tab redraw {redraw * 1000:.1f} ms "
        f"({redraw / baseline:.1f}x) -> target 200 ms: {verdict}"
    )
    print(f"  the redraw's CPU time (GUI thread): {cpu * 1000:.1f} ms (wall clock above: also waiting for a core)")
    print(f"  first draw of the tab (builds the plot panels; once per collection): {first * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
