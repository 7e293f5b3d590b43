"""What every sub-command shares: exit codes, the progress line, opening the library."""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.settings.saved import resolve_library_path

if TYPE_CHECKING:  # imported where a library is opened: `--help` and the like never need it
    from thoughtdesk.core.library.store import Library

log = logging.getLogger(__name__)
EXIT_OK, EXIT_FAIL = 0, 1  # argparse itself exits with 2 on a usage error
EXIT_INTERNAL = 3  # a bug: the traceback is in the log file
EXIT_INTERRUPTED = 130  # Ctrl+C, as a shell reports a process ended by SIGINT


class ProgressLine:
    """Progress of long work on stderr, drawn by rich (only when stderr is a terminal): a bar,
    done/total, the rate and the time left; ``unit="bytes"`` shows MB and MB/s. The whole line is
    redrawn each time, so nothing of a longer label is left behind when it shortens; :meth:`finish`
    ends the line. A line still open when a command fails is ended by :func:`finish_progress`."""

    def __init__(self, label: str, *, unit: str = "items") -> None:
        self.label = label
        self.unit = unit
        self.enabled = sys.stderr.isatty()
        self.started = time.monotonic()
        self._last = 0.0
        self._progress: Any = None
        self._task: Any = None

    def _start(self, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        if self.unit == "bytes":
            counts: tuple[Any, ...] = (DownloadColumn(), TransferSpeedColumn())
        else:
            counts = (MofNCompleteColumn(), TextColumn("{task.fields[rate]}"))
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            *counts,
            TimeRemainingColumn(),
            console=Console(file=sys.stderr),
            auto_refresh=False,  # redrawn from __call__: no thread left running if a command dies
        )
        self._progress.start()
        self._task = self._progress.add_task(self.label, total=total, rate="")
        _ACTIVE.add(self)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and done != total:
            return
        self._last = now
        if self._progress is None:
            self._start(total or None)
        elapsed = max(now - self.started, 1e-6)
        rate = f"{done / elapsed:,.1f} {self.unit}/s" if self.unit != "bytes" else ""
        self._progress.update(self._task, completed=done, total=total or None, description=self.label, rate=rate)
        self._progress.refresh()

    def finish(self) -> None:
        """End the line (the last figures stay on screen)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        _ACTIVE.discard(self)


_ACTIVE: set[ProgressLine] = set()


def finish_progress() -> None:
    """End every progress line still drawn (before a failed command prints its one line)."""
    for line in list(_ACTIVE):
        line.finish()


def spool_stdin(folder: Path) -> Path:
    """Standard input copied to a file in ``folder``, named ``stdin`` with the suffix its start
    suggests (``.json``, ``.jsonl``, ``.tsv`` or ``.csv``), so the import can sniff it as a file."""
    data = sys.stdin.buffer.read()
    head = data[:65536].lstrip(b"\xef\xbb\xbf \t\r\n")
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    if head.startswith(b"{") and len(lines) > 1 and all(line.startswith(b"{") for line in lines[:2]):
        suffix = ".jsonl"
    elif head.startswith((b"{", b"[")):
        suffix = ".json"
    else:
        suffix = ".tsv" if lines and b"\t" in lines[0] else ".csv"
    path = folder / f"stdin{suffix}"
    path.write_bytes(data)
    return path


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
    from thoughtdesk.core.library.store import Library

    library = Library.open(path, create=create)
    if created:
        print(f"thoughtdesk: created new library at {path}", file=sys.stderr, flush=True)
    log.info(
        "library %s %s%s",
        path,
        "created" if created else "opened",
        " (read-only: its file or folder cannot be written)" if library.read_only else "",
    )

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


def server_urls(text: str) -> list[str]:
    """An argparse type: one http(s) address, or several separated by commas (a server pool)."""
    urls = [server_url(part) for part in text.split(",") if part.strip()]
    if not urls:
        raise argparse.ArgumentTypeError(f"{text!r} names no address")
    return urls


def base_url_options(values: list[list[str]] | None) -> dict[str, object]:
    """ModelSpec options for repeated ``--base-url`` values (each one or several addresses):
    the first address is ``base_url``, the others a pool's ``more_base_urls``."""
    urls = [url for group in values or () for url in group]
    if not urls:
        return {}
    return {"base_url": urls[0], **({"more_base_urls": tuple(urls[1:])} if len(urls) > 1 else {})}


def log_to_file(verbose: int) -> None:
    """A sub-command logs to the application's log file, as the GUI does; ``-v`` also shows
    ThoughtDesk's messages on stderr (``-vv`` with debugging detail). Keys are redacted."""
    from thoughtdesk.core.settings.logs import RedactingFilter, setup_logging, watch_keyring

    global _verbose_handler
    ours = logging.getLogger("thoughtdesk")
    if _verbose_handler is not None:  # main() called again in this process (tests, the self-test)
        ours.removeHandler(_verbose_handler)
        _verbose_handler = None
    level = logging.DEBUG if verbose >= 2 else logging.INFO
    try:
        setup_logging(level)
    except OSError as error:  # a log folder that cannot be written must not stop the command
        print(f"thoughtdesk: not logging to a file ({error.filename}: {error.strerror})", file=sys.stderr)
    watch_keyring()
    if verbose:
        _verbose_handler = _StderrHandler()
        _verbose_handler.setLevel(level)
        _verbose_handler.setFormatter(logging.Formatter("thoughtdesk: %(levelname)s %(name)s: %(message)s"))
        _verbose_handler.addFilter(RedactingFilter())
        ours.addHandler(_verbose_handler)
        ours.setLevel(level)


def stop_verbose_logging() -> None:
    """Take ``-v``'s stderr handler off again (main() run in-process: tests, the self-test)."""
    global _verbose_handler
    ours = logging.getLogger("thoughtdesk")
    if _verbose_handler is not None:
        ours.removeHandler(_verbose_handler)
        _verbose_handler = None
    ours.setLevel(logging.NOTSET)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record comes (not the one at creation)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # logging's __init__ assigns it; the property ignores it
        pass


_verbose_handler: logging.Handler | None = None
