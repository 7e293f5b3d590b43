"""A run's writes committed in groups: a claim at the next turn of the event loop, the results
of several turns together a little later.

At concurrency 64 answers arrive in bursts, and the run's one thread spent about a tenth of its
CPU per request beginning and committing transactions (the claim before the call, the result
after it). A :class:`CommitGroup` collects the writes the loop's tasks ask for and commits them
together; a task awaits its own write, so a claim is still committed before its call is sent.

Writes a call waits for (claims) are ``urgent``: committed at the start of the loop's next turn,
in a group of their own. The others (results: their worker does not wait for them, see
``execution.Execution._send``) are committed :data:`RESULT_DELAY` seconds after the first of them
was asked for, in one group with every result asked for meanwhile: larger groups, fewer
transactions, and a burst's next calls are not held back by the storing of its answers. A
result not yet committed when the process dies leaves its request ``sent``: sent again on
resume and stored once. Measured with tests/benchmarks/bench_runs.py (2,000 requests, alternated
with the previous grouping of every write at the next turn, 11 rounds each): 1.3-2.3 % more
throughput at concurrency 32 and 64, about 10 % less CPU (docs/runs.md, "Throughput").

Each write is a savepoint: one that fails is undone alone and its task gets the error; a commit
that fails gives every task of the group the error (none of them is stored).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from thoughtdesk.core.library.store import Library

T = TypeVar("T")
_Item = tuple[Callable[[], Any], asyncio.Future[Any]]

#: Seconds a result may wait to be committed with the others of its burst.
RESULT_DELAY = 0.01


class CommitGroup:
    """Groups writes to ``lib`` (see the module docstring); ``delay`` is how long a write that
    is not urgent waits for others to share its transaction."""

    def __init__(self, lib: Library, delay: float = RESULT_DELAY) -> None:
        self._lib = lib
        self._delay = delay
        self._urgent: list[_Item] = []
        self._later: list[_Item] = []
        self._urgent_scheduled = False
        self._later_scheduled = False
        self.groups = 0  # transactions committed (for tests and benchmarks)
        self.writes = 0

    async def write(self, write: Callable[[], T], *, urgent: bool = False) -> T:
        """Run ``write()`` (which writes through ``lib``, e.g. ``lib.transaction()`` blocks: they
        become savepoints) in a group's transaction; return its result once committed.
        ``urgent``: a call waits for it, so its group is committed at the loop's next turn."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if urgent:
            self._urgent.append((write, future))
            if not self._urgent_scheduled:
                self._urgent_scheduled = True
                loop.call_soon(self._commit_urgent)
        else:
            self._later.append((write, future))
            if not self._later_scheduled:
                self._later_scheduled = True
                loop.call_later(self._delay, self._commit_later)
        return await future

    def _commit_urgent(self) -> None:
        self._urgent_scheduled = False
        batch, self._urgent = self._urgent, []
        self._commit(batch)

    def _commit_later(self) -> None:
        self._later_scheduled = False
        batch, self._later = self._later, []
        self._commit(batch)

    def _commit(self, batch: list[_Item]) -> None:
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        first_error: Exception | None = None
        try:
            with self._lib.transaction():
                for write, future in batch:
                    if first_error is not None and not self._lib.conn.in_transaction:
                        # SQLite ended the transaction on an error (a full disk does): the rest
                        # are not run, or each would commit on its own.
                        outcomes.append((future, None, first_error))
                        continue
                    try:
                        with self._lib.transaction():  # a savepoint
                            outcomes.append((future, write(), None))
                    except Exception as failed:
                        first_error = first_error or failed
                        outcomes.append((future, None, failed))
        except Exception as failed:  # the commit failed: none of the group is stored
            outcomes = [(future, None, first_error or failed) for _, future in batch]
        else:
            self.groups += 1
            self.writes += len(batch)
        for future, value, error in outcomes:
            if future.done():  # its task was cancelled meanwhile
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)


__all__ = ["RESULT_DELAY", "CommitGroup"]
