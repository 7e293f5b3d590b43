"""What every sub-command shares: exit codes, the progress line, opening the library."""

from __future__ import annotations

import argparse
import sys
import time

from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import resolve_library_path

EXIT_OK, EXIT_FAIL = 0, 1  # argparse itself exits with 2 on a usage error


class ProgressLine:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty()
        self.started = time.monotonic()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and done != total:
            return
        self._last = now
        if total:
            width = 30
            filled = int(width * done / total)
            bar = "#" * filled + "-" * (width - filled)
            sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total}")
        else:
            sys.stderr.write(f"\r{self.label} {done}")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def open_library(args: argparse.Namespace, *, create: bool = True) -> Library:
    """The library named by ``--library`` (or the default one)."""
    return Library.open(resolve_library_path(args.library), create=create)
