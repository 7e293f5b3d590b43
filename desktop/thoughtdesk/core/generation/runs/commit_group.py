"""A run's writes committed in groups: those asked for in one turn of the event loop share one
transaction.

At concurrency 64 answers arrive in bursts, and the run's one thread spent about a tenth of its
CPU per request beginning and committing two transactions (the claim before the call, the
result after it). A :class:`CommitGroup` collects the writes the loop's tasks ask for while it
runs their ready steps, and commits them together at the start of its next turn; a task awaits
its own write, so a claim is still committed before its call is sent and a result before the
task goes on. Each write is a savepoint: one that fails is undone alone and its task gets the
error; a commit that fails gives every task of the group the error (none of them is stored).
When the loop has one answer at a time, a group is one write: nothing waits longer than a turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from thoughtdesk.core.library.store import Library

T = TypeVar("T")


class CommitGroup:
    """Groups writes to ``lib`` by turn of the running event loop (see the module docstring)."""

    def __init__(self, lib: Library) -> None:
        self._lib = lib
        self._pending: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []
        self._scheduled = False
        self.groups = 0  # transactions committed (for tests and benchmarks)
        self.writes = 0

    async def write(self, write: Callable[[], T]) -> T:
        """Run ``write()`` (which writes through ``lib``, e.g. ``lib.transaction()`` blocks: they
        become savepoints) in the next group's transaction; return its result once committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._pending.append((write, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._commit)
        return await future

    def _commit(self) -> None:
        self._scheduled = False
        batch, self._pending = self._pending, []
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
