"""A process killed in the middle of an import leaves the library as it was before the import."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.paths import ROOT
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import resource_path

# Killed with SIGKILL from inside the progress callback, after 1,000 of 3,000 samples were written
# to the open transaction: no Python clean-up, no rollback call, as with a power cut.
CRASHING_IMPORT = textwrap.dedent("""
    import os, signal, sys
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.core.library.store import Library

    def progress(done, total):
        if done >= 1000:
            sys.stdout.write(f"crashing at {done}/{total}\\n"); sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)

    lib = Library.open(sys.argv[1])
    import_thoughtsource(lib, sys.argv[2], collection="Big", progress=progress)
    print("import finished (the crash did not happen)")
""")


def _big_collection(path: Path, count: int) -> None:
    demo = json.loads(resource_path("demo_collection.json").read_text())
    template = demo["gsm8k"]["test"][0]
    samples = [dict(template, id=f"big-{i}") for i in range(count)]
    path.write_text(json.dumps({"gsm8k": {"test": samples}}))


def _snapshot(path: Path) -> dict:
    with sqlite3.connect(path) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT LIKE '%fts%' ORDER BY name"
            )
        ]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


def test_killed_import_leaves_the_pre_import_library(tmp_path):
    library = tmp_path / "lib.thoughtdesk"
    with Library.open(library) as lib:
        import_thoughtsource(lib, resource_path("demo_collection.json"), collection="Demo")
    before = _snapshot(library)
    big = tmp_path / "big.json"
    _big_collection(big, 3000)

    run = subprocess.run(
        [sys.executable, "-c", CRASHING_IMPORT, str(library), str(big)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert run.returncode == -9, run.stdout + run.stderr  # really killed, mid-import
    assert "crashing at 1000/3000" in run.stdout

    with Library.open(library) as lib:
        assert lib.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert [(c.name, c.samples) for c in lib.collections()] == [("Demo", 16)]
    assert _snapshot(library) == before
    # And the library still takes the same import afterwards.
    with Library.open(library) as lib:
        assert import_thoughtsource(lib, big, collection="Big").inserted == 3000
