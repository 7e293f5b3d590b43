"""A filter pass over 1,000 rationales against a local OpenAI-compatible server that answers each
echo + logprobs request after 200 ms, at concurrency 32: the time against the ideal.

Run on demand: ``python tests/benchmarks/bench_rationale_filter.py [--rationales 1000]
[--delay 0.2] [--concurrency 32]``. Each rationale needs two scorings (the following text
without and with it), so the ideal is ``2 x rationales x delay / concurrency`` (12.5 s for the
defaults). The server (tests/helpers/servers.py's FakeModelServer with its toy echo model) runs
in its own process, as a real one would. Measured in the same run: the same number of bare
httpx requests at the same concurrency (the floor of the server and the HTTP client), then
ThoughtDesk's pass (a filter run of the engine: gate, retries, echo parsing, each document's
scores committed with its request).
Target: pass / ideal <= 1.25.

The pass shares the "without" scoring of a document's rationales (4 a document here: 5 calls
instead of 8, core/rationales/filtering.py), so it makes fewer requests than the ideal counts;
the table also gives the ideal at the requests it made, to show what is left of the overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402 - after the path is set

from tests.helpers.libraries import DEMO, demo_library  # noqa: E402
from thoughtdesk.core.generation.backends import (  # noqa: E402
    OpenAICompatBackend,
    ProviderGate,
    ProviderLimits,
    ResilientBackend,
)
from thoughtdesk.core.generation.runs import ModelSpec  # noqa: E402
from thoughtdesk.core.generation.scoring import TokenScores  # noqa: E402
from thoughtdesk.core.library.store import Library  # noqa: E402
from thoughtdesk.core.rationales.extraction import DEFAULT, read_rewrite  # noqa: E402
from thoughtdesk.core.rationales.setup import filter_pass as run_pass  # noqa: E402
from thoughtdesk.core.rationales.setup import filter_setup  # noqa: E402
from thoughtdesk.core.rationales.store import Document, add_rewrite  # noqa: E402

STEPS = [
    "Anna buys 3 boxes of 12 eggs.",
    "She uses 7 eggs for a cake.",
    "Her neighbour gives her 5 more eggs.",
    "She now has 36 - 7 + 5 = 34 eggs.",
    "The answer is 34.",
]
RATIONALES = [
    "Boxes times eggs per box gives the eggs she starts with.",
    "Using eggs takes them away from what she has.",
    "A gift adds to what she has.",
    "Adding up the changes gives the eggs she has now.",
]


SERVER = """
import sys
sys.path[:0] = sys.argv[2:]
from tests.helpers.servers import FakeModelServer, Reply
server = FakeModelServer()
server.responder = lambda record: Reply(delay=float(sys.argv[1]))
with server:
    print(server.port, flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin
"""


def start_server(delay: float) -> tuple[subprocess.Popen, str]:
    """The fake server in a child process; its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(delay), str(ROOT), str(ROOT / "desktop")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    return process, f"http://127.0.0.1:{port}/v1"


def fill(lib: Library, rationales: int) -> None:
    """Documents of 5 steps with 4 rationales each, stored as valid rewrites."""
    collection_id = lib.require_collection(DEMO)
    for doc in range((rationales + 3) // 4):
        original = " ".join(STEPS)
        output = " ".join(f"{step} <BOT>{why}<EOT>" for step, why in zip(STEPS, RATIONALES, strict=False))
        output += " " + STEPS[-1]
        rewrite = read_rewrite(original, output)
        assert rewrite.valid and len(rewrite.rationales) == 4
        add_rewrite(
            lib,
            collection_id,
            Document(f"file:bench:{doc}", "file", original),
            model="bench",
            markers=DEFAULT,
            fragment_key=None,
            prompt_text="",
            output=output,
            rewrite=rewrite,
        )


async def bare_requests(url: str, count: int, concurrency: int) -> float:
    """``count`` echo requests with plain httpx, ``concurrency`` at a time: seconds."""
    semaphore = asyncio.Semaphore(concurrency)
    payload = {"model": "m", "prompt": " ".join(STEPS), "max_tokens": 1, "echo": True, "logprobs": 1}
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=100), trust_env=False) as client:

        async def one() -> None:
            async with semaphore:
                response = await client.post(f"{url}/completions", json=payload, timeout=60)
                response.raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(count)))
        return time.perf_counter() - started


class CountingBackend(OpenAICompatBackend):
    """Counts the scoring requests (one per continuation)."""

    calls = 0

    async def score(self, prefix: str, continuations: Sequence[str]) -> list[TokenScores]:
        CountingBackend.calls += len(continuations)
        return await super().score(prefix, continuations)


async def filter_pass(lib: Library, url: str, concurrency: int) -> tuple[float, int, int]:
    """Seconds, rationales scored, requests made."""
    inner = CountingBackend(url, endpoint="completions", model="m")
    scorer = ResilientBackend(inner, gate=ProviderGate(ProviderLimits(concurrency=concurrency)))
    try:
        started = time.perf_counter()
        setup = filter_setup(ModelSpec("openai", "m", base_url=url, endpoint="completions"), concurrency=concurrency)
        summary = await run_pass(lib, DEMO, setup, scorer)  # a run of the engine (core/rationales/runs.py)
        return time.perf_counter() - started, summary.done, CountingBackend.calls
    finally:
        await scorer.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rationales", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    requests = 2 * args.rationales
    ideal = requests * args.delay / args.concurrency

    process, url = start_server(args.delay)
    try:
        with tempfile.TemporaryDirectory() as folder:
            floor = asyncio.run(bare_requests(url, requests, args.concurrency))
            with Library.open(demo_library(Path(folder) / "bench.thoughtdesk")) as lib:
                fill(lib, args.rationales)
                elapsed, done, made = asyncio.run(filter_pass(lib, url, args.concurrency))
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)

    print(
        f"{args.rationales} rationales = {requests} scorings, {args.delay * 1000:.0f} ms each, concurrency "
        f"{args.concurrency}; {done} rationales scored with {made} requests"
    )
    print(f"{'':34} {'seconds':>8} {'/ ideal':>8} {'/ bare httpx':>13}")
    for name, seconds in (
        ("ideal (requests x delay / conc.)", ideal),
        ("bare httpx requests", floor),
        (f"ideal at the {made} requests made", made * args.delay / args.concurrency),
        ("ThoughtDesk filter pass", elapsed),
    ):
        print(f"{name:34} {seconds:8.2f} {seconds / ideal:7.2f}x {seconds / floor:12.2f}x")
    print(f"pass / ideal at the requests made: {elapsed / (made * args.delay / args.concurrency):.2f}x")
    print(f"(load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
