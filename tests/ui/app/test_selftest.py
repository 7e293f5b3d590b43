"""`thoughtdesk --self-test` of the installed (not frozen) application."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

STEPS = ("environment", "library", "import", "main window", "local model", "answer extraction", "export")


def _command() -> list[str]:
    script = shutil.which("thoughtdesk", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "thoughtdesk"]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(
        os.environ,
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        QT_QPA_PLATFORM="offscreen",
    )
    env.pop("THOUGHTDESK_SELFTEST_MODEL", None)
    env.update(extra)
    return env


def test_self_test_passes_with_the_local_model(tmp_path, gguf_model):
    # the fixture assembles the test model if no earlier test has (this test used to skip then)
    run = subprocess.run(
        [*_command(), "--self-test"],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(tmp_path, THOUGHTDESK_SELFTEST_MODEL=str(gguf_model)),
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    for step in STEPS:
        assert any(line.startswith("[  ok   ] " + step + ":") for line in lines), (step, run.stdout)
    assert "self-test passed: 7 steps" in run.stdout
    # Nothing was written to the user's settings or data folders.
    assert not (tmp_path / "config").exists() and not (tmp_path / "data").exists()


def test_self_test_without_a_model_skips_generation(tmp_path, monkeypatch):
    env = _env(tmp_path, THOUGHTDESK_SELFTEST_MODEL=str(tmp_path / "missing.gguf"))
    run = subprocess.run(
        [*_command(), "--self-test"], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    # A model that is named but missing is a failure, said plainly; the other steps still run.
    assert run.returncode == 1
    assert "[FAILED ] local model: ModelFileError: llamacpp: model file" in run.stdout
    assert "[  ok   ] export:" in run.stdout and "self-test FAILED (local model)" in run.stdout
