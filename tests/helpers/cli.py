"""Running the ``thoughtdesk`` command in tests: in this process, or as a real child process.

:func:`run_cli` calls the command's ``main`` here, with its own standard input, output and error
and its own environment for the call, and returns what a child would have given
(:class:`CliResult`: the exit status, stdout, stderr): the parsing, the commands, the error lines
and the exit codes are all the real ones, without the 1-2 s a Python child takes to start
(issue 27: ~80 tests each paid it, most of them testing a command, not a process).

:func:`cli_process` and :func:`run_cli_process` start a real ``python -m thoughtdesk`` child with
this tree's code: for what only a process shows (killed and resumed runs, two processes on one
library, signals, start-up without a display, the entry point itself).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.paths import ROOT


@dataclass
class CliResult:
    """What a command gave: its exit status and what it wrote (as ``subprocess.run`` names them).
    ``stdout_bytes`` is the raw output, for what writes bytes (``export ... -``)."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes = field(default=b"", repr=False)


def cli_args(args: tuple[Any, ...], library: str | Path | None = None) -> list[str]:
    """``--library LIBRARY`` (when given) and then ``args``, as strings."""
    head = ["--library", str(library)] if library is not None else []
    return head + [str(arg) for arg in args]


def run_cli(
    *args: Any,
    library: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
) -> CliResult:
    """``thoughtdesk [--library LIBRARY] ARGS...`` run in this process.

    ``env``, when given, is the whole environment of the call (as ``subprocess.run``'s), restored
    afterwards; ``input`` is its standard input (empty otherwise, as a child's with no terminal).
    An ``argparse`` exit (``--help``, ``--version``, a usage error) is its exit status."""
    from thoughtdesk.cli.main import main

    argv = cli_args(args, library)
    data = input.encode() if isinstance(input, str) else (input or b"")
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", newline="", write_through=True)
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        with _environment(env):
            try:
                code = main(argv)
            except SystemExit as exit:
                code = _exit_status(exit.code, stderr)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    stdout.flush()
    stderr.flush()
    raw = out.getvalue()
    return CliResult(argv, int(code), raw.decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace"), raw)


def _exit_status(code: object, stderr: io.TextIOBase) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stderr)  # as the interpreter does with SystemExit("message")
    return 1


@contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with this tree's code first on the child's path and no
    proxy for 127.0.0.1."""
    base = dict(os.environ if env is None else env)
    path = [str(ROOT / "desktop"), *filter(None, base.get("PYTHONPATH", "").split(os.pathsep))]
    return {**base, "PYTHONPATH": os.pathsep.join(dict.fromkeys(path)), "NO_PROXY": "127.0.0.1"}


def cli_process(
    *args: Any,
    library: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    text: bool = True,
    **popen: Any,
) -> subprocess.Popen:
    """A real ``python -m thoughtdesk [--library LIBRARY] ARGS...`` child, started (its stdout and
    stderr piped unless ``popen`` says otherwise): for kills, signals, two processes at once."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen(
        [sys.executable, "-m", "thoughtdesk", *cli_args(args, library)], text=text, env=child_env(env), **popen
    )


def run_cli_process(
    *args: Any,
    library: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 180,
    text: bool = True,
    input: str | bytes | None = None,
) -> subprocess.CompletedProcess:
    """A real ``python -m thoughtdesk`` child run to its end: where the process itself is tested
    (the entry point, start-up, what the interpreter does at exit)."""
    return subprocess.run(
        [sys.executable, "-m", "thoughtdesk", *cli_args(args, library)],
        capture_output=True,
        text=text,
        timeout=timeout,
        env=child_env(env),
        input=input,
    )
