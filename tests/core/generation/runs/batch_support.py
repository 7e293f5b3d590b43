"""Shared pieces of the batch-run tests (test_batch*.py): a run spec against the local batch
server for either provider, advancing a run with that provider's client, what a run stored,
and a process killed at a chosen moment of an advance."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import thoughtdesk
from tests.core.generation.runs.conftest import DEMO
from tests.helpers.batch_server import BatchServer
from thoughtdesk.core.generation.backends import ModelPrice, PriceTable
from thoughtdesk.core.generation.backends.batches import AnthropicBatches, OpenAIBatches
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunSpec,
    SampleSelection,
    advance_batch_run,
    create_run,
    plan_run,
)
from thoughtdesk.core.library.store import Library

KEY = "sk-batch-test-3f9a"
PRICES = PriceTable([ModelPrice("local", "m", 1.0, 2.0), ModelPrice("anthropic", "claude-x", 1.0, 2.0)])
PROVIDERS = ("openai", "anthropic")


def batch_spec(server: BatchServer, provider: str = "openai", **changes) -> RunSpec:
    model = (
        ModelSpec("openai", "m", base_url=server.base_url + "/v1")
        if provider == "openai"
        else ModelSpec("anthropic", "claude-x", base_url=server.base_url)
    )
    options: dict[str, Any] = dict(
        samples=SampleSelection(DEMO, datasets=("med_qa",)),
        models=(model,),
        instructions=("qa-01",),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-A-D",),
        batch=True,
    )
    options.update(changes)
    return RunSpec(**options)


def create(path, spec) -> int:
    with Library.open(path) as lib:
        return create_run(lib, plan_run(lib, spec, prices=PRICES))


def client_for(server: BatchServer, provider: str = "openai"):
    return (
        OpenAIBatches(server.base_url + "/v1", KEY) if provider == "openai" else AnthropicBatches(KEY, server.base_url)
    )


def advance(path, run_id, server, provider="openai", resubmit=False, **options):
    client = client_for(server, provider)
    try:
        return advance_batch_run(path, run_id, clients={0: client}, prices=PRICES, resubmit=resubmit, **options)
    finally:
        asyncio.run(client.aclose())


def counts(path, run_id) -> dict[str, int]:
    with Library.open(path) as lib:
        return dict(
            lib.conn.execute("SELECT status, count(*) FROM request WHERE run_id = ? GROUP BY status", (run_id,))
        )


def stored(path, run_id) -> tuple[int, int]:
    """(CoTs, answers) the run stored."""
    with Library.open(path) as lib:
        cots = lib.conn.execute(
            "SELECT count(*) FROM generated_cot WHERE cot_id LIKE ?", (f"td-{run_id}-%",)
        ).fetchone()
        answers = lib.conn.execute(
            "SELECT count(*) FROM answer a JOIN generated_cot c ON c.id = a.cot_pk WHERE c.cot_id LIKE ?",
            (f"td-{run_id}-%",),
        ).fetchone()
    return cots[0], answers[0]


def advance_killed(path, run_id, server, provider: str, moment: str) -> int:
    """Advance the run in another process killed (``os._exit(9)``) at ``moment``: ``"created"``
    (the provider created the batch; its id not stored yet) or ``"submitted"`` (the id stored,
    nothing fetched). Returns the exit code."""
    cls = "OpenAIBatches" if provider == "openai" else "AnthropicBatches"
    made = f"Killed({server.base_url + '/v1'!r}, 'k')" if provider == "openai" else f"Killed('k', {server.base_url!r})"
    script = (
        "import os\n"
        "from thoughtdesk.core.generation.runs import advance_batch_run\n"
        f"from thoughtdesk.core.generation.backends.batches import {cls}\n"
        f"class Killed({cls}):\n"
        "    async def submit(self, lines, endpoint, marker=''):\n"
        "        created = await super().submit(lines, endpoint, marker)\n"
        f"        if {moment == 'created'}:\n"
        "            os._exit(9)\n"
        "        return created\n"
        f"advance_batch_run({str(path)!r}, {run_id}, clients={{0: {made}}})\n"
        "os._exit(9)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(Path(thoughtdesk.__file__).parents[1])},
        check=False,
        timeout=120,
    ).returncode
