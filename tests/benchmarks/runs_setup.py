"""The set-up the run benchmarks share (bench_runs.py, bench_critique_runs.py, bench_pool.py):
a local chat-completions server in its own process, a library of simple samples, a one-step
generation run timed end to end, bare httpx calls as the machine's ceiling.

Not a benchmark itself: the scripts import it (run as scripts, this folder is on ``sys.path``).
The server runs in a separate process so that it shares no GIL with the client being measured;
each script starts it as ``<script> --serve PORT ...`` and answers with :func:`serve`, so the
answer body stays with the script that measures it.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from thoughtdesk.core.generation.backends.http import new_client, post_json
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import OnDuplicate, SampleWriter

#: Seconds the server waits before each answer.
DELAY = 0.2
RATE_LIMITED = b'{"error": {"message": "rate limited"}}'


# --- the server (its own process) --------------------------------------------------------------


async def _handle(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    answer: bytes,
    rate_429: float,
    rng: random.Random,
) -> None:
    try:
        while True:  # keep-alive: one connection serves many requests
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            await asyncio.sleep(DELAY)
            if rng.random() < rate_429:
                body, status = RATE_LIMITED, b"429 Too Many Requests\r\nRetry-After: 1"
            else:
                body, status = answer, b"200 OK"
            writer.write(
                b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve(port: int, answer: bytes, rate_429: float) -> None:
    rng = random.Random(4)  # the same 429s in every run
    server = await asyncio.start_server(
        lambda r, w: _handle(r, w, answer, rate_429, rng), "127.0.0.1", port, backlog=512
    )
    async with server:
        await server.serve_forever()


def serve(port: int, answer: bytes, rate_429: float = 0.0) -> None:
    """Answer every request on 127.0.0.1:``port`` with ``answer`` after :data:`DELAY`, or (a
    ``rate_429`` share of them) with 429 and ``Retry-After: 1``; runs until killed."""
    asyncio.run(_serve(port, answer, rate_429))


def start_server(script: str, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``script --serve PORT *args`` (which calls :func:`serve`) on a free port; return
    the process and its OpenAI-compatible base URL once it accepts connections."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, script, "--serve", str(port), *args])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, f"http://127.0.0.1:{port}/v1"


# --- the client side ---------------------------------------------------------------------------


def sample_library(folder: Path, count: int, answer_type: str | None = None) -> Path:
    """A library of ``count`` samples ``q0``, ``q1``… (gold answer 42) in collection ``bench``,
    checkpointed so that copies of it start alike."""
    path = folder / "bench.thoughtdesk"
    extra: dict[str, Any] = {} if answer_type is None else {"type": answer_type}
    with Library.open(path) as lib:
        with lib.transaction():
            cid = lib.create_collection("bench")
            writer = SampleWriter(lib, cid, OnDuplicate.FAIL)
            for i in range(count):
                writer.add(
                    "bench", "test", Sample(id=f"q{i}", question=f"What is {i} + 42 - {i}?", answer=["42"], **extra)
                )
            writer.close("bench")
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def copy_library(template: Path, folder: Path, name: str) -> Path:
    """A fresh copy of ``template`` in ``folder`` (a unique name starting with ``name``)."""
    path = folder / f"{name}-{time.monotonic_ns()}.thoughtdesk"
    shutil.copy(template, path)
    return path


def one_step_run(path: Path, urls: list[str], requests: int, limits: RunLimits) -> float:
    """Seconds to plan, store and execute ``requests`` one-step CoT requests in library ``path``
    on the server(s) ``urls`` (more than one: a pool); checks every request was done."""
    started = time.perf_counter()
    spec = RunSpec(
        samples=SampleSelection("bench", limit=requests),
        models=(ModelSpec("openai", "bench", base_url=urls[0], more_base_urls=tuple(urls[1:]), max_tokens=32),),
        cot_triggers=("kojima-01",),
        mode=PromptMode.ONE_STEP,
    )
    with Library.open(path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    final = execute_run(path, run_id, limits=limits)
    elapsed = time.perf_counter() - started
    assert final.done == requests and final.failed == 0, final
    return elapsed


def stored_once(path: Path) -> tuple[int, int]:
    """(samples with exactly one CoT, counter included; CoTs in total)."""
    with Library.open(path) as lib:
        once = lib.conn.execute(
            "SELECT count(*) FROM sample WHERE n_cots = 1 AND "
            "(SELECT count(*) FROM generated_cot c WHERE c.sample_pk = sample.id) = 1"
        ).fetchone()[0]
        total = lib.conn.execute("SELECT count(*) FROM generated_cot").fetchone()[0]
    return once, total


async def _raw_client(base_url: str, requests: int, concurrency: int) -> float:
    # ThoughtDesk's client as a model call uses it (post_json on new_client's direct
    # connections), with no gate, retries or storage: what the HTTP side costs alone.
    gate = asyncio.Semaphore(concurrency)
    async with new_client(100) as client:

        async def one(i: int) -> None:
            async with gate:
                await post_json(
                    client,
                    provider="openai",
                    url=f"{base_url}/chat/completions",
                    payload={"model": "bench", "messages": [{"role": "user", "content": f"q{i}"}]},
                    headers={},
                    timeout=60,
                    model="bench",
                )

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(requests)))
        return time.perf_counter() - started


def raw_client(base_url: str, requests: int, concurrency: int) -> float:
    """Seconds for concurrent calls through ThoughtDesk's HTTP client alone (no gate, no
    storage): what this machine allows right now."""
    return asyncio.run(_raw_client(base_url, requests, concurrency))
