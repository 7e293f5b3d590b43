"""Benchmark: where sqlite-utils serves ThoughtDesk and where it does not (issue 16, point 13).

Run: PYTHONPATH=desktop python tests/benchmarks/bench_sqlite_utils.py [N]
A synthetic multiple-choice CSV of N records (default 100,000) is made in a temporary folder.
Each pair is measured in the same run on the same data; the table prints the ratio of
ThoughtDesk's way to sqlite-utils' way (below 1.00: ours is faster).

1. reading the CSV: ``sqlite_utils.utils.rows_from_file`` (encoding and format detection, no
   line numbers) against the generic reader ``table_records`` (which reports the line of every
   record, so a bad record is named ``file, line N``);
2. writing the rows: ``Table.insert_all`` (dict rows, its own batching) against ``executemany``
   of tuples, the way ``SampleWriter`` writes the sample table;
3. the whole import: ``sqlite-utils``'s ``insert_all(rows_from_file(...))`` storing the raw rows,
   against ``import_dataset`` with a column mapping (samples, FTS index, counters, one transaction).

Targets (docs/design.md, "Import speed and memory"): the write path stays on executemany as long
as it is not slower than insert_all; the reader keeps its line numbers unless rows_from_file is
more than twice as fast.
"""

from __future__ import annotations

import csv
import io
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import sqlite_utils
from sqlite_utils.utils import rows_from_file

from thoughtdesk.core.datasets.generic import ColumnMapping, table_records
from thoughtdesk.core.importing.importer import import_dataset
from thoughtdesk.core.library.store import Library

COLUMNS = ("question", "opa", "opb", "opc", "opd", "answer", "explanation")


def make_csv(path: Path, count: int) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for i in range(count):
            writer.writerow(
                (
                    f"Question {i}: which of these drugs is first-line for condition {i % 97}, given a history of "
                    f"renal impairment and an allergy to agent {i % 13}?",
                    f"Drug A{i % 7}",
                    f"Drug B{i % 11}",
                    f"Drug C{i % 5}",
                    f"Drug D{i % 3}",
                    "ABCD"[i % 4],
                    f"Because drug {'ABCD'[i % 4]} is cleared hepatically. It is therefore preferred. ({i})",
                )
            )


def timed(run) -> tuple[float, int]:
    start = time.perf_counter()
    count = run()
    return time.perf_counter() - start, count


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rows: list[tuple[str, str, float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "exam.csv"
        make_csv(data, count)

        # 1. reading
        def read_ours() -> int:
            return sum(1 for _line, record in table_records(data) if isinstance(record, dict))

        def read_theirs() -> int:
            with open(data, "rb") as handle:
                found, _format = rows_from_file(handle)
                return sum(1 for _ in found)

        ours, n1 = timed(read_ours)
        theirs, n2 = timed(read_theirs)
        assert n1 == n2 == count, (n1, n2)
        rows.append(("read CSV", "table_records (line numbers) vs rows_from_file", ours, theirs))

        # 2. writing the same rows into the same table
        with open(data, encoding="utf-8", newline="") as handle:
            records = list(csv.DictReader(handle))
        schema = ", ".join(f"{c} TEXT" for c in COLUMNS)

        def write_ours() -> int:
            conn = sqlite3.connect(Path(folder) / "ours.db", isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"CREATE TABLE t (id INTEGER PRIMARY KEY, {schema})")
            conn.execute("BEGIN")
            marks = ", ".join("?" * len(COLUMNS))
            for start in range(0, len(records), 2000):
                conn.executemany(
                    f"INSERT INTO t ({', '.join(COLUMNS)}) VALUES ({marks})",
                    [tuple(r[c] for c in COLUMNS) for r in records[start : start + 2000]],
                )
            conn.execute("COMMIT")
            conn.close()
            return len(records)

        def write_theirs() -> int:
            conn = sqlite3.connect(Path(folder) / "theirs.db", isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            db = sqlite_utils.Database(conn)
            db.execute(f"CREATE TABLE t (id INTEGER PRIMARY KEY, {schema})")
            with db.conn:
                db.table("t").insert_all(records, batch_size=2000)
            conn.close()
            return len(records)

        ours, n1 = timed(write_ours)
        theirs, n2 = timed(write_theirs)
        assert n1 == n2 == count
        rows.append(("write rows", "executemany of tuples vs Table.insert_all", ours, theirs))

        # 3. the whole import
        mapping = ColumnMapping(
            question="question",
            choices=["opa", "opb", "opc", "opd"],
            answer="answer",
            cot="explanation",
            answer_type="multiplechoice",
            answer_format="letter",
        )

        def import_ours() -> int:
            with Library.open(Path(folder) / "lib.thoughtdesk") as lib:
                return import_dataset(lib, data, mapping=mapping, collection="exam").inserted

        def import_theirs() -> int:
            db = sqlite_utils.Database(Path(folder) / "raw.db")
            with open(data, "rb") as handle:
                found, _format = rows_from_file(handle)
                db.table("records").insert_all(found, batch_size=2000)
            return db.table("records").count

        ours, n1 = timed(import_ours)
        theirs, n2 = timed(import_theirs)
        assert n1 == n2 == count
        rows.append(("import", "import_dataset (samples, FTS, counters) vs raw insert_all", ours, theirs))

    out = io.StringIO()
    out.write(f"{count:,} records; the machine may be busy: compare the ratios, not the seconds\n\n")
    out.write(f"{'step':<11} {'ThoughtDesk s':>13} {'sqlite-utils s':>14} {'ratio':>6}  what\n")
    for step, what, ours, theirs in rows:
        out.write(f"{step:<11} {ours:>13.2f} {theirs:>14.2f} {ours / theirs:>6.2f}  {what}\n")
    print(out.getvalue())


if __name__ == "__main__":
    main()
