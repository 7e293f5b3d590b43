"""Benchmark: how long a second process waits to write while another imports (issue 15, point 5).

Run on demand:
    python tests/benchmarks/bench_import_writers.py [--samples 20000] [--repeats 2] [--merge [--replace-all]]

A ThoughtSource file of ``--samples`` GSM8K-shaped samples is imported by a subprocess into a
library holding the demo collection; once the import writes, this process makes one small write
(as an annotation or a run's result would) and times how long it waited. Baseline, measured in
the same run: the import as one transaction (``CHUNK_SECONDS`` = infinity, as before the staged
import), where the writer waits for the rest of the import. Also timed: the import itself, the
longest of its write transactions (how long it held the lock at most), and the step that makes
the import visible, inside its last transaction (naming the new collection, or moving a merge's
staged samples in: ``Library.merge_staged``). ``--merge`` imports into the existing demo
collection instead of a new one, the file starting with the demo's 16 samples, which are
replaced (``--on-duplicate replace``); with ``--replace-all`` the collection already holds the
file's samples (imported first, untimed), so the merge replaces every one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT))

IMPORT = textwrap.dedent("""
    import contextlib, sys, time
    from thoughtdesk.core.importing import importer
    from thoughtdesk.core.library.store import Library

    importer.CHUNK_SECONDS = float(sys.argv[3])
    merge = sys.argv[4] == "merge"
    held = []
    transaction = Library.transaction

    @contextlib.contextmanager
    def timed_transaction(self):  # how long each write transaction holds the lock
        with transaction(self) as conn:
            began = time.monotonic()
            yield conn
            held.append(time.monotonic() - began)  # (commit excluded: a WAL commit is short)

    Library.transaction = timed_transaction
    final = [0.0]
    publish = Library.merge_staged if merge else Library.publish_collection

    def timed_publish(self, *args):  # the step that makes the import visible, inside the last transaction
        began = time.monotonic()
        publish(self, *args)
        final[0] = time.monotonic() - began

    setattr(Library, "merge_staged" if merge else "publish_collection", timed_publish)
    started = time.monotonic()
    with Library.open(sys.argv[1]) as lib:
        importer.import_thoughtsource(
            lib, sys.argv[2], collection="demo" if merge else "Big", on_duplicate="replace" if merge else "fail"
        )
    print(time.monotonic() - started, max(held), final[0])
""")


def one(workdir: Path, big: Path, chunk: float, index: int, merge: bool, replace_all: bool) -> tuple[float, ...]:
    from tests.helpers.libraries import demo_library
    from thoughtdesk.core.importing.importer import import_thoughtsource
    from thoughtdesk.core.library.store import Library

    library = demo_library(workdir / f"lib-{chunk}-{index}.thoughtdesk")
    if replace_all:
        with Library.open(library) as lib:
            import_thoughtsource(lib, big, collection="demo", on_duplicate="skip")
    note = library.with_name(library.name + "-writer.json")
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'desktop'}{os.pathsep}{ROOT}")
    process = subprocess.Popen(
        [sys.executable, "-c", IMPORT, str(library), str(big), str(chunk), "merge" if merge else "new"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    while not note.exists():  # the import is writing
        time.sleep(0.02)
    time.sleep(0.5)
    started = time.monotonic()
    with Library.open(library) as lib, lib.transaction() as conn:
        conn.execute("UPDATE collection SET source = source WHERE name = 'demo'")
    waited = time.monotonic() - started
    out, _ = process.communicate(timeout=600)
    took, longest, final = map(float, out.split())
    return waited, took, longest, final


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--merge", action="store_true", help="import into the existing collection (replace)")
    parser.add_argument("--replace-all", action="store_true", help="with --merge: every sample is replaced")
    args = parser.parse_args()
    from thoughtdesk.core.importing.importer import CHUNK_SECONDS
    from thoughtdesk.core.paths import resource_path

    workdir = Path(tempfile.mkdtemp(prefix="bench_import_writers_"))
    template = json.loads(resource_path("demo_collection.json").read_text())["gsm8k"]["test"][0]
    big = workdir / "big.json"
    samples = [dict(template, id=f"b-{i}") for i in range(args.samples)]
    if args.merge:  # the demo collection's own 16 samples (replaced), then the new ones
        document = json.loads(resource_path("demo_collection.json").read_text())
        document["gsm8k"]["test"] += samples
    else:
        document = {"gsm8k": {"test": samples}}
    big.write_text(json.dumps(document))
    results: dict[str, list[tuple[float, ...]]] = {"one transaction (before)": [], "staged (now)": []}
    for index in range(args.repeats):  # interleaved, so both see the same machine load
        results["one transaction (before)"].append(one(workdir, big, float("inf"), index, args.merge, args.replace_all))
        results["staged (now)"].append(one(workdir, big, CHUNK_SECONDS, index, args.merge, args.replace_all))
    kind = "merge (replace) into the demo collection" if args.merge else "import into a new collection"
    if args.merge and args.replace_all:
        kind += ", every sample replaced"
    print(f"\n{kind}, {args.samples:,} samples; a second process writes once while it runs; repeats {args.repeats}.")
    print("Ratio = median over the one-transaction import's median, measured in this run. The machine is shared.\n")
    print(
        f"{'import':26} {'writer waited s':>16} {'ratio':>6} {'import s':>9} {'ratio':>6} "
        f"{'longest tx s':>13} {'final step s':>13}"
    )
    print("-" * 96)
    base_wait = statistics.median(r[0] for r in results["one transaction (before)"])
    base_import = statistics.median(r[1] for r in results["one transaction (before)"])
    for name, rows in results.items():
        wait, took, longest, final = (statistics.median(r[i] for r in rows) for i in range(4))
        print(
            f"{name:26} {wait:16.2f} {wait / base_wait:6.2f} {took:9.2f} {took / base_import:6.2f} "
            f"{longest:13.2f} {final:13.3f}"
        )


if __name__ == "__main__":
    main()
