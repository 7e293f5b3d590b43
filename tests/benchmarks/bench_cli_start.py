"""Benchmark: how fast cheap ``thoughtdesk`` commands start (issue 27, point 1).

Run on demand:  python tests/benchmarks/bench_cli_start.py [--runs 15] [--against DIR]

Each variant is a fresh process, timed from spawn to exit:
- baseline: ``python -c "import sqlite3, json"`` (the interpreter and the two modules any
  command needs; the same interpreter and site-packages as the commands);
- ``thoughtdesk --version``, ``--help`` (targets: within 2.5x the baseline), ``collections``
  (within 4x), ``runs``, ``datasets``, ``library path`` and ``stats Demo`` on a library with the
  demo collection: the console script next to this interpreter (``python -m thoughtdesk``
  without one), with this checkout's ``desktop/`` first on PYTHONPATH;
- with ``--against DIR``: the same commands on another checkout's ``DIR/desktop`` (a
  before/after comparison of a change), timed in the same rounds.
Round-robin: each round times every variant once, so a load that comes and goes falls on all
of them alike. Prints medians (wall clock, and the child's CPU seconds, which a busy machine
disturbs less), ratios against the baseline's medians, the targets, and the load average.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASELINE = [sys.executable, "-c", "import sqlite3, json"]
#: Command line -> target ratio against the baseline (None: reported only).
COMMANDS: dict[tuple[str, ...], float | None] = {
    ("--version",): 2.5,
    ("--help",): 2.5,
    ("collections",): 4.0,
    ("runs",): None,
    ("datasets",): None,
    ("library", "path"): None,
    ("stats", "Demo"): None,
}


def thoughtdesk_command() -> list[str]:
    script = Path(sys.executable).with_name("thoughtdesk")
    return [str(script)] if script.exists() else [sys.executable, "-m", "thoughtdesk"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds from spawn to exit, and the child's CPU seconds."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr.strip()}")
    return elapsed, _children_cpu() - cpu_before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", type=Path, metavar="DIR", help="also time the checkout at DIR, alternately")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="td-clistart-"))
    env = dict(
        os.environ,
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_STATE_HOME=str(home / "state"),
        THOUGHTDESK_LOG_DIR=str(home / "logs"),
        THOUGHTDESK_LIBRARY=str(home / "bench.thoughtdesk"),
        COLUMNS="100",
    )
    env.pop("THOUGHTDESK_TESTING", None)
    checkouts = {"this": dict(env, PYTHONPATH=str(ROOT / "desktop"))}
    if args.against is not None:
        checkouts[f"against {args.against.name}"] = dict(env, PYTHONPATH=str(args.against.resolve() / "desktop"))
    base = thoughtdesk_command()
    demo = ROOT / "resources" / "demo_collection.json"
    timed([*base, "import", str(demo), "--collection", "Demo"], checkouts["this"])

    variants: list[tuple[str, list[str], dict[str, str], float | None]] = [("baseline", BASELINE, env, None)]
    for words, target in COMMANDS.items():
        for who, who_env in checkouts.items():
            variants.append((f"{who}: thoughtdesk {' '.join(words)}", [*base, *words], who_env, target))
    for _name, command, variant_env, _target in variants:  # warm-up: page cache, bytecode caches
        timed(command, variant_env)
    load_before = os.getloadavg()
    walls: dict[str, list[float]] = {name: [] for name, *_ in variants}
    cpus: dict[str, list[float]] = {name: [] for name, *_ in variants}
    for _ in range(args.runs):
        for name, command, variant_env, _target in variants:
            wall, cpu = timed(command, variant_env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    load_after = os.getloadavg()
    shutil.rmtree(home, ignore_errors=True)

    wall_base = statistics.median(walls["baseline"])
    cpu_base = statistics.median(cpus["baseline"])
    print(
        f"\nCommand start-up ({args.runs} alternated runs each, {os.cpu_count()} CPUs, load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after)"
    )
    print(f"{'variant':<44} {'median s':>9} {'min s':>7} {'x base':>7} {'cpu s':>7} {'x base':>7}  target")
    for name, _command, _env, target in variants:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        ratio = wall / wall_base
        verdict = "" if target is None else f"< {target:g}x {'met' if ratio <= target else 'MISSED'}"
        print(
            f"{name:<44} {wall:>9.3f} {min(walls[name]):>7.3f} {ratio:>7.2f} {cpu:>7.3f} {cpu / cpu_base:>7.2f}"
            f"  {verdict}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
