"""The steps of guided CoTs in the library (table ``trajectory_step``, migration m010): each
step written the moment it is chosen, read back to resume a trajectory or to show it.

A step holds the rationale written for it (None for the baselines), every candidate with its
score (mean token log-prob, decayed mean, or the 0-3 rating; None when it has none) and which
one was chosen, whether it ended the trajectory, and its tokens and cost over every model it
called.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.generation.runs.lease import Claim
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.settings.logs import redact_secrets


@dataclass(frozen=True, slots=True)
class Candidate:
    """One sampled next step and its score (higher is better; None: no score)."""

    text: str
    score: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "score": self.score}


@dataclass(frozen=True, slots=True)
class TrajectoryStep:
    """One step of a guided CoT as stored. ``chosen`` indexes ``candidates``; ``final`` says the
    trajectory ended with it (answer stated, step limit, or nothing written). Tokens and cost
    (USD, None when a model has no price) are the step's calls together; ``latency`` seconds."""

    index: int
    rationale: str | None
    candidates: tuple[Candidate, ...]
    chosen: int
    final: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    latency: float = 0.0
    extra: dict[str, Any] | None = None

    @property
    def chosen_text(self) -> str:
        return self.candidates[self.chosen].text if self.candidates else ""

    def unparsed_rating(self, index: int) -> str | None:
        """The rater's reply to candidate ``index`` when it held no 0-3 rating (process
        supervision; kept in ``extra``), else None."""
        for entry in (self.extra or {}).get("unparsed_ratings") or ():
            if isinstance(entry, dict) and entry.get("candidate") == index:
                return str(entry.get("reply", ""))
        return None

    @property
    def unparsed_ratings(self) -> int:
        """How many of this step's rater replies held no 0-3 rating."""
        return len((self.extra or {}).get("unparsed_ratings") or ())

    def to_json(self) -> dict[str, Any]:
        """The step in ``thoughtdesk trajectories --json``: rationale, candidates, chosen text."""
        return {
            "rationale": self.rationale,
            "candidates": [c.to_json() for c in self.candidates],
            "chosen": self.chosen_text,
        }


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A guided CoT with its steps in order."""

    cot_pk: int
    sample_pk: int
    sample_id: str
    dataset: str
    split: str
    model: str
    method: str
    steps: tuple[TrajectoryStep, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id,
            "dataset": self.dataset,
            "split": self.split,
            "model": self.model,
            "method": self.method,
            "cot_pk": self.cot_pk,
            "steps": [step.to_json() for step in self.steps],
        }


def _finite(value: float | None) -> float | None:
    # -inf (an empty candidate's mean log-prob) and NaN are not JSON: stored as "no score".
    return value if value is not None and math.isfinite(value) else None


def store_step(lib: Library, request_id: int, step: TrajectoryStep, *, claim: Claim | None = None) -> None:
    """Commit one chosen step of the trajectory of ``request_id``. A step index stored before
    is refused by the table's unique key, so a step can never be stored twice. ``claim``: what
    the request must still be (else StaleClaim, nothing stored). The keys this process used are
    redacted from the models' texts."""
    candidates = [{"text": redact_secrets(c.text), "score": _finite(c.score)} for c in step.candidates]
    with lib.transaction() as conn:
        if claim is not None:
            claim.check(conn, request_id)
        conn.execute(
            "INSERT INTO trajectory_step (request_id, step_index, rationale, candidates, chosen, final, "
            "prompt_tokens, completion_tokens, cost, latency, created, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                request_id,
                step.index,
                None if step.rationale is None else redact_secrets(step.rationale),
                json.dumps(candidates, ensure_ascii=False),
                step.chosen,
                int(step.final),
                step.prompt_tokens,
                step.completion_tokens,
                step.cost,
                step.latency,
                now_iso(),
                redact_secrets(json.dumps(step.extra, ensure_ascii=False)) if step.extra else None,
            ),
        )


_STEP_COLUMNS = (
    "step_index, rationale, candidates, chosen, final, prompt_tokens, completion_tokens, cost, latency, extra"
)


def _step(row: tuple[Any, ...]) -> TrajectoryStep:
    index, rationale, candidates, chosen, final, pt, ct, cost, latency, extra = row
    return TrajectoryStep(
        index=index,
        rationale=rationale,
        candidates=tuple(Candidate(str(c.get("text", "")), c.get("score")) for c in json.loads(candidates)),
        chosen=chosen,
        final=bool(final),
        prompt_tokens=pt,
        completion_tokens=ct,
        cost=cost,
        latency=latency,
        extra=json.loads(extra) if extra else None,
    )


def request_steps(lib: Library, request_id: int) -> list[TrajectoryStep]:
    """The steps stored so far for a guided request, in order (to resume its trajectory)."""
    rows = lib.conn.execute(
        f"SELECT {_STEP_COLUMNS} FROM trajectory_step WHERE request_id = ? ORDER BY step_index", (request_id,)
    )
    return [_step(row) for row in rows]


def attach_steps(conn: sqlite3.Connection, request_id: int, cot_pk: int) -> None:
    """Link a finished trajectory's steps to its stored CoT (in the CoT's transaction)."""
    conn.execute("UPDATE trajectory_step SET cot_pk = ? WHERE request_id = ?", (cot_pk, request_id))


def cot_steps(lib: Library, cot_pk: int) -> list[TrajectoryStep]:
    """The steps of a stored guided CoT in order ([] for a CoT that was not guided)."""
    rows = lib.conn.execute(
        f"SELECT {_STEP_COLUMNS} FROM trajectory_step WHERE cot_pk = ? ORDER BY step_index", (cot_pk,)
    )
    return [_step(row) for row in rows]


def is_guided(lib: Library, cot_pk: int) -> bool:
    """Whether a stored CoT has a trajectory (was written by a guided run)."""
    return lib.conn.execute("SELECT 1 FROM trajectory_step WHERE cot_pk = ? LIMIT 1", (cot_pk,)).fetchone() is not None


def guided_cot_pks(lib: Library, sample_pk: int) -> list[int]:
    """The guided CoTs of a sample (those with stored steps), in the sample's CoT order."""
    rows = lib.conn.execute(
        "SELECT g.id FROM generated_cot g WHERE g.sample_pk = ? AND EXISTS "
        "(SELECT 1 FROM trajectory_step t WHERE t.cot_pk = g.id) ORDER BY g.position",
        (sample_pk,),
    )
    return [row[0] for row in rows]


def collection_trajectories(lib: Library, collection: str) -> list[Trajectory]:
    """Every guided CoT of a collection with its steps, in sample then CoT order."""
    cid = lib.require_collection(collection)
    rows = lib.conn.execute(
        "SELECT g.id, s.id, s.sample_id, s.dataset, s.split, coalesce(g.model_name, g.model, ''), "
        "CASE WHEN json_valid(g.extra) THEN json_extract(g.extra, '$.thoughtdesk.guide.label') END "
        "FROM generated_cot g JOIN sample s ON s.id = g.sample_pk WHERE s.collection_id = ? AND EXISTS "
        "(SELECT 1 FROM trajectory_step t WHERE t.cot_pk = g.id) ORDER BY s.position, s.id, g.position",
        (cid,),
    ).fetchall()
    return [
        Trajectory(cot, sample, sid, dataset, split, model, method or "", tuple(cot_steps(lib, cot)))
        for cot, sample, sid, dataset, split, model, method in rows
    ]


@dataclass(frozen=True, slots=True)
class TrajectoryContext:
    """What the trajectory view shows beside the steps: the question, the guided CoT, and a
    plain (unguided) CoT of the same model on the same question when there is one."""

    cot_pk: int
    question: str
    model: str
    method: str
    cot: str
    plain_cot_pk: int | None
    plain_cot: str | None


def trajectory_context(lib: Library, cot_pk: int) -> TrajectoryContext | None:
    """The question, guided CoT and plain counterpart of ``cot_pk`` (None: no such CoT)."""
    row = lib.conn.execute(
        "SELECT g.sample_pk, s.question, coalesce(g.model_name, g.model, ''), g.cot, "
        "CASE WHEN json_valid(g.extra) THEN json_extract(g.extra, '$.thoughtdesk.guide.label') END "
        "FROM generated_cot g JOIN sample s ON s.id = g.sample_pk WHERE g.id = ?",
        (cot_pk,),
    ).fetchone()
    if row is None:
        return None
    sample_pk, question, model, cot, method = row
    plain = lib.conn.execute(
        "SELECT g.id, g.cot FROM generated_cot g WHERE g.sample_pk = ? AND g.id != ? "
        "AND coalesce(g.model_name, g.model, '') = ? AND NOT EXISTS "
        "(SELECT 1 FROM trajectory_step t WHERE t.cot_pk = g.id) ORDER BY g.position LIMIT 1",
        (sample_pk, cot_pk, model),
    ).fetchone()
    return TrajectoryContext(
        cot_pk,
        question or "",
        model,
        method or "",
        cot or "",
        None if plain is None else plain[0],
        None if plain is None else plain[1] or "",
    )
