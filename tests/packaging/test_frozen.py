"""The frozen (PyInstaller) application: its self-test, when dist/ holds a build.

Without a build they skip, so the everyday test run needs no PyInstaller; CI builds the bundle
first and sets ``THOUGHTDESK_EXPECT_FROZEN=1``, under which a missing build fails them instead.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

FROZEN = ROOT / "dist" / "thoughtdesk" / ("thoughtdesk.exe" if os.name == "nt" else "thoughtdesk")
#: Set by .ci/run after packaging/build.sh: the bundle must be there, and these tests must run.
EXPECT_FROZEN_ENV = "THOUGHTDESK_EXPECT_FROZEN"


@pytest.fixture
def frozen() -> Path:
    if not FROZEN.exists():
        if os.environ.get(EXPECT_FROZEN_ENV) == "1":
            pytest.fail(f"no frozen build at {FROZEN}, and {EXPECT_FROZEN_ENV}=1 says there must be one")
        pytest.skip(f"no frozen build at {FROZEN} (run packaging/build.sh first)")
    return FROZEN


def test_frozen_self_test(frozen, tmp_path, gguf_model):
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        THOUGHTDESK_SELFTEST_MODEL=str(gguf_model),  # the bundled llama.cpp generates, not skipped
    )
    run = subprocess.run(
        [str(frozen), "--self-test"], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "(frozen)" in run.stdout and "self-test passed: 7 steps" in run.stdout
    assert "[  ok   ] main window:" in run.stdout
    assert f"[  ok   ] local model: {gguf_model.name}:" in run.stdout


def test_frozen_cli_and_version(frozen, tmp_path):
    run = subprocess.run([str(frozen), "--version"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip().startswith("thoughtdesk ")
    gui = frozen.with_name(frozen.name.replace("thoughtdesk", "thoughtdesk-gui"))
    run = subprocess.run([str(gui), "--version"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip().startswith("thoughtdesk ")  # the same app, windowed
    run = subprocess.run(
        [str(frozen), "datasets"], capture_output=True, text=True, timeout=60, env=dict(os.environ, HOME=str(tmp_path))
    )
    assert run.returncode == 0 and "gsm8k" in run.stdout


def test_frozen_bundle_has_qt_plugins_and_llama_libraries(frozen):
    gui = frozen.parent / ("thoughtdesk-gui.exe" if os.name == "nt" else "thoughtdesk-gui")
    assert gui.exists(), "the windowed executable beside the console one"
    internal = frozen.parent / "_internal"
    plugins = internal / "PySide6" / "Qt" / "plugins" / "platforms"
    assert (plugins / "libqoffscreen.so").exists() and (plugins / "libqxcb.so").exists()
    assert list((internal / "llama_cpp" / "lib").glob("libllama.so*"))
    assert (internal / "thoughtdesk" / "resources" / "thoughtdesk.svg").exists()


def test_frozen_bundle_leaves_out_the_build_tools(frozen):
    """setuptools is a build tool: collected, PyInstaller adds a runtime hook that imports it at
    every start (~100 ms of the first paint, issue 27 point 2). Nothing imports it at run time."""
    readers = pytest.importorskip("PyInstaller.archive.readers", reason="PyInstaller reads the bundle's archive")
    archive = readers.CArchiveReader(str(frozen))
    assert "pyi_rth_setuptools" not in archive.toc
    modules = archive.open_embedded_archive("PYZ.pyz").toc
    assert len(modules) > 1000  # the application's modules are there
    assert not [name for name in modules if name.split(".")[0] in {"setuptools", "pkg_resources", "_distutils_hack"}]
