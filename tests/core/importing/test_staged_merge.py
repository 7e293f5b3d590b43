"""An import into an existing collection (a merge) is staged like one into a new collection
(issue 15, point 5): other writers get in between its chunks, and it stays all or nothing with
the duplicate policy applied exactly as when it was one transaction.

The policy tests were written against the one-transaction merge first and passed there
unchanged: they pin what a merge does, not how."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.paths import ROOT
from thoughtdesk.core.errors import Cancelled, DataFileError, DuplicateSamplesError, LibraryError
from thoughtdesk.core.importing import importer
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import STAGING, Library
from thoughtdesk.core.paths import resource_path

DEMO = json.loads(resource_path("demo_collection.json").read_text())
GSM = DEMO["gsm8k"]["test"]  # 5 samples; the 4th has 3 CoTs, the others 2


def notes(sample: dict) -> int:
    """The annotations a file's sample carries."""
    return sum(len(cot.get("annotations", [])) for cot in sample["generated_cot"])


def visible_state(path: Path) -> dict[str, Any]:
    """What a reader of the library sees: every row of every table but the search index's own
    (whose internal pages change when staged rows come and go), plus the index's content. Read
    with plain sqlite3, so no clean-up on open."""
    with sqlite3.connect(path) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT LIKE 'sample_fts%' ORDER BY name"
            )
        ]
        state: dict[str, Any] = {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"'))) for t in tables}
        state["sample_fts"] = sorted(map(repr, conn.execute("SELECT rowid, * FROM sample_fts")))
    return state


def demo_rows(path: Path) -> list[tuple]:
    """The demo collection's samples in reading order, with their counters."""
    with sqlite3.connect(path) as conn:
        return conn.execute(
            """SELECT dataset, split, position, sample_id, question, n_cots, n_answers, n_correct, n_incorrect,
                      n_annotations
               FROM sample WHERE collection_id = (SELECT id FROM collection WHERE name = 'Demo')
               ORDER BY dataset, split, position"""
        ).fetchall()


def search(path: Path, words: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        return sorted(
            r[0]
            for r in conn.execute(
                "SELECT s.sample_id FROM sample_fts f JOIN sample s ON s.id = f.rowid WHERE sample_fts MATCH ?",
                (words,),
            )
        )


@pytest.fixture
def library(tmp_path) -> Path:
    """The demo collection as 'Demo', with an annotation on gsm8k_demo_test_2's first CoT."""
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        import_thoughtsource(lib, resource_path("demo_collection.json"), collection="Demo")
        with lib.transaction() as conn:
            cot = conn.execute(
                "SELECT c.id FROM generated_cot c JOIN sample s ON s.id = c.sample_pk "
                "WHERE s.sample_id = 'gsm8k_demo_test_2' ORDER BY c.position LIMIT 1"
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO annotation (cot_pk, position, author, date, key, value, value_is_json) "
                "VALUES (?, 0, 'dr', '2026-01-01', 'note', 'checked', 0)",
                (cot,),
            )
            conn.execute("UPDATE sample SET n_annotations = 1 WHERE sample_id = 'gsm8k_demo_test_2'")
    return path


def merge_file(path: Path, *, twice: str | None = None) -> Path:
    """Two existing gsm8k samples (2 and 5) with a new question and 3 CoTs, two new ones in
    existing splits and one in a new split; ``twice`` repeats that id at the end."""
    three_cots = GSM[3]
    test = [
        dict(three_cots, id="gsm8k_demo_test_2", question="Merged walrus question"),
        dict(GSM[0], id="new-1", question="Fresh pelican question"),
        dict(three_cots, id="gsm8k_demo_test_5", question="Merged walrus again"),
    ]
    if twice is not None:
        test.append(dict(GSM[0], id=twice, question="Twice"))
    document = {
        "gsm8k": {"test": test, "train": [dict(GSM[1], id="new-3")]},
        "med_qa": {"test": [dict(DEMO["med_qa"]["test"][0], id="new-2")]},
    }
    path.write_text(json.dumps(document))
    return path


def test_skip_adds_the_new_samples_after_the_last_and_leaves_the_existing_alone(library, tmp_path) -> None:
    before = demo_rows(library)
    with Library.open(library) as lib:
        report = import_thoughtsource(lib, merge_file(tmp_path / "m.json"), collection="Demo", on_duplicate="skip")
    assert (report.inserted, report.replaced, report.skipped, report.created) == (3, 0, 2, False)
    after = demo_rows(library)
    assert [r for r in after if r[3] in {r[3] for r in before}] == before
    added = [(r[0], r[1], r[2], r[3], r[5]) for r in after if r not in before]
    assert added == [
        ("gsm8k", "test", 5, "new-1", 2),
        ("gsm8k", "train", 0, "new-3", 2),
        ("med_qa", "test", 5, "new-2", 2),
    ]
    assert search(library, "walrus") == [] and search(library, "pelican") == ["new-1"]


def test_replace_puts_the_new_sample_in_the_old_ones_place(library, tmp_path) -> None:
    with Library.open(library) as lib:
        old_pks = lib.conn.execute(
            "SELECT id FROM sample WHERE sample_id IN ('gsm8k_demo_test_2', 'gsm8k_demo_test_5')"
        ).fetchall()
        report = import_thoughtsource(lib, merge_file(tmp_path / "m.json"), collection="Demo", on_duplicate="replace")
        gone = lib.conn.execute(
            f"SELECT count(*) FROM sample WHERE id IN ({', '.join(str(pk) for (pk,) in old_pks)})"
        ).fetchone()[0]
        assert [(c.name, c.samples) for c in lib.collections()] == [("Demo", 19)]
        assert lib.conn.execute("SELECT count(*) FROM collection").fetchone()[0] == 1  # none hidden is left
        assert lib.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert (report.inserted, report.replaced, report.skipped) == (3, 2, 0)
    assert gone == 0  # the replaced samples went, with their CoTs and the annotation on one
    gsm_test = [r for r in demo_rows(library) if r[:2] == ("gsm8k", "test")]
    assert [(r[2], r[3], r[4], r[5], r[9]) for r in gsm_test] == [
        (0, "gsm8k_demo_test_1", GSM[0]["question"], 2, notes(GSM[0])),
        (1, "gsm8k_demo_test_2", "Merged walrus question", 3, notes(GSM[3])),
        (2, "gsm8k_demo_test_3", GSM[2]["question"], 2, notes(GSM[2])),
        (3, "gsm8k_demo_test_4", GSM[3]["question"], 3, notes(GSM[3])),
        (4, "gsm8k_demo_test_5", "Merged walrus again", 3, notes(GSM[3])),
        (5, "new-1", "Fresh pelican question", 2, notes(GSM[0])),
    ]
    with sqlite3.connect(library) as conn:
        assert conn.execute("SELECT count(*) FROM annotation WHERE author = 'dr'").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM sample_fts").fetchone()[0] == 19
        assert conn.execute("SELECT count(*) FROM sample").fetchone()[0] == 19
    assert search(library, "walrus") == ["gsm8k_demo_test_2", "gsm8k_demo_test_5"]


def test_fail_names_the_first_duplicate_and_changes_nothing(library, tmp_path) -> None:
    before = visible_state(library)
    with Library.open(library) as lib, pytest.raises(DuplicateSamplesError) as caught:
        import_thoughtsource(lib, merge_file(tmp_path / "m.json"), collection="Demo")
    assert str(caught.value).startswith(
        "2 sample(s) already exist in collection 'Demo' (first: gsm8k/test/gsm8k_demo_test_2)"
    )
    assert visible_state(library) == before


@pytest.mark.parametrize("policy", ["fail", "skip", "replace"])
def test_an_id_twice_in_the_file_names_its_place_and_changes_nothing(library, tmp_path, policy) -> None:
    before = visible_state(library)
    with Library.open(library) as lib, pytest.raises(DataFileError) as caught:
        import_thoughtsource(
            lib, merge_file(tmp_path / "m.json", twice="new-1"), collection="Demo", on_duplicate=policy
        )
    assert "sample id 'new-1' occurs twice in gsm8k/test" in str(caught.value)
    assert "m.json" in str(caught.value) and "sample index 3" in str(caught.value)
    assert visible_state(library) == before


# Staged: other writers, kill, cancel, bad records ---------------------------------------------


def big_file(path: Path, count: int, *, bad_at: int | None = None, existing: bool = True) -> Path:
    """``count`` new gsm8k/test samples; with ``existing``, the demo's 5 come first (replaced)."""
    samples = [dict(GSM[0], id=f"big-{i}") for i in range(count)]
    if bad_at is not None:
        samples[bad_at] = dict(GSM[0], id=f"big-{bad_at}", question=["not", "text"])
    if existing:
        samples = [dict(s, question="Replaced " + s["question"]) for s in GSM] + samples
    path.write_text(json.dumps({"gsm8k": {"test": samples}}))
    return path


MERGE = textwrap.dedent("""
    import sys
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.core.library.store import Library

    with Library.open(sys.argv[1]) as lib:
        report = import_thoughtsource(lib, sys.argv[2], collection="Demo", on_duplicate="replace")
        print(report.inserted, report.replaced)
""")


def test_another_process_writes_during_a_long_merge_and_sees_none_of_it(library, tmp_path) -> None:
    before = demo_rows(library)
    big = big_file(tmp_path / "big.json", 40_000)
    process = subprocess.Popen(
        [sys.executable, "-c", MERGE, str(library), str(big)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while True:  # until the merge has committed part of its samples
            with sqlite3.connect(library) as conn:
                if conn.execute("SELECT count(*) FROM sample").fetchone()[0] >= 16 + 2_000:
                    break
            assert process.poll() is None and time.monotonic() < deadline, "the import ended too early"
            time.sleep(0.05)
        assert demo_rows(library) == before  # nothing added or replaced is visible yet
        with Library.open(library) as lib:
            assert [(c.name, c.samples) for c in lib.collections()] == [("Demo", 16)]
            started = time.monotonic()
            with lib.transaction() as conn:  # a second writer: an annotation saved meanwhile
                conn.execute("UPDATE annotation SET value = 'rechecked' WHERE author = 'dr'")
            waited = time.monotonic() - started
        assert process.poll() is None, "the write did not happen during the import"
        assert waited < 5.0, f"the second writer waited {waited:.1f} s"  # about one chunk (2 s)
        out, _ = process.communicate(timeout=300)
    finally:
        process.kill()
    assert process.returncode == 0 and out.split() == ["40000", "5"]
    with Library.open(library) as lib:
        assert [(c.name, c.samples) for c in lib.collections()] == [("Demo", 40_016)]
        assert lib.conn.execute("SELECT count(*) FROM sample_fts").fetchone()[0] == 40_016
        # The annotation was on a sample the merge replaced: it went with it, as before.
        assert lib.conn.execute("SELECT count(*) FROM annotation WHERE author = 'dr'").fetchone()[0] == 0
    assert search(library, "Replaced") == sorted(s["id"] for s in GSM)


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
    importer.import_thoughtsource(lib, sys.argv[2], collection="Demo", on_duplicate="replace", progress=progress)
""")


def test_a_killed_merge_leaves_the_collection_as_it_was_and_the_next_open_cleans_up(library, tmp_path) -> None:
    before = visible_state(library)
    run = subprocess.run(
        [sys.executable, "-c", KILLED, str(library), str(big_file(tmp_path / "big.json", 5000))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == -9 and "killed at 2000" in run.stdout, run.stdout + run.stderr
    with sqlite3.connect(library) as conn:  # committed chunks, in a hidden collection
        assert conn.execute("SELECT count(*) FROM sample").fetchone()[0] > 16
    with Library.open(library) as lib:
        assert [(c.name, c.samples) for c in lib.collections()] == [("Demo", 16)]
        assert lib.conn.execute(f"SELECT count(*) FROM collection WHERE source LIKE '{STAGING}%'").fetchone()[0] == 0
        assert lib.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert visible_state(library) == before


def test_a_bad_record_or_a_cancel_after_committed_chunks_leaves_the_collection_as_it_was(
    library, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(importer, "CHUNK_SECONDS", 0.0)
    monkeypatch.setattr(importer, "YIELD_SECONDS", 0.0)
    before = visible_state(library)
    with Library.open(library) as lib:
        with pytest.raises(DataFileError, match="sample index 2605"):  # 5 replaced samples come first
            import_thoughtsource(lib, big_file(tmp_path / "bad.json", 3000, bad_at=2600), collection="Demo")
        assert visible_state(library) == before
        for policy in ("skip", "replace"):
            with pytest.raises(Cancelled):
                import_thoughtsource(
                    lib,
                    big_file(tmp_path / "ok.json", 3000),
                    collection="Demo",
                    on_duplicate=policy,
                    cancel=lambda: True,
                )
            assert visible_state(library) == before


def test_a_collection_deleted_during_the_merge_gets_nothing_and_a_clear_message(library, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(importer, "CHUNK_SECONDS", 0.0)
    other = sqlite3.connect(library)

    def delete_it(_library=None) -> None:  # between two chunks, another window deletes the collection
        other.execute("PRAGMA foreign_keys = ON")
        other.execute("DELETE FROM collection WHERE name = 'Demo'")
        other.commit()

    monkeypatch.setattr(importer, "_yield_to_writers", delete_it)
    with Library.open(library) as lib:
        with pytest.raises(LibraryError, match="'Demo' was deleted or renamed .* while this import ran"):
            import_thoughtsource(lib, big_file(tmp_path / "big.json", 2000), collection="Demo", on_duplicate="skip")
        assert lib.collections() == []
        assert lib.conn.execute("SELECT count(*) FROM sample").fetchone()[0] == 0
    other.close()


def test_another_import_into_the_collection_meanwhile_keeps_positions_distinct_or_is_told(
    library, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(importer, "CHUNK_SECONDS", 0.0)
    other_file = tmp_path / "other.json"
    other_file.write_text(json.dumps({"gsm8k": {"test": [dict(GSM[0], id=f"other-{i}") for i in range(3)]}}))
    ran: list[int] = []

    def another_import(_library=None) -> None:  # between two chunks, another window imports into the same collection
        if not ran:
            with Library.open(library) as other:
                ran.append(import_thoughtsource(other, other_file, collection="Demo").inserted)

    monkeypatch.setattr(importer, "_yield_to_writers", another_import)
    with Library.open(library) as lib:
        report = import_thoughtsource(lib, big_file(tmp_path / "big.json", 1500, existing=False), collection="Demo")
    assert ran == [3] and report.inserted == 1500
    gsm_test = [r for r in demo_rows(library) if r[:2] == ("gsm8k", "test")]
    assert [r[2] for r in gsm_test] == list(range(5 + 3 + 1500))  # distinct, in the order they were stored
    assert [r[3] for r in gsm_test[5:9]] == ["other-0", "other-1", "other-2", "big-0"]

    # The other import stored an id this one had already staged: nothing of this one, and a clear
    # message (an id stored before this one reaches it is a duplicate as any other).
    ran.clear()
    monkeypatch.setattr(importer, "_yield_to_writers", another_import)
    other_file.write_text(json.dumps({"gsm8k": {"test": [dict(GSM[0], id="clash")]}}))
    clashing = tmp_path / "clash.json"
    clashing.write_text(
        json.dumps({"gsm8k": {"test": [dict(GSM[0], id="clash")] + [dict(GSM[0], id=f"c-{i}") for i in range(1500)]}})
    )
    before = demo_rows(library)
    with Library.open(library) as lib, pytest.raises(LibraryError, match="same ids .* were added to 'Demo'"):
        import_thoughtsource(lib, clashing, collection="Demo")
    assert ran == [1]
    assert [r[3] for r in demo_rows(library) if r not in before] == ["clash"]


KILLED_AFTER = textwrap.dedent("""
    import os, signal, sys
    from thoughtdesk.core.importing import importer
    from thoughtdesk.core.library.store import Library

    def killed(library, collection_id):  # the merge is committed; its replaced samples not yet deleted
        os.kill(os.getpid(), signal.SIGKILL)

    importer._drop_hidden = killed
    lib = Library.open(sys.argv[1])
    importer.import_thoughtsource(lib, sys.argv[2], collection="Demo", on_duplicate="replace")
""")


def test_replaced_samples_killed_before_their_deletion_are_out_of_sight_and_go_at_the_next_open(
    library, tmp_path
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER, str(library), str(merge_file(tmp_path / "m.json"))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == -9, run.stdout + run.stderr
    merged = demo_rows(library)  # the merge is whole: the new versions, not the old ones
    assert len(merged) == 19 and [r[4] for r in merged if r[3] == "gsm8k_demo_test_2"] == ["Merged walrus question"]
    with sqlite3.connect(library) as conn:  # the replaced two, aside in a hidden collection
        assert conn.execute("SELECT count(*) FROM sample").fetchone()[0] == 21
    with Library.open(library) as lib:
        assert [(c.name, c.samples) for c in lib.collections()] == [("Demo", 19)]
        assert lib.conn.execute("SELECT count(*) FROM sample").fetchone()[0] == 19
        assert lib.conn.execute("SELECT count(*) FROM sample_fts").fetchone()[0] == 19
        assert lib.conn.execute("SELECT count(*) FROM collection").fetchone()[0] == 1
    assert demo_rows(library) == merged
    assert search(library, "walrus") == ["gsm8k_demo_test_2", "gsm8k_demo_test_5"]
