"""The wheel: it holds every package and the shipped resources, and installed on its own into a
fresh venv, its ``thoughtdesk --self-test`` passes.

The wheel is built from a copy of exactly what pyproject.toml packs (so nothing the build writes
lands in the checkout), without build isolation and without network. The fresh venv gets the
wheel with ``--no-deps --no-index``; the third-party packages come from this interpreter's
site-packages through a ``.pth`` file, which adds those folders to ``sys.path`` without running the
``.pth`` files inside them: the editable install of ThoughtDesk that the test venv has stays out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

#: What the build reads: the metadata, the README (long description), the code and resources/.
BUILD_INPUTS = ("pyproject.toml", "README.md", "LICENSE", "desktop", "resources")
SELF_TEST_STEPS = ("environment", "library", "import", "main window", "local model", "answer extraction", "export")


def _packages_under_desktop() -> set[str]:
    return {
        ".".join(init.parent.relative_to(ROOT / "desktop").parts) for init in (ROOT / "desktop").rglob("__init__.py")
    }


def test_pyproject_lists_every_package() -> None:
    """setuptools cannot both find packages and map one from outside desktop/, so they are listed:
    a package added under desktop/ and not listed would be missing from every wheel."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    missing = _packages_under_desktop() - listed
    assert not missing, f"add these to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    assert listed - _packages_under_desktop() == {"thoughtdesk.resources"}
    assert setuptools["package-dir"] == {"": "desktop", "thoughtdesk.resources": "resources"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build --wheel`` of a copy of the build inputs, with this interpreter's setuptools."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    for name in BUILD_INPUTS:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(origin, source / name)
    # build checks [build-system] requires against this interpreter: the `test` extra brings them.
    run = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(work / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        env=_without_pythonpath(),
    )
    assert run.returncode == 0, f"the wheel did not build (is the `test` extra installed?)\n{run.stdout}{run.stderr}"
    (built,) = (work / "dist").glob("thoughtdesk-*.whl")
    return built


def _without_pythonpath(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(extra)
    return env


@pytest.mark.slow
def test_wheel_holds_every_package_the_resources_and_the_command(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    for package in _packages_under_desktop():
        assert package.replace(".", "/") + "/__init__.py" in names, package
    shipped = sorted(path.name for path in (ROOT / "resources").iterdir())
    assert shipped and all(f"thoughtdesk/resources/{name}" in names for name in shipped), shipped
    assert "thoughtdesk = thoughtdesk.cli.main:main" in entry_points
    # The windowed entry of a pip install (no console window on Windows), and a function behind it.
    gui = entry_points.split("[gui_scripts]", 1)[1].split("[", 1)[0] if "[gui_scripts]" in entry_points else ""
    assert "thoughtdesk-gui = thoughtdesk.cli.main:gui_main" in gui, entry_points
    # PEP 639: the licence file in the metadata folder, and the SPDX expression in METADATA.
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names), "LICENSE is not in the wheel"
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    assert not [name for name in names if name.startswith(("tests/", "resources/", "desktop/"))]


@pytest.mark.slow
def test_the_wheel_in_a_fresh_venv_passes_its_self_test(wheel: Path, gguf_model: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120, env=_without_pythonpath())
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
        env=_without_pythonpath(),
    )
    assert install.returncode == 0, install.stdout + install.stderr
    child_site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
            env=_without_pythonpath(),
        ).stdout.strip()
    )
    # The test venv's third-party packages (Qt, llama.cpp, ...), after the fresh venv's own.
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    ours |= {entry for entry in sys.path if entry.endswith(("site-packages", "dist-packages"))}
    (child_site / "_test_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n", encoding="utf-8")

    env = _without_pythonpath(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        QT_QPA_PLATFORM="offscreen",
        THOUGHTDESK_SELFTEST_MODEL=str(gguf_model),
    )
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import thoughtdesk; from thoughtdesk.core.paths import resource_path;"
            " print(thoughtdesk.__file__); print(resource_path('fragments.json'))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr
    package_file, fragments = (Path(line) for line in where.stdout.splitlines())
    assert package_file.is_relative_to(child_site), f"thoughtdesk came from {package_file}, not the wheel"
    assert fragments == child_site / "thoughtdesk" / "resources" / "fragments.json" and fragments.is_file()

    command = venv / ("Scripts/thoughtdesk.exe" if os.name == "nt" else "bin/thoughtdesk")
    windowed = venv / ("Scripts/thoughtdesk-gui.exe" if os.name == "nt" else "bin/thoughtdesk-gui")
    assert windowed.is_file(), "pip made no thoughtdesk-gui (the [project.gui-scripts] entry)"
    version = subprocess.run([str(windowed), "--version"], capture_output=True, text=True, timeout=60, env=env)
    assert version.returncode == 0 and version.stdout.startswith("thoughtdesk "), version.stdout + version.stderr
    run = subprocess.run(
        [str(command), "--self-test"], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    for step in SELF_TEST_STEPS:
        assert any(line.startswith(f"[  ok   ] {step}:") for line in lines), (step, run.stdout)
    assert f"self-test passed: {len(SELF_TEST_STEPS)} steps" in run.stdout
    assert not (tmp_path / "config").exists() and not (tmp_path / "data").exists()
