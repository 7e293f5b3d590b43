"""Benchmark: parse 100,000 critique texts of mixed tidiness.

Run on demand: ``python tests/benchmarks/bench_critique_parse.py [--texts N]``. Prints a table
with texts per second and the ratio to a baseline measured in the same run (one bare
``re.search`` for the score line per text, over the same texts). Target: 100,000 texts under 2 s.

The texts vary as real critiques do: the DS layout, Markdown emphasis, dimensions in words,
scores as "2/5" or "2 out of 5", missing parts, chatter before and after, unparseable values,
and some garbage.
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import sys
import time

from thoughtdesk.core.critiques import DIMENSIONS
from thoughtdesk.core.critiques.parse import parse_critique

SENTENCES = (
    "The explanation assumes the drug is safe in renal failure.",
    "It confuses the mean with the median.",
    "The student never states why option B is wrong.",
    "Hot air rises because it is less dense, not because molecules expand.",
    "The final step adds the wrong quantities.",
)
FEEDBACK = (
    "Check each premise against what the question actually says.",
    "Consider every option before choosing one, and say why the others fail.",
    "Recall how density depends on temperature.",
)
LAYOUTS = (
    'The explanation states or suggests the following:\n* Main flaw (standalone statement): "{flaw}"\n'
    "* Dimension: {dim}\n\nConsider these points for revising the explanation:\n* General: {gen}\n"
    "* Specific: {spec}\n\nExplanation score: {score}",
    "Here is my critique.\n\n**The explanation states or suggests the following:**\n"
    "- **Main flaw (standalone statement):** {flaw}\n- **Dimension:** {dim_words}\n\n"
    "### Consider these points for revising the explanation\n- **General:** {gen}\n- **Specific:** {spec}\n\n"
    "**Explanation score:** {score}/5\n\nI hope this helps!",
    "Main flaw: {flaw}\nDimension: {dim}\nExplanation score: {score} out of 5",
    "* Main flaw (standalone statement): None\n* Dimension: None\n* General: {gen}\n* Specific: {spec}\n"
    "Explanation score: 5",
    "* Dimension: wrong_thing\n* General: {gen}\nExplanation score: {bad}",
    "Question: what is 2+2? Answer: 4. Question: what is 3+3? Answer: 6. " * 3,
)


def synthetic_texts(total: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(total):
        dim = rng.choice(DIMENSIONS)
        texts.append(
            rng.choice(LAYOUTS).format(
                flaw=rng.choice(SENTENCES),
                dim=dim,
                dim_words=dim.replace("_", " ").capitalize(),
                gen=rng.choice(FEEDBACK),
                spec=rng.choice(SENTENCES) + " " + rng.choice(FEEDBACK),
                score=rng.randrange(6),
                bad=rng.choice(("7", "8/10", "high")),
            )
        )
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=100_000)
    args = parser.parse_args(argv)
    texts = synthetic_texts(args.texts)
    gc.collect()
    gc.disable()
    score_line = re.compile(r"score:\**\s*(\d)", re.IGNORECASE)
    start = time.perf_counter()
    baseline_found = sum(1 for t in texts if score_line.search(t))
    baseline = time.perf_counter() - start
    start = time.perf_counter()
    parsed = [parse_critique(t) for t in texts]
    ours = time.perf_counter() - start
    gc.enable()
    scores = sum(p.explanation_score is not None for p in parsed)
    full = sum(p.fully_parsed for p in parsed)
    print(
        f"{args.texts:,} critique texts ({scores:,} with a score, {full:,} fully parsed; baseline found {baseline_found:,})"
    )
    print(f"{'what':<42}{'seconds':>10}{'texts/s':>12}{'ratio':>8}")
    print(f"{'baseline: one re.search for the score':<42}{baseline:>10.3f}{args.texts / baseline:>12,.0f}{1:>8.1f}")
    print(
        f"{'parse_critique (every element + outcome)':<42}{ours:>10.3f}{args.texts / ours:>12,.0f}{ours / baseline:>8.1f}"
    )
    target = 2.0 * args.texts / 100_000
    print(f"target: under {target:.2f} s -> {'met' if ours < target else 'MISSED'}")
    return 0 if ours < target else 1


if __name__ == "__main__":
    sys.exit(main())
