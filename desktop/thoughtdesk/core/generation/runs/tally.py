"""The counts behind an execution's progress reports, and the run's stored status."""

from __future__ import annotations

import time

from thoughtdesk.core.generation.runs.read import RunProgress, RunStatus
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.settings.logs import redact


class RunTally:
    """Counts behind :class:`RunProgress`, updated as results are committed."""

    def __init__(self, lib: Library, run_id: int) -> None:
        row = lib.conn.execute(
            "SELECT count(*), coalesce(sum(status = 'done'), 0), coalesce(sum(status = 'failed'), 0), "
            "coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), "
            "coalesce(sum(cost), 0.0), coalesce(sum(cached_from IS NOT NULL), 0) "
            "FROM request WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        self.run_id = run_id
        self.total, self.done, self.failed = row[0], row[1], row[2]
        self.prompt_tokens, self.completion_tokens, self.cost, self.cached = row[3], row[4], row[5], row[6]
        # A guided CoT's request carries its tokens once done; the steps of unfinished ones count now.
        steps = lib.conn.execute(
            "SELECT coalesce(sum(t.prompt_tokens), 0), coalesce(sum(t.completion_tokens), 0), "
            "coalesce(sum(t.cost), 0.0) FROM trajectory_step t JOIN request q ON q.id = t.request_id "
            "WHERE q.run_id = ? AND q.status != 'done'",
            (run_id,),
        ).fetchone()
        self.prompt_tokens += steps[0]
        self.completion_tokens += steps[1]
        self.cost += steps[2]
        self.in_flight = 0
        self.finished_now = 0  # finished in this execution, for the rate behind the ETA
        self.started = time.monotonic()
        self.paused_seconds = 0.0  # time spent paused, left out of the rate behind the ETA
        self.paused_since: float | None = None
        self.last_error: str | None = None
        self.taken_over = False  # see RunProgress.taken_over
        self.status: RunStatus = "running"

    def set_paused(self, paused: bool) -> None:
        """Start or stop the pause clock (a pause must not make the ETA grow)."""
        now = time.monotonic()
        if paused and self.paused_since is None:
            self.paused_since = now
        elif not paused and self.paused_since is not None:
            self.paused_seconds += now - self.paused_since
            self.paused_since = None

    def snapshot(self) -> RunProgress:
        now = time.monotonic()
        elapsed = now - self.started
        active = elapsed - self.paused_seconds - (now - self.paused_since if self.paused_since else 0.0)
        remaining = self.total - self.done - self.failed
        eta = remaining * active / self.finished_now if self.finished_now else None
        return RunProgress(
            run_id=self.run_id,
            status=self.status,
            total=self.total,
            done=self.done,
            failed=self.failed,
            remaining=remaining,
            in_flight=self.in_flight,
            cached=self.cached,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost=self.cost,
            elapsed=elapsed,
            eta=eta,
            last_error=self.last_error,
            taken_over=self.taken_over,
        )


def set_run_status(lib: Library, run_id: int, status: RunStatus, error: str | None = None) -> None:
    """Store a run's status (and its last error, redacted; cleared when ``error`` is None), now."""
    stored = redact(error) if error is not None else None
    with lib.transaction() as conn:
        conn.execute(
            "UPDATE run SET status = ?, updated = ?, last_error = ? WHERE id = ?", (status, now_iso(), stored, run_id)
        )
