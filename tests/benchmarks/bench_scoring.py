"""Benchmark: score 1,000,000 synthetic answers of mixed types; rebuild the accuracy table.

Run on demand: ``python tests/benchmarks/bench_scoring.py [--answers N]``. Prints a table with
answers per second and the ratio to a baseline measured in the same run (one bare
``re.search`` per answer over the same texts). Target: the whole million under 30 s;
``accuracy_table`` for 200 conditions well under 200 ms.

The answers are built like an evaluation run: questions with their own option lists, each
answered under 20 conditions, scored question by question (as ``thoughtdesk evaluate`` walks a
collection). Extraction outputs and CoTs vary in form (letters, texts, ambiguous, numbers with
units, markers, empty outputs falling back to the CoT).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import random
import re
import sys
import time

from thoughtdesk.core.evaluation.answers import extract_answer
from thoughtdesk.core.evaluation.metrics import ScoredAnswer, accuracy_table

WORDS = (
    "sadness anxiety inspiration discomfort insights floor door hallway porch garden river "
    "bank school market library hospital kitchen office park bridge tower museum farm city "
    "mountain ocean desert forest island village"
).split()
CONDITIONS = 20
MC_OUTPUTS = [
    "{L}",
    "({L})",
    "{L}) {T}.",
    "**{L}**",
    "Option {L}",
    "The answer is {L}.",
    "{T}",
    "{L} or {M}",
    "",
    "none of the above.",
    "It is not {U}; it is {T}.",
]
MC_COTS = [
    "Let's think step by step. {U} does not fit. The person felt it, so the answer is ({L}) {T}.",
    "First, consider {U}. It is unlikely. Then {T} fits best.\nAnswer: {L}",
    "(A) {U}: no. ({L}) {T}: yes, that fits the description.",
]
BOOL_OUTPUTS = ["Yes.", "No.", "yes", "False", "B) False.", "", "N/A", "Yes, because the bell has no effect."]
NUM_OUTPUTS = ["{n}", "${n}.00", "{n} apples", "1,{n:03d}", "", "{n} or {m}", "The answer is {n}."]
NUM_COTS = [
    "She has {a} apples and buys {b} more, so {a} + {b} = {n}.\n#### {n}",
    "He pays ${a} and then ${b}. In total that is \\boxed{{{n}}} dollars.",
    "{a} plus {b} gives {n} marbles",
]


def synthetic_answers(total: int, seed: int = 1) -> list[tuple[str, str, str, list[str], list[str]]]:
    rng = random.Random(seed)
    answers: list[tuple[str, str, str, list[str], list[str]]] = []
    while len(answers) < total:
        kind = rng.choices(["multiplechoice", "bool", "number", "text"], [5, 2, 2, 1])[0]
        if kind == "multiplechoice":
            choices = rng.sample(WORDS, 5)
            gold_index = rng.randrange(5)
            for _ in range(CONDITIONS):
                pick, other = rng.randrange(5), rng.randrange(5)
                fill = dict(L="ABCDE"[pick], M="ABCDE"[other], T=choices[pick], U=choices[other])
                answers.append(
                    (
                        kind,
                        rng.choice(MC_OUTPUTS).format(**fill),
                        rng.choice(MC_COTS).format(**fill),
                        choices,
                        [choices[gold_index]],
                    )
                )
        elif kind == "bool":
            gold = rng.choice(["True", "False"])
            for _ in range(CONDITIONS):
                answers.append(
                    (
                        kind,
                        rng.choice(BOOL_OUTPUTS),
                        "It weighs 3,580 pounds, so yes, it balances.",
                        ["True", "False"],
                        [gold],
                    )
                )
        elif kind == "number":
            a, b = rng.randrange(1, 500), rng.randrange(1, 500)
            for _ in range(CONDITIONS):
                n = a + b + rng.choice([0, 0, 0, 1, -1])
                answers.append(
                    (
                        kind,
                        rng.choice(NUM_OUTPUTS).format(n=n, m=n + 1),
                        rng.choice(NUM_COTS).format(a=a, b=b, n=n),
                        [],
                        [str(a + b)],
                    )
                )
        else:
            gold = " ".join(rng.sample(WORDS, 2))
            for _ in range(CONDITIONS):
                guess = rng.choice([gold, gold.title(), "the " + gold, " ".join(rng.sample(WORDS, 2))])
                answers.append(
                    (kind, rng.choice([guess, ""]), f"It was built long ago. The answer is {guess}.", [], [gold])
                )
    return answers[:total]


def bench_scoring(answers) -> dict[str, float]:
    """Seconds of the baseline and of the scoring, wall clock and CPU time of this process (on a
    loaded machine the wall clock also counts waiting for a core, unevenly between the two)."""
    pattern = re.compile(r"answer is\s*\(?([A-E])\)?")
    start, start_cpu = time.perf_counter(), time.process_time()
    for _, output, cot, _, _ in answers:
        pattern.search(output) or pattern.search(cot)
    baseline, baseline_cpu = time.perf_counter() - start, time.process_time() - start_cpu

    outcomes: dict[str, int] = {}
    start, start_cpu = time.perf_counter(), time.process_time()
    for kind, output, cot, choices, gold in answers:
        result = extract_answer(kind, extraction_output=output, cot=cot, choices=choices, gold=gold)
        outcomes[result.outcome] = outcomes.get(result.outcome, 0) + 1
    scoring, scoring_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    return {
        "baseline": baseline,
        "scoring": scoring,
        "baseline_cpu": baseline_cpu,
        "scoring_cpu": scoring_cpu,
        **{f"n_{k}": v for k, v in outcomes.items()},
    }


def bench_table(conditions: int = 200, questions: int = 500, repeats: int = 5) -> tuple[float, float, int]:
    rng = random.Random(2)
    rows = [
        ScoredAnswer(
            f"ds{c % 4}",
            "test",
            f"model{c % 5}",
            f"cond{c}",
            f"q{q}",
            rng.choice(["correct", "correct", "incorrect", "unextractable"]),
            tokens=rng.randrange(50, 500),
            cost=0.001,
            sample_index=0,
        )
        for c in range(conditions)
        for q in range(questions)
    ]
    start = time.perf_counter()
    for _ in range(repeats):
        grouped: dict[tuple[str, str, str, str], list[bool]] = {}
        for row in rows:  # baseline: grouping and counting alone, no statistics
            grouped.setdefault((row.dataset, row.split, row.model, row.condition), []).append(row.outcome == "correct")
    baseline = (time.perf_counter() - start) / repeats
    accuracy_table(rows[:1000])  # warm-up: the first call imports scipy.stats (once per process)
    start = time.perf_counter()
    for _ in range(repeats):
        table = accuracy_table(rows)
    elapsed = (time.perf_counter() - start) / repeats
    assert len(table) == conditions
    return elapsed, baseline, len(rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    answers = synthetic_answers(args.answers)
    built = time.perf_counter() - start
    # The input is a million tuples held for the whole run; a real evaluation reads answers
    # from the library in batches. Freezing keeps the collector from re-scanning the input on
    # every full collection, so the figures measure the scoring, not this benchmark's heap.
    gc.collect()
    gc.freeze()
    figures = bench_scoring(answers)
    n = len(answers)
    print(f"{n:,} synthetic answers (built in {built:.1f} s, not timed below)")
    print(f"{'what':<40}{'seconds':>10}{'answers/s':>14}{'vs baseline':>13}")
    print(
        f"{'baseline: one re.search per answer':<40}{figures['baseline']:>10.2f}{n / figures['baseline']:>14,.0f}{1:>12.1f}x"
    )
    print(
        f"{'extract_answer (mixed types)':<40}{figures['scoring']:>10.2f}{n / figures['scoring']:>14,.0f}"
        f"{figures['scoring'] / figures['baseline']:>12.1f}x"
    )
    print(
        f"{'  the same in CPU time':<40}{figures['baseline_cpu']:>10.2f} s and {figures['scoring_cpu']:.2f} s"
        f"{figures['scoring_cpu'] / figures['baseline_cpu']:>19.1f}x"
    )
    print("outcomes:", {k[2:]: v for k, v in figures.items() if k.startswith("n_")})
    verdict = "OK" if figures["scoring"] < 30 * n / 1_000_000 else "SLOWER THAN TARGET"
    print(f"target: 1,000,000 answers under 30 s -> {verdict}")
    elapsed, baseline, rows = bench_table()
    print(
        f"{'accuracy_table, 200 conditions':<40}{elapsed * 1000:>9.1f} ms  ({rows:,} answers; "
        f"grouping-only baseline {baseline * 1000:.1f} ms, {elapsed / baseline:.1f}x)"
    )
    try:
        first, redraw = bench_plots()
    except ImportError as error:  # Qt missing: the scoring figures above still stand
        print(f"plots not timed: {error}")
    else:
        verdict = "OK" if redraw < 0.2 else "SLOWER THAN TARGET"
        print(
            f"{'table + redraw of 3 plots, 200 conditions':<40}{redraw * 1000:>9.1f} ms  (offscreen, target 200 ms: {verdict})"
        )
        print(f"{'  first draw (builds the plots; once)':<40}{first * 1000:>9.1f} ms")
    return 0


def bench_plots(conditions: int = 200, questions: int = 100) -> tuple[float, float]:
    """Seconds to draw the three result plots the first time (building their items), and to
    rebuild the accuracy table and redraw them with new results (a refresh of the Results tab;
    bench_evaluate.py times the whole tab the same way), offscreen."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from thoughtdesk.ui.evaluation.plots import AccuracyPlot, CorrectnessMap, ParetoPlot

    app = QApplication.instance() or QApplication([])
    rng = random.Random(3)
    answers = [
        ScoredAnswer(
            f"ds{c % 4}",
            "test",
            f"model{c % 5}",
            f"cond{c}",
            f"q{q}",
            rng.choice(["correct", "incorrect", "unextractable"]),
            tokens=rng.randrange(50, 500),
        )
        for c in range(conditions)
        for q in range(questions)
    ]
    accuracy, pareto, correctness = AccuracyPlot(), ParetoPlot(), CorrectnessMap()
    widgets = [accuracy, pareto, correctness]
    for widget in widgets:
        widget.resize(1200, 700)

    def draw(answers: list[ScoredAnswer]) -> float:
        start = time.perf_counter()
        rows = accuracy_table(answers)
        accuracy.set_rows(rows)
        pareto.set_rows(rows)
        correctness.set_answers(answers)
        for widget in widgets:
            widget.layout_widget.grab()  # force a paint
        app.processEvents()
        return time.perf_counter() - start

    first = draw(answers)
    # New results for the same conditions (as after a run stored more answers): the redraw.
    changed = [dataclasses.replace(a, outcome=rng.choice(["correct", "incorrect", "unextractable"])) for a in answers]
    elapsed = draw(changed)
    # Tear the widgets down while Qt is still alive (finalising them at interpreter exit crashes).
    for widget in widgets:
        widget.deleteLater()
    app.processEvents()
    widgets.clear()
    gc.collect()
    return first, elapsed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
