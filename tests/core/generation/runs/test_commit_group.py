"""A run's claims and results committed in groups (runs/commit_group.py), on a real library."""

from __future__ import annotations

import asyncio
import sqlite3
from functools import partial
from pathlib import Path

import pytest

from thoughtdesk.core.generation.runs.commit_group import CommitGroup
from thoughtdesk.core.library.store import Library


def names(lib: Library) -> list[str]:
    return [name for (name,) in lib.conn.execute("SELECT name FROM collection ORDER BY name")]


def insert(lib: Library, name: str) -> str:
    with lib.transaction() as conn:  # inside the group: a savepoint
        conn.execute("INSERT INTO collection (name, created, source) VALUES (?, '2026-01-01', 'test')", (name,))
    return name


def test_writes_of_one_turn_share_a_transaction_and_each_gets_its_result(tmp_path: Path) -> None:
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        group = CommitGroup(lib)

        async def main() -> list[str]:
            return list(await asyncio.gather(*(group.write(partial(insert, lib, f"c{i}")) for i in range(10))))

        assert asyncio.run(main()) == [f"c{i}" for i in range(10)]
        assert (group.groups, group.writes) == (1, 10)
    # committed: another connection sees them
    with Library.open(tmp_path / "lib.thoughtdesk") as again:
        assert names(again) == sorted(f"c{i}" for i in range(10))


def test_a_failing_write_is_undone_alone_and_its_task_gets_the_error(tmp_path: Path) -> None:
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        group = CommitGroup(lib)

        def half_then_fail() -> None:
            insert(lib, "half")  # written, then undone with the failing write
            raise ValueError("bad record")

        async def main() -> list[object]:
            return list(
                await asyncio.gather(
                    group.write(lambda: insert(lib, "first")),
                    group.write(half_then_fail),
                    group.write(lambda: insert(lib, "first")),  # a constraint error: name is unique
                    group.write(lambda: insert(lib, "last")),
                    return_exceptions=True,
                )
            )

        first, failed, duplicate, last = asyncio.run(main())
        assert (first, last) == ("first", "last")
        assert isinstance(failed, ValueError) and isinstance(duplicate, sqlite3.IntegrityError)
        assert group.groups == 1
        assert names(lib) == ["first", "last"]
        assert not lib.conn.in_transaction


def test_a_later_turn_is_a_new_group(tmp_path: Path) -> None:
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        group = CommitGroup(lib)

        async def main() -> None:
            for i in range(3):
                await group.write(partial(insert, lib, f"c{i}"))

        asyncio.run(main())
        assert (group.groups, group.writes) == (3, 3)


def test_a_transaction_inside_a_transaction_is_a_savepoint(tmp_path: Path) -> None:
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        with lib.transaction():
            insert(lib, "outer")
            with pytest.raises(RuntimeError), lib.transaction():
                insert(lib, "inner")
                raise RuntimeError("undo the inner block only")
            assert names(lib) == ["outer"]
        assert names(lib) == ["outer"] and not lib.conn.in_transaction


def test_when_sqlite_ends_the_transaction_no_write_of_the_group_is_stored(tmp_path: Path) -> None:
    # A full disk makes SQLite roll the whole transaction back; simulated by a write that does so.
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        group = CommitGroup(lib)

        def disk_full() -> None:
            lib.conn.execute("ROLLBACK")
            raise sqlite3.OperationalError("database or disk is full")

        async def main() -> list[object]:
            return list(
                await asyncio.gather(
                    group.write(lambda: insert(lib, "before")),
                    group.write(disk_full),
                    group.write(lambda: insert(lib, "after")),  # not run: it would commit on its own
                    return_exceptions=True,
                )
            )

        outcomes = asyncio.run(main())
        assert all(isinstance(o, Exception) and "full" in str(o) for o in outcomes), outcomes
        assert names(lib) == [] and group.groups == 0 and not lib.conn.in_transaction


def test_a_claim_is_committed_at_the_next_turn_and_results_together_a_little_later(tmp_path: Path) -> None:
    """Results queued over several turns share one transaction, committed after the delay; a
    claim (urgent) asked for after them is committed first, at the next turn, on its own."""
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        # A delay far longer than a claim takes even on a loaded machine: "the results are not
        # committed yet" is then a fact about the order, not about the machine's speed.
        group = CommitGroup(lib, delay=2.0)
        order: list[str] = []

        def named(name: str) -> str:
            insert(lib, name)
            order.append(name)
            return name

        async def result(name: str) -> str:
            return await group.write(lambda: named(name))

        async def main() -> None:
            first = asyncio.create_task(result("result 1"))
            await asyncio.sleep(0)
            second = asyncio.create_task(result("result 2"))  # another turn: the same group
            await asyncio.sleep(0.01)
            assert await group.write(lambda: named("claim"), urgent=True) == "claim"
            assert not first.done() and names(lib) == ["claim"]  # committed, not held for the results
            assert await asyncio.gather(first, second) == ["result 1", "result 2"]

        asyncio.run(main())
        assert order == ["claim", "result 1", "result 2"]
        assert (group.groups, group.writes) == (2, 3)
