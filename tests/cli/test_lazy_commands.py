"""Issue 27, point 1: each command imports only what it uses. ``--help`` lists every command from
cli/commands.py's table without importing the command modules; a cheap command (``--version``,
``--help``, ``collections``, ``runs``, ``datasets``...) imports none of the heavy libraries. Each
case runs in a child process (what it imported is what a user's start pays for) and reports
``sys.modules`` at its end. Timing: tests/benchmarks/bench_cli_start.py."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.libraries import DEMO
from thoughtdesk.cli.commands import COMMANDS
from thoughtdesk.cli.main import build_parser

#: Libraries that cost a start a tenth of a second or more each (sqlite-utils pulls in pandas when
#: it is installed), and the GUI. `rich` draws progress lines, `keyring` reads API keys: neither
#: is needed to list a library's collections.
HEAVY = (
    "sqlite_utils",
    "pandas",
    "httpx",
    "httpcore",
    "pyqtgraph",
    "scipy",
    "numpy",
    "pyarrow",
    "llama_cpp",
    "PySide6",
    "rich",
    "keyring",
    "rapidfuzz",
    "asyncio",
)

_REPORTER = """
import json, sys
from thoughtdesk.cli.main import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
with open(sys.argv[1], "w", encoding="utf-8") as stream:
    json.dump(sorted(sys.modules), stream)
"""


def imported_by(argv: list[str], tmp_path: Path) -> set[str]:
    """The modules a fresh ``thoughtdesk ARGV`` had imported when it ended (a child process)."""
    report = tmp_path / f"modules-{len(list(tmp_path.glob('modules-*')))}.json"
    done = subprocess.run(
        [sys.executable, "-c", _REPORTER, str(report), *argv], capture_output=True, text=True, timeout=120
    )
    assert report.exists(), done.stderr
    return set(json.loads(report.read_text(encoding="utf-8")))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted({name.split(".")[0] for name in modules} & set(HEAVY))


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["collections"],
        ["collections", "--json"],
        ["runs"],
        ["datasets"],
        ["library", "path"],
        ["stats", "--help"],
        ["critiques", "--help"],  # beside the critique and revise runs: their engine is imported when they run
        ["judgements", "--help"],  # beside the judge runs, likewise
    ],
    ids=" ".join,
)
def test_a_cheap_command_imports_no_heavy_library(argv, library_path, tmp_path):
    modules = imported_by(["--library", str(library_path), *argv], tmp_path)
    assert "thoughtdesk.cli.main" in modules  # the command did run
    assert not heavy_in(modules), f"`thoughtdesk {' '.join(argv)}` imported {heavy_in(modules)}"


def test_help_and_version_import_no_command_module_and_no_library(library_path, tmp_path):
    for argv in (["--help"], ["--version"], ["--library", str(library_path), "--help"]):
        modules = imported_by(argv, tmp_path)
        commands = sorted(m for m in modules if m.startswith("thoughtdesk.cli.") and m.split(".")[2] in _MODULES)
        assert not commands, f"{argv} imported {commands}"
        assert not any(m.startswith("thoughtdesk.core.library") for m in modules), argv


def test_a_command_imports_only_its_own_module(library_path, tmp_path):
    modules = imported_by(["--library", str(library_path), "stats", DEMO], tmp_path)
    assert sorted(m for m in modules if m.startswith("thoughtdesk.cli.") and m.split(".")[2] in _MODULES) == [
        "thoughtdesk.cli.stats"
    ]


_MODULES = {command.module for command in COMMANDS.values()}


def _listed(parser: argparse.ArgumentParser) -> list[tuple[str, str | None]]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [(choice.dest, choice.help) for choice in action._choices_actions]


def test_the_table_is_what_the_modules_register():
    """cli/commands.py lists every command its module registers, in --help's order, and nothing
    else: the lazy parser's --help is the full parser's, line for line."""
    full, lazy = build_parser(), build_parser(load=())
    assert _listed(full) == _listed(lazy) == [("gui", _listed(full)[0][1]), *[(n, c.help) for n, c in COMMANDS.items()]]
    assert full.format_help() == lazy.format_help()
    for name, command in COMMANDS.items():  # each module alone registers its own rows
        alone = build_parser(load={command.module})
        (action,) = [a for a in alone._actions if isinstance(a, argparse._SubParsersAction)]
        func = action.choices[name].get_default("func")  # None for a group (keys, library): its parts have theirs
        assert getattr(func, "__name__", None) != "_not_loaded", name  # the real parser, not the stand-in


def test_per_command_help_is_the_full_one(capsys):
    from thoughtdesk.cli.main import main

    with pytest.raises(SystemExit):
        main(["rationales", "extract", "--help"])
    text = capsys.readouterr().out
    assert "--model" in text and "examples:\n  thoughtdesk rationales extract" in text
