"""A long import does not keep other writers out for its whole length, and stays all or nothing
(issue 15, point 5: a second writer waited for the whole import; minutes for a big file)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from thoughtdesk.core.errors import Cancelled, DataFileError
from thoughtdesk.core.importing import importer
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import STAGING, Library
from thoughtdesk.core.paths import resource_path


def big_collection(path: Path, count: int, *, bad_at: int | None = None) -> Path:
    demo = json.loads(resource_path("demo_collection.json").read_text())
    template = demo["gsm8k"]["test"][0]
    samples = [dict(template, id=f"big-{i}") for i in range(count)]
    if bad_at is not None:
        samples[bad_at] = dict(template, id=f"big-{bad_at}", question=["not", "text"])
    path.write_text(json.dumps({"gsm8k": {"test": samples}}))
    return path


def counts(path: Path) -> dict[str, int]:
    """Rows per table, read with plain sqlite3 (no clean-up on open), search index excluded."""
    with sqlite3.connect(path) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT LIKE '%fts%' ORDER BY name"
            )
        ]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


@pytest.fixture
def library(tmp_path) -> Path:
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        import_thoughtsource(lib, resource_path("demo_collection.json"), collection="Demo")
    return path


IMPORT = textwrap.dedent("""
    import sys
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.core.library.store import Library

    with Library.open(sys.argv[1]) as lib:
        print(import_thoughtsource(lib, sys.argv[2], collection="Big").inserted)
""")


def test_another_process_writes_during_a_long_import_and_sees_no_part_of_it(library, tmp_path) -> None:
    big = big_collection(tmp_path / "big.json", 40_000)
    process = subprocess.Popen(
        [sys.executable, "-c", IMPORT, str(library), str(big)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        # Wait until the import has committed part of its samples.
        deadline = time.monotonic() + 120
        while counts(library)["sample"] < 16 + 2_000:
            assert process.poll() is None and time.monotonic() < deadline, "the import ended too early"
            time.sleep(0.05)
        with Library.open(library) as lib:
            assert [c.name for c in lib.collections()] == ["Demo"]  # the staged part is hidden
            assert lib.collection_id("Big") is None
            started = time.monotonic()
            with lib.transaction() as conn:  # a second writer, as an annotation or a run's result
                conn.execute("UPDATE collection SET source = 'touched' WHERE name = 'Demo'")
            waited = time.monotonic() - started
        assert process.poll() is None, "the write did not happen during the import"
        assert waited < 5.0, f"the second writer waited {waited:.1f} s"  # about one chunk (2 s)
        out, _ = process.communicate(timeout=300)
    finally:
        process.kill()
    assert process.returncode == 0 and out.strip() == "40000"
    with Library.open(library) as lib:
        assert [(c.name, c.samples) for c in lib.collections()] == [("Big", 40_000), ("Demo", 16)]
        assert lib.conn.execute("SELECT source FROM collection WHERE name = 'Demo'").fetchone()[0] == "touched"


KILLED = textwrap.dedent("""
    import os, signal, sys
    from thoughtdesk.core.importing import importer
    from thoughtdesk.core.library.store import Library

    importer.CHUNK_SECONDS = 0.0  # commit at every progress tick: staged rows are on disk

    def progress(done, total):
        if done >= 2000:
            sys.stdout.write(f"killed at {done}\\n"); sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)

    lib = Library.open(sys.argv[1])
    importer.import_thoughtsource(lib, sys.argv[2], collection="Big", progress=progress)
""")


def test_a_killed_import_leaves_no_collection_and_its_rows_go_at_the_next_open(library, tmp_path) -> None:
    before = counts(library)
    big = big_collection(tmp_path / "big.json", 5000)
    run = subprocess.run(
        [sys.executable, "-c", KILLED, str(library), str(big)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == -9 and "killed at 2000" in run.stdout, run.stdout + run.stderr
    left = counts(library)
    assert left["sample"] > before["sample"]  # committed chunks of the hidden collection
    with Library.open(library) as lib:  # the importer is gone: its rows are removed
        assert [(c.name, c.samples) for c in lib.collections()] == [("Demo", 16)]
        assert lib.conn.execute(f"SELECT count(*) FROM collection WHERE source LIKE '{STAGING}%'").fetchone()[0] == 0
        assert lib.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert lib.conn.execute("SELECT count(*) FROM sample_fts").fetchone()[0] == 16
    assert counts(library) == before
    with Library.open(library) as lib:
        assert import_thoughtsource(lib, big, collection="Big").inserted == 5000


def test_a_bad_record_or_a_cancel_after_committed_chunks_leaves_nothing(library, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(importer, "CHUNK_SECONDS", 0.0)
    monkeypatch.setattr(importer, "YIELD_SECONDS", 0.0)
    before = counts(library)
    bad = big_collection(tmp_path / "bad.json", 3000, bad_at=2600)
    with Library.open(library) as lib:
        with pytest.raises(DataFileError, match="sample index 2600"):
            import_thoughtsource(lib, bad, collection="Bad")
        assert counts(library) == before
        with pytest.raises(Cancelled):
            import_thoughtsource(lib, big_collection(tmp_path / "ok.json", 3000), collection="Ok", cancel=lambda: True)
        assert counts(library) == before
        assert [c.name for c in lib.collections()] == ["Demo"]


def test_keys_another_writer_takes_between_chunks_are_left_alone(library, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(importer, "CHUNK_SECONDS", 0.0)
    other = sqlite3.connect(library)
    added: list[int] = []

    def another_writer(_library=None) -> None:  # between two chunks: a run stores a CoT, with the next free key
        sample = other.execute("SELECT min(id) FROM sample").fetchone()[0]
        cur = other.execute(
            "INSERT INTO generated_cot (sample_pk, position, cot_id, cot, extra) VALUES (?, 99, ?, 'x', '{}')",
            (sample, f"other-{len(added)}"),
        )
        other.commit()
        added.append(cur.lastrowid or 0)

    monkeypatch.setattr(importer, "_yield_to_writers", another_writer)
    with Library.open(library) as lib:
        report = import_thoughtsource(lib, big_collection(tmp_path / "big.json", 2000), collection="Big")
        assert report.inserted == 2000 and len(added) >= 3
        assert lib.conn.execute("SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'other-%'").fetchone()[0] == len(
            added
        )
    other.close()


def test_an_import_into_an_existing_collection_merges_into_it(library, tmp_path) -> None:
    with Library.open(library) as lib:
        import_thoughtsource(lib, big_collection(tmp_path / "a.json", 10), collection="Demo")
        assert [(c.name, c.samples) for c in lib.collections()] == [("Demo", 26)]
