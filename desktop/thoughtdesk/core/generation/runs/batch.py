"""Runs sent through the providers' batch APIs (OpenAI's Batch API, Anthropic's Message
Batches): about half the price, answered within 24 hours.

A run whose spec says ``batch`` is advanced by :func:`advance_batch_run`, called by
``thoughtdesk generate --batch``, ``thoughtdesk resume N`` and the Runs tab, as often as one
likes: each call

1. polls every batch of the run that is stored and not yet fetched; a finished one's results
   are committed exactly as a normal call's (``commit.store_cot`` / ``store_extraction``: the
   answer extracted and scored, provenance, cost at the batch price), each in one transaction
   with the request's ``done``; items that errored or expired go back to ``pending`` (their
   error kept) and are resubmitted, up to ``MAX_BATCH_ATTEMPTS`` tries, then ``failed`` (a
   normal ``thoughtdesk resume N --direct`` sends those one by one);
2. submits what is ready (CoTs; extractions whose CoT is stored, their prompt filled in) in
   chunks within the provider's limits (requests and bytes per batch); a request identical to
   one already done anywhere in the library is answered from the store instead (unless
   ``force``), as in a direct run.

Crash safety: a batch row (no provider id yet) and its requests' ``batched`` status are written
in one transaction *before* the batch is created at the provider; the provider's id is stored
right after. A kill in between leaves a row without an id: the next call looks for the batch at
the provider (OpenAI: the tag in its metadata; Anthropic: a batch of that size created then
whose custom ids, which name the batch row, are exactly the row's) and adopts it; only when
there is none do its requests go back to ``pending``. A kill after submitting leaves the id
stored: the next call polls and fetches it. A result is stored only for a request still
``batched`` in that batch, so fetching twice stores nothing twice.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from thoughtdesk.core.generation.backends import BackendError, PriceTable
from thoughtdesk.core.generation.backends.batches import AnthropicBatches, OpenAIBatches
from thoughtdesk.core.generation.defaults import DEFAULT_BASE_URLS
from thoughtdesk.core.generation.runs.batch_common import (
    BATCH_PROVIDERS,
    BatchApi,
    BatchProgress,
    BatchRunError,
    batch_deadline,
    check_batch_spec,
)
from thoughtdesk.core.generation.runs.batch_work import BatchAdvance
from thoughtdesk.core.generation.runs.kind_specs import spec_from_document
from thoughtdesk.core.generation.runs.lease import claim_run
from thoughtdesk.core.generation.runs.providers import api_key_for
from thoughtdesk.core.generation.runs.read import (  # reads: kept light for the runs list
    BatchInfo,
    is_batch_run,
    list_batches,
)
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.generation.runs.tally import set_run_status
from thoughtdesk.core.library.store import Library


def batch_client_for(model: ModelSpec) -> BatchApi:
    """The batch client for ``model``'s provider and address, with its key fetched now."""
    base_url = model.base_url or DEFAULT_BASE_URLS.get(model.provider, DEFAULT_BASE_URLS["openai"])
    key = api_key_for(model.provider, base_url)
    if model.provider == "anthropic":
        return AnthropicBatches(key, base_url=base_url)
    return OpenAIBatches(base_url, key)


async def advance_batch_run_async(
    library_path: str | Path,
    run_id: int,
    *,
    clients: Mapping[int, BatchApi] | None = None,
    prices: PriceTable | None = None,
    submit: bool = True,
    resubmit: bool = False,
) -> BatchProgress:
    """Poll a batch run's open batches, store the results of finished ones, and submit what is
    ready (unless ``submit`` is False). ``clients`` maps a model's index to its batch client
    (default: built from the spec, keys from the keyring). A cancelled run stays cancelled: its
    ended batches are fetched (what they answered stored, the rest left pending) but nothing is
    submitted, unless ``resubmit`` (the user asked to send the rest again: the run is taken up
    again). Returns where the run stands."""
    lib = Library.open(library_path, create=False)
    lease = None
    built: dict[int, BatchApi] = {}
    try:
        lease = claim_run(lib, run_id)  # RunBusyError when another live process executes it
        document = json.loads(lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()[0])
        spec = spec_from_document(document)
        check_batch_spec(spec)
        for index, model in enumerate(spec.models):
            built[index] = clients[index] if clients and index in clients else batch_client_for(model)
        work = BatchAdvance(lib, run_id, document, built, prices or PriceTable())
        if resubmit and submit and work.cancelled():
            set_run_status(lib, run_id, "batched")
        try:
            await work.poll()
            if submit and not work.cancelled():
                await work.submit()
        except BackendError as error:
            # Batches still open stay 'batched' (polled again later, also by the app); a run
            # with none open failed to submit: 'failed' until resumed. A cancelled run stays so.
            still_open = lib.conn.execute(
                "SELECT count(*) FROM batch WHERE run_id = ? AND fetched IS NULL", (run_id,)
            ).fetchone()[0]
            set_run_status(
                lib,
                run_id,
                "cancelled" if work.cancelled() else "batched" if still_open else "failed",
                f"{error} (the run's batches are kept; they are polled again on resume)",
            )
            raise
        return work.finish()
    finally:
        for index, client in built.items():
            if not (clients and index in clients):
                await client.aclose()
        if lease is not None:
            lease.release()
        lib.close()


def advance_batch_run(library_path: str | Path, run_id: int, **options: Any) -> BatchProgress:
    """Blocking :func:`advance_batch_run_async`; call it from a worker thread."""
    return asyncio.run(advance_batch_run_async(library_path, run_id, **options))


async def cancel_batch_run_async(
    library_path: str | Path, run_id: int, *, clients: Mapping[int, BatchApi] | None = None
) -> int:
    """Ask the provider to cancel every open batch of a run; returns how many. Results the
    provider still returns are fetched by the next advance; the run is marked cancelled."""
    lib = Library.open(library_path, create=False)
    built: dict[int, BatchApi] = {}
    try:
        spec = spec_from_document(
            json.loads(lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()[0])
        )
        check_batch_spec(spec)
        # Cancelled first: an advance working at the same time then submits nothing more, and
        # cancels a batch it had on its way (see BatchAdvance._submit_chunk).
        previous = lib.conn.execute("SELECT status FROM run WHERE id = ?", (run_id,)).fetchone()[0]
        set_run_status(lib, run_id, "cancelled", "cancelling the batches at the provider")
        rows = lib.conn.execute(
            "SELECT id, model_index, remote_id FROM batch WHERE run_id = ? AND fetched IS NULL AND remote_id IS NOT NULL",
            (run_id,),
        ).fetchall()
        try:
            for _, model_index, remote_id in rows:
                if model_index not in built:
                    built[model_index] = (
                        clients[model_index]
                        if clients and model_index in clients
                        else batch_client_for(spec.models[model_index])
                    )
                await built[model_index].cancel(remote_id)
        except BackendError as error:
            set_run_status(lib, run_id, previous, f"{error} (the batches could not be cancelled; try again)")
            raise
        set_run_status(lib, run_id, "cancelled", f"{len(rows)} batch(es) cancelled at the provider")
        return len(rows)
    finally:
        for index, client in built.items():
            if not (clients and index in clients):
                await client.aclose()
        lib.close()


__all__ = [
    "BATCH_PROVIDERS",
    "BatchInfo",
    "BatchProgress",
    "BatchRunError",
    "advance_batch_run",
    "advance_batch_run_async",
    "batch_deadline",
    "cancel_batch_run_async",
    "check_batch_spec",
    "is_batch_run",
    "list_batches",
]
