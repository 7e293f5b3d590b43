"""What every sub-command shares: exit codes, the progress line, opening the library."""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from urllib.parse import urlsplit

from thoughtdesk.core.errors import ThoughtDeskError
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


@contextmanager
def library_for_import(args: argparse.Namespace) -> Iterator[Library]:
    """The library an import writes to, created if missing (and said so). When this command
    created it and the import then fails, the new, empty file is removed again, so a refused
    import leaves nothing behind where a typo in --library pointed."""
    path = resolve_library_path(args.library)
    existed = path.exists()
    made = [folder for folder in path.parents if not folder.exists()]  # innermost first
    library = open_library(args, create=True)
    try:
        yield library
    except BaseException:
        empty = not existed and not library.collections()  # the import's one transaction rolled back
        library.close()
        if empty:
            for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                leftover.unlink(missing_ok=True)
            for folder in made:
                with suppress(OSError):  # a folder something else has put files into stays
                    folder.rmdir()
            print(f"thoughtdesk: removed the new library {path} again: nothing was imported", file=sys.stderr)
        raise
    finally:
        library.close()


def open_library(args: argparse.Namespace, *, create: bool = False) -> Library:
    """The library named by ``--library`` (or the default one).

    Only a command that creates data (``import``) passes ``create=True``: a missing file is then
    created and the user is told so on stderr, as is any folder made for it, before it is made.
    Every other command refuses a missing file with "no library at PATH" instead of leaving an
    empty library behind where a typo pointed. A write that has to wait for another ThoughtDesk
    process says so on stderr while it waits.
    """
    path = resolve_library_path(args.library)
    created = False
    if not path.exists():
        if not create:
            raise ThoughtDeskError(
                f"no library at {path}; check --library (or $THOUGHTDESK_LIBRARY), or create one by "
                f"importing data: thoughtdesk import FILE --library {path}"
            )
        if not path.parent.is_dir():
            print(f"thoughtdesk: creating the folder {path.parent} for a new library", file=sys.stderr, flush=True)
        created = True
    library = Library.open(path, create=create)
    if created:
        print(f"thoughtdesk: created new library at {path}", file=sys.stderr, flush=True)

    def waiting(seconds: float, what: str | None) -> None:
        doing = f" ({what})" if what else ""
        print(
            f"thoughtdesk: waiting for another ThoughtDesk process to finish writing to {library.path}{doing}: "
            f"{seconds:.0f} s so far",
            file=sys.stderr,
            flush=True,
        )

    library.on_write_wait = waiting
    return library


# --- option types: every number and address is checked when the command line is read, before
# anything is created (a bad value used to crash mid-way and leave a run "planned" or "running").


def whole(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number within ``low``..``high`` (either may be open)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range ({_range(low, high)})")
        return value

    return parse


def number(
    low: float | None = None, high: float | None = None, *, above: float | None = None
) -> Callable[[str], float]:
    """An argparse type: a finite number within ``low``..``high``, or greater than ``above``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if above is not None and value <= above:
            raise argparse.ArgumentTypeError(f"{text} must be greater than {above:g}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range ({_range(low, high)})")
        return value

    return parse


def _range(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"{low:g} to {high:g}"
    return f"at least {low:g}" if low is not None else f"at most {high:g}"


def server_url(text: str) -> str:
    """An argparse type: an http(s) address with a host and, if given, a valid port."""
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not an http:// or https:// address with a host")
    try:
        parts.port  # noqa: B018 - reading it validates it (urllib raises for a bad port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} has a port that is not a number from 0 to 65535") from None
    return text.strip()
