"""A real full disk for a child process: a tiny tmpfs mounted in a private mount namespace
(``unshare --user --map-root-user --mount``), so no test needs root and nothing outside the
child sees the mount. Tests skip (with the reason) where the system does not allow it."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def full_disk_available() -> str | None:
    """None when :func:`run_on_a_small_disk` can run here, else why not."""
    if shutil.which("unshare") is None or sys.platform != "linux":
        return "no unshare(1) here: cannot mount a small disk for a test"
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && umount $d"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"cannot mount a small tmpfs in a user namespace here ({probe.stderr.strip()[:80]})"
    return None


def run_on_a_small_disk(
    folder: Path, size: str, argv: list[str], *, env: dict[str, str] | None = None, prepare: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with a tmpfs of ``size`` (``"64k"``) mounted on ``folder`` (an empty folder),
    after the shell command ``prepare`` (e.g. copying a file onto the small disk). The folder's
    content is gone when the child ends, as the mount is its own."""
    reason = full_disk_available()
    if reason is not None:
        pytest.skip(reason)
    folder.mkdir(parents=True, exist_ok=True)
    script = (
        f"mount -t tmpfs -o size={size} tmpfs {shlex.quote(str(folder))} && {prepare or 'true'} && exec "
        + " ".join(shlex.quote(part) for part in argv)
    )
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )
