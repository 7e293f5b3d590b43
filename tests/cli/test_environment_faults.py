"""A hostile or broken environment under a successful command (issue 23, points 11 and 12): a log
file that cannot be written, a keyring variable that names no backend. Each is at most one line on
stderr, never a traceback."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.libraries import demo_library


def thoughtdesk(
    *args: str, env: dict[str, str], stdin: str | None = None, **options
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "thoughtdesk", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        input=stdin,
        **options,
    )


@pytest.mark.parametrize("value", ["", "nonsense", "no.such.module.Keyring", "json.JSONDecoder"])
@pytest.mark.parametrize("command", [("keys", "list"), ("keys", "set", "openai")])
def test_a_bad_keyring_variable_is_named_in_one_line(value, command):
    """Issue 23, point 12: an empty or bogus PYTHON_KEYRING_BACKEND made `keys list` and `keys set`
    an internal error (ValueError, ModuleNotFoundError from keyring's loader)."""
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": value}
    env.pop("THOUGHTDESK_TESTING", None)  # the real keyring lookup, which the variable steers
    result = thoughtdesk(*command, env=env, stdin="sk-test-key-0000\n")
    assert result.returncode == 1, result.stdout + result.stderr
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "internal error" not in message and "Traceback" not in message
    assert "PYTHON_KEYRING_BACKEND" in message and "unset it" in message
    assert ("empty" in message) if not value else (repr(value) in message)
    assert "sk-test-key-0000" not in result.stdout + result.stderr


def _no_bigger_files(limit: int):
    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), not the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_file_size


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return demo_library(tmp_path / "ward.thoughtdesk")


def test_a_log_file_at_the_file_size_limit_costs_one_line(library, tmp_path):
    """Issue 23, point 11: a log file that cannot grow put ~100 lines of tracebacks under the
    output of a command that worked. The log file is at the process's file-size limit (SIGXFSZ
    ignored, so each write fails with EFBIG); the library only needs reading."""
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "thoughtdesk.log"
    log.write_text("x" * 200_000)
    env = {**os.environ, "THOUGHTDESK_LOG_DIR": str(logs)}
    result = thoughtdesk(
        "--library", str(library), "collections", env=env, preexec_fn=_no_bigger_files(log.stat().st_size)
    )
    assert result.returncode == 0, result.stderr
    assert "demo" in result.stdout
    assert "Traceback" not in result.stderr and "Logging error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 1
    assert result.stderr.strip() == "" or "cannot write the log file" in result.stderr


def test_a_log_that_cannot_rotate_in_a_read_only_folder_costs_one_line(library, tmp_path):
    """The log file is due to rotate but its folder is read-only (the rename fails for every
    record); the file itself could be written."""
    from tests.core.library.test_file_faults import read_only

    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "thoughtdesk.log"
    log.write_text("x" * 1_100_000)  # past the rotation size (1 MB)
    env = {**os.environ, "THOUGHTDESK_LOG_DIR": str(logs)}
    with read_only(logs):
        result = thoughtdesk("--library", str(library), "collections", env=env)
    assert result.returncode == 0, result.stderr
    assert "demo" in result.stdout
    assert "Traceback" not in result.stderr and "Logging error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "cannot write the log file" in result.stderr
