"""Benchmark: n-gram overlap of 10 datasets x 10,000 questions (issue 17 point 3).

Run on demand:  python tests/benchmarks/bench_stats.py [--datasets 10] [--questions 10000] [--n 8]

Target: the overlap of 10 datasets x 10,000 questions under 10 s. Prints one table, with the
ratio of each row against a baseline measured in the same run on the same texts:

* ``baseline: Python sets``: the plain way, each dataset's word n-grams as a Python set of
  tuples and every pair intersected with ``&``;
* ``core overlap (in memory)``: ThoughtDesk's hashed n-grams (``NgramHasher``, numpy uint64)
  and the one-sort pair count (``shared_counts``) on the same texts;
* ``stats, question overlap (library)``: ``collection_statistics`` end to end from a real
  library file (every row read, token lengths, answer types, choices) with the overlap of the
  questions: the figure the target is about;
* ``stats --overlap, both fields (library)``: the same with the overlap of reference CoTs too,
  as the command computes it (the benchmark stores each question as its reference CoT).

The questions are synthetic: 25-45 words drawn from a 5,000-word Zipf-like vocabulary, and 5 %
of each dataset's questions copied from the previous dataset (known overlap; both versions'
shared counts are checked equal).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from thoughtdesk.core.importing.importer import import_records
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.stats import NgramHasher, NgramSet, collection_statistics, shared_counts, tokens


def make_datasets(k: int, per: int, seed: int = 3) -> list[list[str]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(5000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    out: list[list[str]] = []
    for d in range(k):
        words = rng.choices(vocab, weights, k=per * 45)
        texts, at = [], 0
        for _ in range(per):
            length = rng.randint(25, 45)
            texts.append(" ".join(words[at : at + length]) + "?")
            at += length
        if d:
            for i in rng.sample(range(per), per // 20):
                texts[i] = rng.choice(out[d - 1])
        out.append(texts)
    return out


def baseline(datasets: list[list[str]], n: int) -> list[list[int]]:
    sets = []
    for texts in datasets:
        grams: set[tuple[str, ...]] = set()
        for text in texts:
            toks = tokens(text)
            if len(toks) < n:
                grams.add(tuple(toks))
            else:
                grams.update(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))
        sets.append(grams)
    return [[len(a & b) for b in sets] for a in sets]


def core(datasets: list[list[str]], n: int) -> list[list[int]]:
    hasher = NgramHasher(n)
    arrays = []
    for texts in datasets:
        unit = NgramSet()
        for start in range(0, len(texts), 2000):
            unit.add(hasher.hashes(texts[start : start + 2000]))
        arrays.append(unit.array())
    return shared_counts(arrays)


def timed(fn, *args):
    """(wall seconds, CPU seconds of this process, result): on a loaded machine the CPU time is
    the steadier figure."""
    start, cpu = time.perf_counter(), time.process_time()
    result = fn(*args)
    return (time.perf_counter() - start, time.process_time() - cpu), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=10)
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--n", type=int, default=8)
    args = parser.parse_args()
    datasets = make_datasets(args.datasets, args.questions)
    base_s, base_counts = timed(baseline, datasets, args.n)
    core_s, core_counts = timed(core, datasets, args.n)
    assert np.array_equal(np.array(base_counts), np.array(core_counts)), "hashed counts differ from exact sets"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.thoughtdesk"
        with Library.open(path) as lib:
            records = (
                (f"set{d}", "test", Sample(id=str(i), question=q, cot=[q], choices=["a", "b", "c", "d"]), "")
                for d, texts in enumerate(datasets)
                for i, q in enumerate(texts)
            )
            import_records(lib, records, collection="bench")
        with Library.open(path, create=False) as lib:  # as the command opens it: a fresh connection
            lib_s, stats = timed(lambda: collection_statistics(lib, "bench", overlap=True, n=args.n))
            questions_s, only = timed(
                lambda: collection_statistics(lib, "bench", overlap=True, n=args.n, overlap_fields=("question",))
            )
        assert stats.overlap[0].shared == core_counts == only.overlap[0].shared
    size = f"{args.datasets} datasets x {args.questions:,} questions, n={args.n}"
    print(f"bench_stats: {size} (one run each; target: question overlap from the library under 10 s)")
    print(f"{'version':40} {'wall s':>7} {'CPU s':>7} {'wall vs baseline':>17}")
    for name, (wall, cpu) in (
        ("baseline: Python sets", base_s),
        ("core overlap (in memory)", core_s),
        ("stats, question overlap (library)", questions_s),
        ("stats --overlap, both fields (library)", lib_s),
    ):
        print(f"{name:40} {wall:7.2f} {cpu:7.2f} {wall / base_s[0]:16.2f}x")
    pairs = sum(1 for i in range(args.datasets) for j in range(args.datasets) if i != j and core_counts[i][j])
    print(f"distinct question n-grams of set0: {core_counts[0][0]:,}; pairs sharing n-grams: {pairs}")


if __name__ == "__main__":
    main()
