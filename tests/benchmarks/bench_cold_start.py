"""Benchmark: cold start to the main window shown (issue 7); target under 2 s.

Run on demand:  python tests/benchmarks/bench_cold_start.py [--runs 5]

Each variant is a fresh process, timed from spawn to the moment it prints that its window was
first painted (it then quits; ``THOUGHTDESK_QUIT_WHEN_SHOWN=1`` for ThoughtDesk):
- baseline: bare ``python -c`` that imports PySide6.QtWidgets, makes a QApplication and shows a
  QWidget (what any PySide6 app pays before its own code runs);
- installed: ``python -m thoughtdesk`` (the installed package, a library with the demo
  collection; the first start, which creates it, is reported separately);
- frozen: ``dist/thoughtdesk/thoughtdesk`` when the PyInstaller build exists.
- against: with ``--against DIR``, the same ``python -m thoughtdesk`` on another checkout's
  ``DIR/desktop`` (PYTHONPATH), timed alternately with this one so both see the same load (a
  before/after comparison of a change).
With ``--stalls``, a second pass runs the ThoughtDesk variants with
``THOUGHTDESK_MEASURE_STALLS=1``: a 10 ms heartbeat on the GUI thread for 2 s after the first
paint, reporting the longest gap (issue 27, point 2: under 50 ms while the rest loads).
Offscreen Qt, a temporary HOME, no first-run wizard. Prints a table with medians (wall clock,
and the child's CPU seconds, which a busy machine disturbs less) and ratios against the baseline
measured in the same run. The disk cache is warm after the first run
of each variant (dropping it would need root and disturb other processes).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FROZEN = ROOT / "dist" / "thoughtdesk" / "thoughtdesk"
TARGET_SECONDS = 2.0
TARGET_RATIO = 3.0  # issue 27, point 2: within 3x the bare PySide6 window
STALL_TARGET_MS = 50.0

BASELINE = """
import os, sys, time
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication(sys.argv[:1])
def watch_stalls():  # as ui/app/startup_probe.py does for ThoughtDesk: the machine's own stalls
    state = {"start": time.perf_counter(), "last": time.perf_counter(), "longest": 0.0}
    def beat():
        now = time.perf_counter()
        state["longest"] = max(state["longest"], now - state["last"] - 0.01)
        state["last"] = now
        if now - state["start"] >= 2.0:
            timer.stop(); print(f"longest-stall {state['longest'] * 1000:.0f}", flush=True); app.quit()
    timer = QTimer(app); timer.setTimerType(Qt.TimerType.PreciseTimer); timer.timeout.connect(beat); timer.start(10)
class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() in (QEvent.Type.Paint, QEvent.Type.Expose):
            print("window-shown", flush=True)
            obj.removeEventFilter(self)
            if os.environ.get("THOUGHTDESK_MEASURE_STALLS") == "1":
                watch_stalls()
            else:
                QTimer.singleShot(0, app.quit)
        return False
w = QWidget(); f = FirstPaint(); w.installEventFilter(f); w.resize(800, 600); w.show()
app.exec()
"""


# What-if: the installed app with ``scipy.stats`` imported lazily (core/metrics.py imports it at
# module level, ~1.2 s of the start-up): shows what moving that import into functions would gain.
LAZY_SCIPY = """
import importlib.util, sys
import scipy
spec = importlib.util.find_spec("scipy.stats")
spec.loader = importlib.util.LazyLoader(spec.loader)
module = importlib.util.module_from_spec(spec)
sys.modules["scipy.stats"] = scipy.stats = module
spec.loader.exec_module(module)
from thoughtdesk.cli.main import main
raise SystemExit(main())
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_to_shown(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawn to the "window-shown" line, and the CPU seconds the child used in all."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("window-shown"):
            elapsed = time.perf_counter() - started
            break
    else:
        raise RuntimeError(f"{command} exited ({process.wait()}) without showing its window")
    process.wait(timeout=60)
    return elapsed, _children_cpu() - cpu_before


def longest_stall(command: list[str], env: dict[str, str]) -> float | None:
    """The longest GUI-thread stall (ms) in the 2 s after the first paint (startup_probe.py);
    None for a build whose probe cannot measure it (a checkout before issue 27)."""
    env = dict(env, THOUGHTDESK_MEASURE_STALLS="1")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("longest-stall"):
            process.wait(timeout=60)
            return float(line.split()[1])
    process.wait(timeout=60)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--what-if-lazy-scipy", action="store_true", help="also time the installed app with scipy.stats imported lazily"
    )
    parser.add_argument("--stalls", action="store_true", help="also measure GUI-thread stalls after the first paint")
    parser.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="also time the checkout at DIR (its desktop/ on PYTHONPATH), alternately",
    )
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="td-coldstart-"))
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_STATE_HOME=str(home / "state"),
        THOUGHTDESK_NO_WIZARD="1",
        THOUGHTDESK_QUIT_WHEN_SHOWN="1",
        THOUGHTDESK_LOG_DIR=str(home / "logs"),
    )
    env.pop("THOUGHTDESK_TESTING", None)
    # The default library in the data folder: a first start makes it without asking (a library
    # named by THOUGHTDESK_LIBRARY that does not exist is asked about first: missing_library.py).
    env.pop("THOUGHTDESK_LIBRARY", None)
    variants = [("baseline: bare PySide6 window", [sys.executable, "-c", BASELINE])]
    variants.append(("installed: python -m thoughtdesk", [sys.executable, "-m", "thoughtdesk"]))
    if args.what_if_lazy_scipy:
        variants.append(("what-if: installed, lazy scipy.stats", [sys.executable, "-c", LAZY_SCIPY]))
    environments = {name: env for name, _ in variants}
    if args.against is not None:
        name = f"against: {args.against.name}/desktop"
        variants.append((name, [sys.executable, "-m", "thoughtdesk"]))
        environments[name] = dict(env, PYTHONPATH=str(args.against.resolve() / "desktop"))
        # Its own library: an older schema must not meet a newer library.
        environments[name]["XDG_DATA_HOME"] = str(home / "data-against")
        time_to_shown(variants[-1][1], environments[name])
    if FROZEN.exists():
        variants.append(("frozen: dist/thoughtdesk/thoughtdesk", [str(FROZEN)]))
    else:
        print(f"(no frozen build at {FROZEN}: run packaging/build.sh to include it)")

    first_start, _ = time_to_shown(variants[1][1], env)  # creates the library and the demo collection
    for name, command in variants:
        time_to_shown(command, environments.get(name, env))  # warm-up: page cache, Python bytecode cache
    # Round-robin: each round times every variant once, so a load that comes and goes during the
    # run falls on all of them alike.
    walls: dict[str, list[float]] = {name: [] for name, _ in variants}
    cpus: dict[str, list[float]] = {name: [] for name, _ in variants}
    for _ in range(args.runs):
        for name, command in variants:
            wall, cpu = time_to_shown(command, environments.get(name, env))
            walls[name].append(wall)
            cpus[name].append(cpu)
    results = [(name, walls[name]) for name, _ in variants]
    stalls: dict[str, list[float]] = {name: [] for name, _ in variants}
    if args.stalls:
        for _ in range(args.runs):
            for name, command in variants:
                stall = longest_stall(command, environments.get(name, env))
                if stall is not None:
                    stalls[name].append(stall)
    load = os.getloadavg()

    baseline = statistics.median(results[0][1])
    cpu_baseline = statistics.median(cpus[results[0][0]])
    print(
        f"\nCold start to main window shown ({args.runs} alternated runs each, offscreen, {os.cpu_count()} CPUs, "
        f"load average {load[0]:.1f})"
    )
    print(
        f"{'variant':<40} {'median s':>9} {'min s':>7} {'max s':>7} {'x base':>7} {'cpu s':>7} {'x base':>7}"
        f"  target < {TARGET_SECONDS:g} s and < {TARGET_RATIO:g}x"
        + (f"; stall ms (median, max) < {STALL_TARGET_MS:g}" if args.stalls else "")
    )
    for name, times in results:
        median = statistics.median(times)
        cpu = statistics.median(cpus[name])
        ratio = median / baseline
        verdict = (
            "(baseline)"
            if name.startswith("baseline")
            else f"{'met' if median < TARGET_SECONDS else 'MISSED'}, {'met' if ratio <= TARGET_RATIO else 'MISSED'}"
        )
        if stalls.get(name):
            verdict += f"; {statistics.median(stalls[name]):.0f}, {max(stalls[name]):.0f}"
        print(
            f"{name:<40} {median:>9.3f} {min(times):>7.3f} {max(times):>7.3f} {ratio:>7.2f}"
            f" {cpu:>7.3f} {cpu / cpu_baseline:>7.2f}  {verdict}"
        )
    print(f"{'installed, very first start (new library)':<40} {first_start:>9.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
