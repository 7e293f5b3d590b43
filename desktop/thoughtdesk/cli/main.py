"""The ``thoughtdesk`` command: the GUI without arguments, headless sub-commands otherwise.

Every sub-command works on the same core as the GUI and takes the global ``--library PATH``.
Exit status is 0 on success; on failure one line saying why goes to stderr and the status is 1
(2 for a command line that does not parse).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Callable, Sequence

from thoughtdesk import __version__
from thoughtdesk.cli import critiques, evaluate, generate, library, rationales, review, trajectories
from thoughtdesk.cli.common import EXIT_FAIL
from thoughtdesk.core.errors import ThoughtDeskError


def cmd_gui(args: argparse.Namespace) -> int:
    from thoughtdesk.ui.app.startup import run_gui

    return run_gui(args.library)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thoughtdesk",
        description="ThoughtDesk: a local workbench for chain-of-thought data. "
        "Without a command, the desktop application starts.",
    )
    parser.add_argument("--version", action="version", version=f"thoughtdesk {__version__}")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check this installation (offscreen: library, import, window, local model) and exit",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        default=None,
        help="offline mode for this run: no connection except to this machine",
    )
    parser.add_argument(
        "--library",
        metavar="PATH",
        help="the library file to use (default: $THOUGHTDESK_LIBRARY, else the user data folder)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("gui", help="start the desktop application (the default)")
    p.set_defaults(func=cmd_gui)

    for module in (library, generate, evaluate, critiques, review, rationales, trajectories):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = getattr(args, "func", cmd_gui)
    from thoughtdesk.core.settings.startup import apply_startup_config

    apply_startup_config(offline=args.offline)  # offline mode, the key file if agreed
    if args.self_test:
        from thoughtdesk.ui.app.selftest import run_self_test

        func = run_self_test
    try:
        return func(args)
    except ThoughtDeskError as error:
        print(f"thoughtdesk: {error}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        print("thoughtdesk: interrupted; nothing was changed by the interrupted step", file=sys.stderr)
        return 130
    except OSError as error:
        print(f"thoughtdesk: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return EXIT_FAIL
    except sqlite3.Error as error:  # a read outside a transaction met a damaged or vanished file
        print(f"thoughtdesk: {_sqlite_message(error, args)}", file=sys.stderr)
        return EXIT_FAIL


def _sqlite_message(error: sqlite3.Error, args: argparse.Namespace) -> str:
    from thoughtdesk.core.library.store import library_error
    from thoughtdesk.core.paths import resolve_library_path

    path = resolve_library_path(getattr(args, "library", None))
    translated = library_error(error, path)
    return str(translated) if translated is not None else f"the library {path}: SQLite error: {error}"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
