"""Executing a stored run: asyncio workers send pending requests through retrying, rate-limited
backends and commit each result the moment it returns (the claims and results of one turn of
the event loop in one transaction: :mod:`.commit_group`).

Crash safety comes from the order of writes: a request is ``sent`` before the call, and its
result rows plus ``done`` are one transaction after it. A kill between the two leaves ``sent``,
which the next execution simply sends again; nothing is stored twice. Identical requests
(same fingerprint) already done anywhere in the library are answered from the store unless
``force``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import (
    Backend,
    BackendError,
    PooledBackend,
    PriceTable,
    ProviderGate,
    ProviderLimits,
    ResilientBackend,
    Response,
    RetryPolicy,
)
from thoughtdesk.core.generation.guide_prompts import answer_stated
from thoughtdesk.core.generation.rollout_labels import rollout_request
from thoughtdesk.core.generation.runs.commit import store_failure, store_result
from thoughtdesk.core.generation.runs.commit_base import CallRecord
from thoughtdesk.core.generation.runs.control import RunControl
from thoughtdesk.core.generation.runs.critique import critique_request
from thoughtdesk.core.generation.runs.execution import ATTEMPTS, Execution, ProgressCallback
from thoughtdesk.core.generation.runs.guided import GuidedWriter, Helper
from thoughtdesk.core.generation.runs.judge import judge_request
from thoughtdesk.core.generation.runs.kind_specs import RATIONALE_KINDS, spec_from_document
from thoughtdesk.core.generation.runs.kinds import step_handler
from thoughtdesk.core.generation.runs.lease import Claim, Lease, StaleClaim, claim_run, describe_holder
from thoughtdesk.core.generation.runs.plan import extraction_prompt, fingerprint, model_request
from thoughtdesk.core.generation.runs.providers import build_shared_backend
from thoughtdesk.core.generation.runs.read import (
    RequestRow,
    RunProgress,
    RunStatus,
    get_request,
)
from thoughtdesk.core.generation.runs.samples import SampleRef
from thoughtdesk.core.generation.runs.spec import ModelSpec, RunLimits, RunSpec
from thoughtdesk.core.generation.runs.tally import RunTally, set_run_status
from thoughtdesk.core.generation.runs.trajectories import request_steps, store_step
from thoughtdesk.core.library.prompt_refs import prompt_ref
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso

log = logging.getLogger(__name__)

#: Seconds a run's write waits for another process's write before the run stops (resumable).
RUN_WRITE_WAIT = 3600.0


class _Execution(Execution):
    """One execution of a run on one asyncio loop (see :func:`execute_run_async`): the loop and
    each step's processing over what :class:`~.execution.Execution` shares."""

    # --- the loop -----------------------------------------------------------------------

    async def run(self, concurrency: int) -> RunProgress:
        conn = self.lib.conn
        with self.lib.transaction():
            # A crash leaves 'sent' rows: they were never answered, so they are sent again.
            conn.execute(
                "UPDATE request SET status = 'pending' WHERE run_id = ? AND status IN ('sent', 'failed')",
                (self.run_id,),
            )
        self.tally = RunTally(self.lib, self.run_id)
        pending = conn.execute(
            "SELECT q.id, q.depends_on, d.status FROM request q LEFT JOIN request d ON d.id = q.depends_on "
            "WHERE q.run_id = ? AND q.status = 'pending' ORDER BY q.id",
            (self.run_id,),
        ).fetchall()
        # An extraction whose CoT waits in an open batch (a batch run resumed --direct) cannot go
        # in this execution: not counted, or the workers waited for it for ever.
        here = {request_id for request_id, _, _ in pending}
        pending = [row for row in pending if row[2] in (None, "done") or row[1] in here]
        self.outstanding = len(pending)
        log.info(
            "run %d: %d request(s) to send of %d (%s), %d worker(s) per endpoint",
            self.run_id,
            len(pending),
            self.tally.total,
            ", ".join(model.label for model in self.spec.models),
            max(1, concurrency),
        )
        set_run_status(self.lib, self.run_id, "running")
        self._report()
        if not pending:
            return await self._finish()
        for request_id, depends_on, dependency_status in pending:
            # Extractions wait for their CoT; those whose CoT is done can go now.
            if dependency_status is None or dependency_status == "done":
                self.queue.put_nowait(request_id)
            else:
                self.dependents.setdefault(depends_on, []).append(request_id)
        # Workers per agent model: a guided run's helper backends (rationale, scorer, rater) are
        # called from inside its trajectories, not fed requests of their own.
        # A model served by a pool gets workers for every endpoint.
        self.workers = max(1, concurrency) * sum(max(1, len(model.base_urls)) for model in self.spec.models)
        watcher = asyncio.create_task(self._watch())
        try:
            await asyncio.gather(*(self._worker() for _ in range(self.workers)))
            while self.stores:  # results still being stored (the workers stopped on a cancel)
                await asyncio.wait(set(self.stores))
        finally:
            watcher.cancel()
        if self.store_error is not None:
            raise self.store_error
        if self.stop_error is not None:
            return await self._close("failed", str(self.stop_error))
        if self.control.cancelled:
            return await self._close("cancelled")
        return await self._finish()

    async def _finish(self) -> RunProgress:
        """Close a run whose workers are done: done, failed, or waiting for open batches."""
        left, waiting, after = self.lib.conn.execute(
            "SELECT coalesce(sum(q.status != 'done'), 0), coalesce(sum(q.status = 'batched'), 0), "
            "coalesce(sum(q.status = 'pending' AND d.status = 'batched'), 0) FROM request q "
            "LEFT JOIN request d ON d.id = q.depends_on WHERE q.run_id = ?",
            (self.run_id,),
        ).fetchone()
        if waiting:  # a batch run resumed --direct: what waits in open batches is theirs, still polled
            then = f", and {after} extraction(s) wait for their CoTs from them" if after else ""
            return await self._close(
                "batched",
                f"{waiting} request(s) still wait in open batches at the provider{then}; the run is polled until "
                f"they end (`thoughtdesk resume {self.run_id}` stores what they answered)",
            )
        return await self._close(
            "done" if left == 0 else "failed", None if left == 0 else f"{left} request(s) failed; resume to retry them"
        )

    def _taken_over(self) -> str | None:
        """Who holds the run now, when another process took it over from this one, else None."""
        if self.lease is None:
            return None
        row = self.lib.conn.execute("SELECT holder FROM run WHERE id = ?", (self.run_id,)).fetchone()
        holder = row[0] if row else None
        return None if holder == self.lease.holder else (holder or "another process (now finished)")

    async def _close(self, status: RunStatus, error: str | None = None) -> RunProgress:
        taken = self._taken_over()
        if taken is not None:  # the run is another process's now: its status is not ours to set
            row = self.lib.conn.execute("SELECT status FROM run WHERE id = ?", (self.run_id,)).fetchone()
            status = row[0] if row else status
            who = describe_holder(taken) if ":" in taken else taken
            error = (
                f"run {self.run_id} was taken over by {who} while this process was stopped; "
                f"{self.discarded} answer(s) this process received were discarded (that process sends and stores "
                "them)"
            )
            log.warning("%s", error)
            self.tally.status = status
            self.tally.last_error = error
            self.tally.taken_over = True
            self._report()
            return self.tally.snapshot()
        set_run_status(self.lib, self.run_id, status, error)
        self.tally.status = status
        self.tally.last_error = error or self.tally.last_error
        self._report()
        final = self.tally.snapshot()
        log.info(
            "run %d %s: %d done (%d from the store), %d failed of %d; %d tokens, $%.4f, %.1f s%s",
            self.run_id,
            status,
            final.done,
            final.cached,
            final.failed,
            final.total,
            final.tokens,
            final.cost,
            final.elapsed,
            f" ({error})" if error else "",
        )
        return final

    def waiting_for_library(self, seconds: float, what: str | None) -> None:
        """A write of this run waits for another process: said in the run's last message."""
        doing = f" ({what})" if what else ""
        self.tally.last_error = f"waiting {seconds:.0f} s for another ThoughtDesk process writing to the library{doing}"
        self._report()

    async def _watch(self) -> None:
        """Turn pause/cancel requests into status changes and wake idle workers on cancel; keep
        the run's lease (every RENEW_SECONDS: the call returns at once in between)."""
        paused = False
        while True:
            await asyncio.sleep(0.05)
            if self.lease is not None and not self.lease.renew():
                self._stop_workers()  # taken over by another process (this one was stopped): stop here
                return
            if self.control.cancelled:
                self._stop_workers()
                return
            if self.control.paused != paused:
                paused = self.control.paused
                if paused:  # a local model would generate on for minutes: stopped at its next token
                    for request_id, call in list(self.interruptible.items()):
                        self.interrupted.add(request_id)
                        call.cancel()
                set_run_status(self.lib, self.run_id, "paused" if paused else "running")
                self.tally.status = "paused" if paused else "running"
                self.tally.set_paused(paused)
                self._report()

    async def _worker(self) -> None:
        while True:
            request_id = await self.queue.get()
            while self.control.paused and not self.control.cancelled:
                await asyncio.sleep(0.05)
            if request_id is None or self.control.cancelled or self.stop_error is not None:
                return
            await self._process(request_id)

    async def _process(self, request_id: int) -> None:
        request = get_request(self.lib, request_id)
        handler = step_handler(request.step)
        if handler is not None:  # a feature's step (core/generation/runs/kinds.py)
            await self._process_step(request, handler)
            return
        sample = self._sample(request.required_sample_pk)
        model = self.spec.models[request.model_index]
        if request.step == "critique":
            await self._process_critique(request, sample, model)
            return
        if request.step == "judge":
            await self._process_judge(request, sample, model)
            return
        if request.step == "revision":
            await self._process_revision(request, sample, model)
            return
        if request.step == "guided":
            await self._process_guided(request, sample, model)
            return
        if request.step == "rollout":
            await self._process_rollout(request, sample, model)
            return
        variant = self.variants[request.variant_index]
        cot_pk, cot_text = None, None
        if request.step == "extraction":
            found = self.lib.conn.execute(
                "SELECT c.id, c.cot FROM request d JOIN generated_cot c ON c.id = d.result_cot_pk WHERE d.id = ?",
                (request.depends_on,),
            ).fetchone()
            if found is None:
                store_failure(
                    self.lib,
                    request_id,
                    "its CoT was deleted from the library; plan a new run for this sample",
                    sent_at=now_iso(),
                    attempts=0,
                )
                self.tally.failed += 1
                self._after_failed(request)
                return
            cot_pk, cot_text = found
            if request.prompt is None:
                prompt = extraction_prompt(variant, sample, cot_text, self.exemplars.get(sample.dataset, []))
                call = model_request(model, prompt or "", "extraction", request.replicate)
                request = dataclasses.replace(
                    request, prompt=prompt, fingerprint=fingerprint(model, call, request.replicate)
                )
                with self.lib.transaction() as conn:  # the CoT it quotes is stored once: a reference here
                    conn.execute(
                        "UPDATE request SET prompt = ?, fingerprint = ? WHERE id = ?",
                        (
                            None if prompt is None else prompt_ref(prompt, cot_text, cot_pk),
                            request.fingerprint,
                            request_id,
                        ),
                    )
        if not self.force and await self._answer_from_store(request, sample, cot_pk):
            return
        call = model_request(model, request.prompt or "", request.step, request.replicate)
        await self._send_once(request, sample, model, call, cot_pk, cot_text)

    async def _process_guided(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        """Write a guided CoT step by step, each step committed as it is chosen; a trajectory
        stopped by a kill, an error or Cancel continues at its next step when the run resumes."""
        assert isinstance(self.spec, RunSpec) and self.spec.guide is not None  # only guided runs plan this step
        guide = self.spec.guide
        sent_at = now_iso()
        token = await self.commits.write(partial(self._claim, request.id, sent_at), urgent=True)
        if token is None:
            self._finished()
            return
        claim = Claim.sent(token)
        self.tally.in_flight += 1
        writer = GuidedWriter(
            guide,
            self.guide_texts,
            Helper(model, self.backends[request.model_index]),
            {role: Helper(m, self.backends[self.spec.role_index(role)]) for role, m in guide.roles().items()},
            self.prices,
        )
        steps = request_steps(self.lib, request.id)
        seed = None if model.seed is None else model.seed + request.replicate
        attempts = ATTEMPTS.set(1)
        try:
            while not (steps and steps[-1].final) and len(steps) < guide.max_steps:
                while self.control.paused and not self.control.cancelled:
                    await asyncio.sleep(0.05)
                if self.control.cancelled or self.stop_error is not None:
                    # Stopped between steps: the steps so far are kept; a resume continues here.
                    with self.lib.transaction() as conn:
                        conn.execute(
                            "UPDATE request SET status = 'pending' WHERE id = ? AND status = 'sent' AND claim = ?",
                            (request.id, token),
                        )
                    self.tally.in_flight -= 1
                    self._finished()
                    return
                step = await writer.step(request.prompt or "", [s.chosen_text for s in steps], len(steps), seed=seed)
                try:
                    store_step(self.lib, request.id, step, claim=claim)
                except StaleClaim as stale:
                    self.tally.in_flight -= 1
                    self._discarded(request, stale)
                    return
                steps.append(step)
                self.tally.prompt_tokens += step.prompt_tokens
                self.tally.completion_tokens += step.completion_tokens
                self.tally.cost += step.cost or 0.0
                self._report()
        except BackendError as error:
            self._call_failed(request, error, sent_at, token)
            return
        finally:
            ATTEMPTS.reset(attempts)
        text = " ".join(s.chosen_text for s in steps if s.chosen_text)
        costs = [s.cost for s in steps]
        response = Response(
            provider=model.provider,
            model=model.model_name,
            texts=[text],
            finish_reasons=["answer" if steps and answer_stated(steps[-1].chosen_text) else "steps"],
            prompt_tokens=sum(s.prompt_tokens for s in steps),
            completion_tokens=sum(s.completion_tokens for s in steps),
            latency=sum(s.latency for s in steps),
            raw_body=json.dumps({"guided_steps": len(steps)}),
        )
        cost = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
        record = CallRecord(
            response,
            request.sent_at or sent_at,
            now_iso(),
            response.prompt_tokens or 0,
            response.completion_tokens or 0,
            cost,
        )
        self.tally.in_flight -= 1
        try:
            store_result(
                self.lib,
                run_id=self.run_id,
                request=request,
                sample=sample,
                model=model,
                variants=self.variants_json,
                call=record,
                one_step=True,
                guide={**guide.to_json(), "label": guide.label, "steps": len(steps)},
                claim=claim,
            )
        except StaleClaim as stale:
            self._discarded(request, stale)
            return
        self.tally.done += 1
        self._after_done(request)

    async def _process_critique(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        exists = self.lib.conn.execute("SELECT 1 FROM generated_cot WHERE id = ?", (request.target_cot_pk,)).fetchone()
        if exists is None:  # the CoT was deleted (its request rows cascade; a race with a delete)
            store_failure(self.lib, request.id, "the CoT it judges was deleted", sent_at=now_iso(), attempts=0)
            self.tally.failed += 1
            self._after_failed(request)
            return
        if not self.force and await self._answer_from_store(request, sample, None):
            return
        params = json.loads(request.params)
        call = critique_request(model, request.prompt or "", int(params.get("system_chars", -1)))
        await self._send_once(request, sample, model, call, None, None)

    async def _process_revision(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        exists = self.lib.conn.execute("SELECT 1 FROM generated_cot WHERE id = ?", (request.target_cot_pk,)).fetchone()
        if exists is None:  # the CoT was deleted (its request rows cascade; a race with a delete)
            store_failure(self.lib, request.id, "the CoT it revises was deleted", sent_at=now_iso(), attempts=0)
            self.tally.failed += 1
            self._after_failed(request)
            return
        if not self.force and await self._answer_from_store(request, sample, None):
            return
        params = json.loads(request.params)
        call = critique_request(model, request.prompt or "", int(params.get("system_chars", 0)))
        await self._send_once(request, sample, model, call, None, None)

    async def _process_judge(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        params = json.loads(request.params)
        pair = (request.target_cot_pk, int(params["second_cot_pk"]))
        found = self.lib.conn.execute("SELECT count(*) FROM generated_cot WHERE id IN (?, ?)", pair).fetchone()[0]
        if found != 2:  # a CoT of the pair was deleted (a race with a delete: rows cascade)
            store_failure(
                self.lib, request.id, "a CoT of the pair it judges was deleted", sent_at=now_iso(), attempts=0
            )
            self.tally.failed += 1
            self._after_failed(request)
            return
        if not self.force and await self._answer_from_store(request, sample, None):
            return
        call = judge_request(model, request.prompt or "", int(params.get("system_chars", 0)))
        await self._send_once(request, sample, model, call, None, None)

    async def _process_rollout(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        """K continuations of a step prefix (an autolabel run; core/generation/runs/rollouts.py):
        sent, never answered from the store (rollouts are samples, each run draws its own)."""
        exists = self.lib.conn.execute("SELECT 1 FROM generated_cot WHERE id = ?", (request.target_cot_pk,)).fetchone()
        if exists is None:  # the CoT was deleted (its request rows cascade; a race with a delete)
            store_failure(self.lib, request.id, "the CoT it labels was deleted", sent_at=now_iso(), attempts=0)
            self.tally.failed += 1
            self._after_failed(request)
            return
        params = json.loads(request.params)
        call = rollout_request(model, request.prompt or "", int(params.get("k", 1)), params.get("seed_used"))
        await self._send_once(request, sample, model, call, None, None)


def _on_retry(error: BackendError, attempt: int, wait: float) -> None:
    ATTEMPTS.set(attempt + 1)


async def execute_run_async(
    library_path: str | Path,
    run_id: int,
    *,
    backends: Mapping[int, Backend] | None = None,
    limits: RunLimits | None = None,
    progress: ProgressCallback | None = None,
    control: RunControl | None = None,
    force: bool | None = None,
    prices: PriceTable | None = None,
) -> RunProgress:
    """Send every request of run ``run_id`` that has no result yet and store each result.

    ``backends`` maps a model's index in the spec to a ready backend (default: built from the
    spec with keys from the keyring); each is wrapped in retries and per-provider limits from
    ``limits``. ``force`` (default: the spec's) sends requests even when an identical one is
    stored. ``progress`` is called on this loop's thread after every result. Returns the final
    progress; a run stopped by an error that needs the user (refused key, unknown model, server
    down, bad model file) is recorded as ``failed`` with the message and the error is raised.
    """
    limits = limits or RunLimits()
    control = control or RunControl()
    lib = Library.open(library_path, create=False)
    # A run must not die because another process writes (an import holds the library for as
    # long as it takes): its writes wait, for an hour at most, and say so in the progress.
    lib.max_write_wait = RUN_WRITE_WAIT

    def waiting_to_start(seconds: float, what: str | None) -> None:
        if progress is not None:
            tally = RunTally(lib, run_id)  # a read: it does not wait
            doing = f" ({what})" if what else ""
            tally.last_error = f"waiting {seconds:.0f} s for another ThoughtDesk process writing to the library{doing}"
            progress(tally.snapshot())

    lib.on_write_wait = waiting_to_start
    lease: Lease | None = None
    try:
        lease = claim_run(lib, run_id)  # RunBusyError when another live process executes it
        document = json.loads(lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()[0])
        spec = spec_from_document(document)
        kind = document.get("kind")
        if kind in RATIONALE_KINDS and step_handler(kind) is None:
            raise ThoughtDeskError(
                f"run {run_id} is a {kind} run, and this process did not load its steps "
                "(core/rationales/runs.py); resume it with `thoughtdesk resume` or the Runs tab"
            )
        built: dict[int, Backend] = {}
        models = spec.all_models() if isinstance(spec, RunSpec) else list(spec.models)
        try:
            for index, model in enumerate(models):
                if backends and index in backends:
                    built[index] = backends[index]
                    continue
                # A guided run's helper roles on the agent's GGUF (or the scorer, by default the
                # rationale model) share its loaded model: one load, not one per role.
                ours = [(models[i], built[i]) for i in built if not (backends and i in backends)]
                built[index] = build_shared_backend(model, ours, endpoint_limits=ProviderLimits(limits.concurrency))
        except (BackendError, ThoughtDeskError) as error:  # e.g. an API key that cannot be sent
            set_run_status(lib, run_id, "failed", str(error))
            raise
        gates: dict[str, ProviderGate] = {}
        wrapped: dict[int, Backend] = {}
        retry = RetryPolicy(max_attempts=limits.max_attempts, initial_wait=limits.initial_wait)
        for index, backend in built.items():
            key = models[index].backend_id()
            if key not in gates:
                concurrency = 1 if models[index].provider == "llamacpp" else limits.concurrency
                if isinstance(backend, PooledBackend):
                    # Each endpoint has its own gate inside the pool; this one only keeps the
                    # user's per-minute limits and must not cap the pool below its endpoints' sum.
                    concurrency = backend.concurrency
                gates[key] = ProviderGate(
                    ProviderLimits(concurrency, limits.requests_per_minute, limits.tokens_per_minute)
                )
            wrapped[index] = (
                backend
                if isinstance(backend, ResilientBackend)
                else ResilientBackend(backend, retry=retry, gate=gates[key], on_retry=_on_retry)
            )
        execution = _Execution(
            lib,
            run_id,
            wrapped,
            spec,
            document,
            control,
            progress,
            spec.force if force is None else force,
            prices or PriceTable(),
        )
        execution.lease = lease
        lib.on_write_wait = execution.waiting_for_library
        try:
            result = await execution.run(limits.concurrency)
        finally:
            closed: set[int] = set()
            for index, backend in wrapped.items():
                if not (backends and index in backends) and id(built[index]) not in closed:
                    closed.add(id(built[index]))
                    await backend.aclose()
        if execution.stop_error is not None:
            raise execution.stop_error
        return result
    finally:
        if lease is not None:
            lease.release()
        lib.close()


def execute_run(library_path: str | Path, run_id: int, **options: Any) -> RunProgress:
    """Blocking :func:`execute_run_async` on a new asyncio loop; call it from a worker thread."""
    return asyncio.run(execute_run_async(library_path, run_id, **options))


def resume_run(library_path: str | Path, run_id: int, **options: Any) -> RunProgress:
    """Complete exactly the requests of a run that have no result (pending, in flight when the
    process died, or failed); finished ones are not sent again. Same options as execute_run."""
    return execute_run(library_path, run_id, **options)


__all__ = ["RunControl", "execute_run", "execute_run_async", "resume_run"]
