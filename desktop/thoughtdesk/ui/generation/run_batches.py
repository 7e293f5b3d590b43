"""The Runs tab's part for runs sent through a provider's batch API (OpenAI's Batch API,
Anthropic's Message Batches): such a run is never sent directly; it is polled in the background
while any waits (also right after the app started again: the first reload polls them), its
results stored as its batches end, and cancelled at the provider.

Mixed into :class:`~thoughtdesk.ui.generation.runs_panel.RunsPanel` (split from it, issue 28
point 16: modules under 600 lines); it uses the panel's library, run list, messages and tasks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thoughtdesk.core.generation.backends import PriceTable
from thoughtdesk.core.generation.runs import (
    BatchProgress,
    advance_batch_run,
    cancel_batch_run_async,
    is_batch_run,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.generation.run_table import RunTableModel
from thoughtdesk.ui.qt import QTimer

BATCH_POLL_MS = 60_000  # how often runs waiting for a provider's batch API are polled


class BatchPolling:
    """Polling, resuming and cancelling batch runs; mixed into the Runs tab's panel."""

    # The panel's, used here.
    library_path: Path | None
    prices: Callable[[], PriceTable] | None
    model: RunTableModel
    errors: dict[int, str]
    _tasks: set[Task[Any]]
    _data_dirty: bool

    if TYPE_CHECKING:  # the panel's methods (no stubs at run time to shadow them)

        def reload(self, then: Callable[[], object] | None = None) -> Task[Any] | None: ...
        def selected_run(self) -> int | None: ...
        def _show_message(self, run_id: int | None) -> None: ...
        def _flush_data_changed(self, *, now: bool = False) -> None: ...
        def _change(
            self, work: Callable[[], int], done_text: str, then: Callable[[int], object] | None = None
        ) -> Task[int]: ...

    def _start_batch_polling(self) -> None:
        # Batch runs (providers' batch APIs) are polled in the background while any waits,
        # also right after the app started again (the first reload polls them).
        self._batch_polls: set[int] = set()
        self._resume_after_poll: set[int] = set()
        self.batch_timer = QTimer(self, interval=BATCH_POLL_MS)  # type: ignore[arg-type]  # self is the panel (a QWidget)
        self.batch_timer.timeout.connect(self.poll_batches)

    def is_batch_run(self, run_id: int) -> bool:
        """Whether the run goes through a batch API (a quick read of its spec)."""
        if self.library_path is None:
            return False
        with Library.open(self.library_path, create=False) as lib:
            return is_batch_run(lib, run_id)

    def cancel_batches(self, run_id: int) -> Task[int] | None:
        """Ask the provider to cancel a batch run's open batches (in a worker); what they
        answered is stored when the run is resumed."""
        path = self.library_path
        if path is None:
            return None

        def work() -> int:
            asyncio.run(cancel_batch_run_async(path, run_id))
            return run_id

        return self._change(
            work,
            f"Run {run_id}: its batches were cancelled at the provider; Start / Resume stores what they answered "
            "and sends the rest again.",
        )

    def poll_batches(self) -> None:
        """Poll every run waiting for a batch API (each in a background task)."""
        for run in self.model.runs:
            if run.status == "batched":
                self.poll_batch(run.id)

    def poll_batch(self, run_id: int, *, resume: bool = False) -> None:
        """Poll one batch run in a background task: results of ended batches stored, what is
        ready submitted (a cancelled run only when ``resume``: the user resumed it); the list
        is read again after. A poll already under way is not doubled; a resume asked for while
        one is under way follows it."""
        path = self.library_path
        if path is None:
            return
        if run_id in self._batch_polls:
            if resume:
                self._resume_after_poll.add(run_id)
            return
        self._batch_polls.add(run_id)
        prices = self.prices() if self.prices else None

        def ended() -> None:
            self._batch_polls.discard(run_id)
            if run_id in self._resume_after_poll:
                self._resume_after_poll.discard(run_id)
                self.poll_batch(run_id, resume=True)

        def done(progress: BatchProgress) -> None:
            self.errors.pop(run_id, None)
            if progress.stored:
                self._data_dirty = True
                self._flush_data_changed(now=True)
            self.reload()
            ended()

        def failed(error: BaseException) -> None:
            self.errors[run_id] = f"{error} (the batches are kept; they are polled again)"
            self._show_message(self.selected_run())
            self.reload()
            ended()

        (
            Task(lambda _ctx: advance_batch_run(path, run_id, prices=prices, resubmit=resume))
            .on_success(done)
            .on_failure(failed)
            .owned_by(self, self._tasks)  # type: ignore[arg-type]  # self is the panel (a QWidget)
            .start()
        )
