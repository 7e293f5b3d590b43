"""Reading runs and their requests back out of the library (for the runs panel and the CLI).

Tables (migration ``m003_runs``): ``run`` (one row per run, its spec as JSON) and ``request``
(one row per model call, written before anything is sent). Statuses:

* run: ``planned`` (rows written, nothing sent), ``running``, ``paused``, ``cancelled``,
  ``done`` (every request has a result), ``failed`` (stopped by an error that needs the user,
  e.g. a refused key; resumable once fixed).
* request: ``pending`` (not sent, or its CoT is not there yet), ``sent`` (in flight; after a
  crash it is simply sent again), ``done`` (result stored), ``failed`` (error and raw body kept;
  sent again by a resume).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.runs.kind_specs import AnySpec, spec_from_document
from thoughtdesk.core.generation.runs.lease import is_interrupted
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.library.prompt_refs import expand_prompt, is_prompt_ref
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.logs import redact

#: ``batched``: waiting for a provider's batch API (runs/batch.py), polled by resume.
RunStatus = Literal["planned", "running", "paused", "cancelled", "done", "failed", "batched"]
#: ``batched``: in a provider batch that is not fetched yet (runs/batch.py).
RequestStatus = Literal["pending", "sent", "done", "failed", "batched"]
RequestStep = Literal[
    "cot",
    "extraction",
    "critique",
    "guided",
    "revision",
    "judge",
    "rollout",
    "rationale_extraction",
    "rationale_filter",
]


class RunNotFound(ThoughtDeskError):
    """No run with that id or name in the library."""


@dataclass(frozen=True, slots=True)
class RunProgress:
    """Where a run stands. Counts are requests; tokens are provider-reported (estimated when a
    provider reports none); ``cost`` is USD (priced models only); ``elapsed`` and ``eta`` are
    seconds (``eta`` None until a rate is known). ``status`` is the run's status."""

    run_id: int
    status: RunStatus
    total: int
    done: int
    failed: int
    remaining: int
    in_flight: int = 0
    cached: int = 0  # answered from the store (identical request done before)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    elapsed: float = 0.0
    eta: float | None = None
    last_error: str | None = None
    #: Another process took the run over while this one was stopped (``last_error`` says so):
    #: what this execution received then was discarded, and the run's status is that process's.
    taken_over: bool = False

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def fraction(self) -> float:
        """Share of requests finished (done or failed), 0..1."""
        return (self.done + self.failed) / self.total if self.total else 1.0


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run as the runs list shows it (counts are requests)."""

    id: int
    name: str
    created: str
    status: RunStatus
    collection: str
    models: tuple[str, ...]
    total: int
    done: int
    failed: int
    pending: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    last_error: str | None
    #: The models as specified (for pricing: a local OpenAI-compatible server is free).
    model_specs: tuple[ModelSpec, ...] = ()
    #: ``generation`` (CoTs and answers), ``critique`` (critiques of stored CoTs), ``revision``
    #: (CoTs revised from a critique's feedback) or ``judge`` (pairwise verdicts on stored CoTs).
    kind: str = "generation"
    #: Stored as running or paused, but the process executing it is gone (killed, crashed):
    #: nothing is happening until it is resumed (see :mod:`...runs.lease`).
    interrupted: bool = False
    #: Sent through a provider's batch API (runs/batch.py): resumed by polling, not by sending.
    batch: bool = False

    @property
    def shown_status(self) -> str:
        """The status as the user should read it: ``interrupted`` for a run nobody executes."""
        return "interrupted" if self.interrupted else self.status

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "created": self.created,
            "status": self.status,
            "interrupted": self.interrupted,
            "kind": self.kind,
            **({"batch": True} if self.batch else {}),
            "collection": self.collection,
            "models": list(self.models),
            "total": self.total,
            "done": self.done,
            "failed": self.failed,
            "pending": self.pending,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "last_error": self.last_error,
        }


@dataclass(frozen=True, slots=True)
class RequestRow:
    """One stored request (a model call): a row of the ``request`` table, in its column order.

    Times are ISO 8601 UTC, ``latency`` seconds, ``cost`` USD. ``prompt`` and ``fingerprint``
    are None for an extraction whose CoT is still pending (they are filled in when it is sent).
    ``params`` is the call's parameters as JSON.
    """

    id: int
    run_id: int
    sample_pk: int | None  # None: a rationale request for a document of a file (m020)
    model_index: int
    model: str  # column ``model_label``: the model as the spec names it
    variant_index: int
    replicate: int
    step: RequestStep
    depends_on: int | None
    fingerprint: str | None
    prompt: str | None
    params: str
    status: RequestStatus
    attempts: int
    error: str | None
    error_kind: str | None
    raw_response: str | None
    created: str
    sent_at: str | None
    finished_at: str | None
    latency: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    result_cot_pk: int | None
    result_answer_pk: int | None
    cached_from: int | None
    target_cot_pk: int | None = None  # a critique request: the CoT it judges
    result_critique_pk: int | None = None  # a critique request: the critique it stored
    result_verdict_pk: int | None = None  # a pairwise judge request: the verdict it stored
    target_doc_pk: int | None = None  # a rationale filter request: the rewrite whose rationales it scores
    result_doc_pk: int | None = None  # a rationale extraction request: the rewrite it stored

    @property
    def required_sample_pk(self) -> int:
        """The sample of a request of a step that always has one (all but the rationale steps)."""
        if self.sample_pk is None:
            raise ValueError(f"request {self.id} ({self.step}) has no sample")
        return self.sample_pk


#: ``SELECT`` of whole :class:`RequestRow` s; add a ``WHERE`` and build each with :func:`request_row`.
REQUEST_SELECT = "SELECT {} FROM request".format(
    ", ".join("model_label" if f.name == "model" else f.name for f in fields(RequestRow))
)


_RUN_SELECT = """
SELECT r.id, r.name, r.created, r.status, r.collection, r.spec, r.last_error,
       count(q.id),
       coalesce(sum(q.status = 'done'), 0),
       coalesce(sum(q.status = 'failed'), 0),
       coalesce(sum(q.prompt_tokens), 0), coalesce(sum(q.completion_tokens), 0),
       coalesce(sum(q.cost), 0.0),
       r.holder, r.lease_expires
FROM run r LEFT JOIN request q ON q.run_id = r.id
"""


def _info(row: tuple, library: Path) -> RunInfo:
    document = json.loads(row[5])
    spec = document.get("spec", {})
    models = tuple(f"{m['provider']}:{m['model']}" for m in spec.get("models", []))
    specs = []
    for stored in spec.get("models", []):
        try:
            specs.append(ModelSpec.from_json(stored))
        except (TypeError, ValueError, ThoughtDeskError):  # written by another version: not priced
            pass
    total, done, failed = row[7], row[8], row[9]
    return RunInfo(
        id=row[0],
        name=row[1],
        created=row[2],
        status=row[3],
        collection=row[4],
        models=models,
        total=total,
        done=done,
        failed=failed,
        pending=total - done - failed,
        prompt_tokens=row[10],
        completion_tokens=row[11],
        cost=float(row[12]),
        last_error=redact(row[6]) if row[6] is not None else None,  # shown: stored by an older version too
        model_specs=tuple(specs),
        kind=document.get("kind", "generation"),
        interrupted=is_interrupted(row[3], row[13], row[14], library=library, run_id=row[0]),
        batch=bool(spec.get("batch")),
    )


def list_runs(lib: Library) -> list[RunInfo]:
    """Every run in the library, newest first, with request counts, tokens and cost."""
    rows = lib.conn.execute(_RUN_SELECT + " GROUP BY r.id ORDER BY r.id DESC").fetchall()
    return [_info(row, lib.path) for row in rows]


def run_info(lib: Library, run: int | str) -> RunInfo:
    """One run by id (an int, or a string of digits) or by name; RunNotFound if absent."""
    run_id = resolve_run_id(lib, run)
    row = lib.conn.execute(_RUN_SELECT + " WHERE r.id = ? GROUP BY r.id", (run_id,)).fetchone()
    return _info(row, lib.path)


def resolve_run_id(lib: Library, run: int | str) -> int:
    """The id of a run named by id or name; RunNotFound (listing recent runs) if absent."""
    row = None
    if isinstance(run, int) or str(run).isdigit():
        row = lib.conn.execute("SELECT id FROM run WHERE id = ?", (int(run),)).fetchone()
    if row is None:
        row = lib.conn.execute("SELECT id FROM run WHERE name = ? ORDER BY id DESC", (str(run),)).fetchone()
    if row is None:
        recent = (
            ", ".join(f"{r[0]} ({r[1]})" for r in lib.conn.execute("SELECT id, name FROM run ORDER BY id DESC LIMIT 5"))
            or "none"
        )
        raise RunNotFound(f"no run {run!r} in {lib.path} (recent runs: {recent}); list them with `thoughtdesk runs`")
    return int(row[0])


def run_spec(lib: Library, run_id: int) -> AnySpec:
    """The spec a run was created with (a :class:`RunSpec`, or a :class:`CritiqueSpec` for a
    critique run; both have ``models``, ``force`` and ``name``)."""
    row = lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()
    if row is None:
        raise RunNotFound(f"no run {run_id} in {lib.path}")
    return spec_from_document(json.loads(row[0]))


def request_row(conn: sqlite3.Connection, row: tuple) -> RequestRow:
    """A row of :data:`REQUEST_SELECT` as a :class:`RequestRow`, its prompt whole: an
    extraction prompt stored with a reference to the CoT it quotes is rebuilt
    (:mod:`thoughtdesk.core.library.prompt_refs`)."""
    request = RequestRow(*row)
    if is_prompt_ref(request.prompt):
        return dataclasses.replace(request, prompt=expand_prompt(conn, request.prompt))
    return request


def get_request(lib: Library, request_id: int) -> RequestRow:
    """The stored request ``request_id``."""
    return request_row(lib.conn, lib.conn.execute(REQUEST_SELECT + " WHERE id = ?", (request_id,)).fetchone())


def run_requests(
    lib: Library, run_id: int, *, status: RequestStatus | None = None, limit: int = 500, offset: int = 0
) -> list[RequestRow]:
    """A page of a run's requests in planned order, optionally only those with ``status``."""
    where = "run_id = ?"
    params: list[int | str] = [run_id]
    if status is not None:
        where += " AND status = ?"
        params.append(status)
    rows = lib.conn.execute(
        f"{REQUEST_SELECT} WHERE {where} ORDER BY id LIMIT ? OFFSET ?",
        (*params, limit, offset),
    ).fetchall()
    return [request_row(lib.conn, row) for row in rows]


# --- batches (runs/batch.py sends them; listing them needs none of it) ---------------------


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """One stored batch as ``thoughtdesk runs`` and the Runs tab show it."""

    id: int
    run_id: int
    provider: str
    remote_id: str | None
    status: str
    requests: int
    counts: dict[str, int]
    submitted: str
    deadline: str
    fetched: str | None
    error: str | None

    def describe(self) -> str:
        """``openai batch_abc: in_progress, 3/10 completed, due 2026-11-26T08:00Z``."""
        done = self.counts.get("completed", self.counts.get("succeeded"))
        counts = f", {done}/{self.requests} answered" if done is not None else f", {self.requests} request(s)"
        state = "results stored" if self.fetched else f"due {self.deadline[:16]}Z"
        if self.status == "looking":  # a kill cut its submission short: see batch_work.BatchAdvance.poll
            return f"{self.provider} (id not stored): {self.error or 'looking for it at the provider'}"
        return f"{self.provider} {self.remote_id or '(not submitted)'}: {self.status}{counts}, {state}"


def list_batches(lib: Library, run_id: int) -> list[BatchInfo]:
    """The batches of a run, oldest first."""
    rows = lib.conn.execute(
        "SELECT id, run_id, provider, remote_id, status, requests, counts, submitted, deadline, fetched, error "
        "FROM batch WHERE run_id = ? ORDER BY id",
        (run_id,),
    ).fetchall()
    return [
        BatchInfo(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6] or "{}"), r[7], r[8], r[9], r[10]) for r in rows
    ]


def is_batch_run(lib: Library, run_id: int) -> bool:
    """Whether a stored run goes through a batch API."""
    row = lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()
    return bool(row and (json.loads(row[0]).get("spec") or {}).get("batch"))
