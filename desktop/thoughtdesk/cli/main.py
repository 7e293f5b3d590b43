"""The ``thoughtdesk`` command: the GUI without arguments, headless sub-commands otherwise.

Every sub-command works on the same core as the GUI and takes ``--library PATH``, ``--offline``
and ``-v/--verbose`` before or after the sub-command's name. Exit status (docs/cli.md): 0 on
success; on failure one line saying why goes to stderr and the status is 1; 2 for a command line
that does not parse; 3 for an internal error (its traceback goes to the log file, not the
terminal); 130 when interrupted (Ctrl+C).
"""

from __future__ import annotations

import argparse
import os
import re  # argparse imports it anyway
import sqlite3
import sys
from collections.abc import Callable, Collection, Sequence
from contextlib import suppress
from importlib import import_module

from thoughtdesk.cli.commands import COMMANDS
from thoughtdesk.cli.help import add_examples

TYPE_CHECKING = False  # typing's own would import typing, which a start does not otherwise need
if TYPE_CHECKING:
    from typing import NoReturn

# What `--help`, `--version` and a command line that does not parse import is only the above:
# logging, the library, the settings and each command's module are imported once a command runs.


def cmd_gui(args: argparse.Namespace) -> int:
    from thoughtdesk.ui.app.startup import run_gui

    return run_gui(getattr(args, "file", None) or args.library)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, which says a mistyped command in one line with the closest command
    (argparse printed the whole usage and every choice, and suggested nothing; its own
    ``suggest_on_error`` needs Python 3.14). Sub-commands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        found = re.match(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if found is None:
            super().error(message)
        import difflib

        argument, wrong = found.group(1), found.group(2)
        choices = re.findall(r"'([^']*)'", found.group(3))
        close = difflib.get_close_matches(wrong, choices, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'? " if close else ""
        if argument.startswith("-"):  # an option's value: its choices are short, name them
            listed = ", ".join(choices)
            self.exit(2, f"{self.prog}: error: {argument}: invalid choice '{wrong}'; {hint}(one of: {listed})\n")
        self.exit(2, f"{self.prog}: error: '{wrong}' is not a command here; {hint}`{self.prog} --help` lists them\n")


def build_parser(load: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. ``load``: the command modules (``cli/commands.py``'s
    ``COMMANDS[name].module``) whose commands get their real parsers; None: all of them. Every
    other command is a stand-in with only its name and one-line help, which is all ``--help``
    shows of it and all :func:`chosen_command` needs, so its module is not imported."""
    parser = _Parser(
        prog="thoughtdesk",
        description="ThoughtDesk: a local workbench for chain-of-thought data. "
        "Without a command, the desktop application starts.",
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check this installation (offscreen: library, import, window, local model) and exit",
    )
    add_global_options(parser, on_sub_command=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("gui", help="start the desktop application (the default)")
    # The desktop entry's `thoughtdesk gui %f`: a library file opened from the file manager.
    p.add_argument("file", nargs="?", metavar="LIBRARY", help="a library file to open (as --library)")
    p.set_defaults(func=cmd_gui)

    registered: set[str] = set()
    for name, command in COMMANDS.items():
        if load is not None and command.module not in load:
            # A stand-in: takes whatever follows (parse_known_args) and cannot run by mistake.
            stand_in = sub.add_parser(name, help=command.help, add_help=False)
            stand_in.set_defaults(func=_not_loaded)
        elif command.module not in registered:  # its module adds all its commands, in table order
            registered.add(command.module)
            import_module(f"thoughtdesk.cli.{command.module}").register(sub)
    for command_parser in sub_commands(parser):
        if command_parser.get_default("func") is not _not_loaded:  # a stand-in passes them on
            add_global_options(command_parser, on_sub_command=True)
    add_examples(parser)
    return parser


def chosen_command(argv: Sequence[str] | None) -> str | None:
    """The sub-command ``argv`` names (None: none, the GUI), found by the parser itself with
    every command a stand-in: global options before the name (``--library PATH``, abbreviated
    ones) are read as the real parse reads them. ``--help``, ``--version`` and a command line
    that does not parse end here, having imported no command module."""
    known, _ = build_parser(load=()).parse_known_args(argv)
    return getattr(known, "command", None)


def _not_loaded(args: argparse.Namespace) -> int:
    raise RuntimeError(f"the command {args.command!r} was parsed without its module (cli/commands.py)")


class _VersionAction(argparse.Action):
    """``--version``: as argparse's, with the version read only when asked (package metadata)."""

    def __init__(self, option_strings: Sequence[str], dest: str) -> None:
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show program's version number and exit"
        )

    def __call__(self, parser: argparse.ArgumentParser, namespace: object, values: object, option: object = None):
        from thoughtdesk import __version__

        print(f"thoughtdesk {__version__}")
        parser.exit()


def add_global_options(parser: argparse.ArgumentParser, *, on_sub_command: bool) -> None:
    """``--library``, ``--offline`` and ``-v/--verbose``: on the main parser, and again on every
    sub-command (``thoughtdesk stats X --library L`` as well as ``thoughtdesk --library L stats X``).
    A sub-command's copy has no default, so it only overrides what was given before the name."""
    unset: object = argparse.SUPPRESS  # not in the namespace unless given here
    parser.add_argument(
        "--library",
        metavar="PATH",
        default=unset if on_sub_command else None,
        help="the library file to use (default: $THOUGHTDESK_LIBRARY, else the one chosen in the "
        "app's settings, else the user data folder); only `import` creates a missing one",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        default=unset if on_sub_command else None,
        help="offline mode for this run: no connection except to this machine",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=unset if on_sub_command else 0,
        help="say more on stderr (-v: what is done, -vv: debugging detail); the log file has it all",
    )


def sub_commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every sub-command's parser, nested ones (``fragments list``) included."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:  # private: argparse has no public walk of sub-parsers
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                found.append(child)
                found.extend(sub_commands(child))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    command = chosen_command(argv)
    parser = build_parser(load={COMMANDS[command].module} if command in COMMANDS else ())
    args = parser.parse_args(argv)
    import logging

    from thoughtdesk.cli.common import EXIT_INTERRUPTED, finish_progress, log_to_file

    func: Callable[[argparse.Namespace], int] = getattr(args, "func", cmd_gui)
    if func is not cmd_gui:  # first: what the start-up does (offline mode, the key file) is logged too
        log_to_file(args.verbose)
    from thoughtdesk.core.errors import ThoughtDeskError
    from thoughtdesk.core.settings.startup import apply_startup_config

    try:
        apply_startup_config(offline=args.offline)  # offline mode, the key file if agreed
        if getattr(args, "max_response_mb", False) is None:  # a command that calls models, no --max-response-mb
            from thoughtdesk.core.generation.backends.response_cap import check_saved_cap

            check_saved_cap()  # the saved ceiling, checked before a run is planned
    except ThoughtDeskError as error:  # a bad value in the settings file: one line
        return report_error(error, args)
    log = logging.getLogger(__name__)
    if log.isEnabledFor(logging.DEBUG):  # -vv: the version read from the package metadata (~25 ms)
        from thoughtdesk import __version__

        log.debug("thoughtdesk %s: %s", __version__, getattr(args, "command", None) or "gui")
    if args.self_test:
        from thoughtdesk.ui.app.selftest import run_self_test

        func = run_self_test
    try:
        return func(args)
    except Exception as error:
        finish_progress()  # a progress line ends before the error's one line is printed
        return report_error(error, args)
    except KeyboardInterrupt:
        finish_progress()
        print("thoughtdesk: interrupted; nothing was changed by the interrupted step", file=sys.stderr)
        return EXIT_INTERRUPTED


def gui_main(argv: Sequence[str] | None = None) -> int:
    """The windowed entry point (``thoughtdesk-gui``: pip's ``[project.gui-scripts]`` and the
    frozen bundle's windowed executable; no console window on Windows). ``thoughtdesk-gui FILE``,
    what a file manager runs for a library file, is ``thoughtdesk gui FILE``; anything else is
    passed on as to ``thoughtdesk``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 1 and not args[0].startswith("-"):
        args = ["gui", args[0]]
    return main(args)


def report_error(error: Exception, args: argparse.Namespace) -> int:
    """Print ``error`` as one line on stderr and return the exit status (docs/cli.md)."""
    import logging

    from thoughtdesk.cli.common import EXIT_FAIL, EXIT_INTERNAL, EXIT_OK
    from thoughtdesk.core.errors import ThoughtDeskError
    from thoughtdesk.core.settings.logs import redact

    if isinstance(error, ThoughtDeskError):
        print(f"thoughtdesk: {redact(str(error))}", file=sys.stderr)
        return EXIT_FAIL
    if isinstance(error, BrokenPipeError):  # `thoughtdesk export X - | head`: the reader has enough
        with suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return EXIT_OK
    if isinstance(error, OSError):
        print(f"thoughtdesk: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return EXIT_FAIL
    if isinstance(error, sqlite3.Error):  # a read outside a transaction met a damaged or vanished file
        print(f"thoughtdesk: {_sqlite_message(error, args)}", file=sys.stderr)
        return EXIT_FAIL
    # A bug: one line here, the traceback in the log file.
    logging.getLogger(__name__).error(
        "internal error in `thoughtdesk %s`", getattr(args, "command", None) or "", exc_info=error
    )
    print(
        f"thoughtdesk: internal error ({type(error).__name__}: {redact(str(error))}); the details are in {_log_path()}; "
        "please report it",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


def _log_path() -> str:
    from thoughtdesk.core.settings.logs import log_file

    return str(log_file())


def _sqlite_message(error: sqlite3.Error, args: argparse.Namespace) -> str:
    from thoughtdesk.core.library.file_faults import library_error
    from thoughtdesk.core.settings.saved import resolve_library_path

    path = resolve_library_path(getattr(args, "library", None))
    translated = library_error(error, path)
    return str(translated) if translated is not None else f"the library {path}: SQLite error: {error}"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
