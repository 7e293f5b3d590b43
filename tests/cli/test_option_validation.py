"""Every number and address on the command line is checked when it is read (issue 15, point 11):
`--limit -1` sent 1,318 of 1,319 samples; `--concurrency 0`, `--rpm -1`, `--max-tokens -5`,
`--temperature nan` and a bad port crashed with ValueError and left orphan "planned"/"running"
runs; `--timeout 0` spent 34 s retrying. Now each is refused with exit 2 and nothing created."""

from __future__ import annotations

import pytest

from tests.helpers.libraries import DEMO
from thoughtdesk.cli.main import main
from thoughtdesk.core.library.store import Library

BASE = ["generate", DEMO, "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--dataset", "gsm8k"]


@pytest.mark.parametrize(
    "options, words",
    [
        (["--limit", "-1"], "argument --limit: -1 is out of range (at least 1)"),
        (["--limit", "0"], "argument --limit: 0 is out of range"),
        (["--concurrency", "0"], "argument --concurrency: 0 is out of range (1 to 1024)"),
        (["--rpm", "-1"], "argument --rpm: -1 must be greater than 0"),
        (["--tpm", "0"], "argument --tpm: 0 must be greater than 0"),
        (["--max-tokens", "-5"], "argument --max-tokens: -5 is out of range"),
        (["--temperature", "nan"], "argument --temperature: 'nan' is not a finite number"),
        (["--temperature", "inf"], "argument --temperature: 'inf' is not a finite number"),
        (["--temperature", "-0.5"], "argument --temperature: -0.5 is out of range (0 to 2)"),
        (["--temperature", "3"], "argument --temperature: 3 is out of range (0 to 2)"),
        (["--timeout", "0"], "argument --timeout: 0 is out of range (1 to 86400)"),
        (["--n", "0"], "argument --n: 0 is out of range"),
        (["--max-attempts", "0"], "argument --max-attempts: 0 is out of range"),
        (["--retry-wait", "-1"], "argument --retry-wait: -1 is out of range"),
        (["--max-response-mb", "0"], "argument --max-response-mb: 0 is out of range (1 to 4096)"),
        (["--max-response-mb", "5000"], "argument --max-response-mb: 5000 is out of range (1 to 4096)"),
        (["--limit", "ten"], "argument --limit: 'ten' is not a whole number"),
        (["--base-url", "http://127.0.0.1:99999/v1"], "has a port that is not a number from 0 to 65535"),
        (["--base-url", "127.0.0.1:8080"], "is not an http:// or https:// address with a host"),
    ],
)
def test_bad_numbers_are_refused_before_anything_is_created(library_path, capsys, options, words):
    with Library.open(library_path) as lib:
        runs_before = lib.conn.execute("SELECT count(*) FROM run").fetchone()[0]
    args = ["--library", str(library_path), *BASE]
    if options[0] == "--base-url":
        args = args[: args.index("--base-url")] + args[args.index("--base-url") + 2 :]
    with pytest.raises(SystemExit) as exited:
        main([*args, *options, "--one-step", "--trigger", "kojima-01"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    with Library.open(library_path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM run").fetchone()[0] == runs_before


@pytest.mark.parametrize(
    "args",
    [
        ["critique", DEMO, "--model", "openai:m", "--concurrency", "0"],
        ["critique", DEMO, "--model", "openai:m", "--limit", "-2"],
        ["import", "x.json", "--dataset", "gsm8k", "--limit", "-1"],
        ["evaluate", DEMO, "--resamples", "0"],
        ["resume", "1", "--rpm", "nan"],
    ],
)
def test_other_commands_check_their_numbers_too(library_path, capsys, args):
    with pytest.raises(SystemExit) as exited:
        main(["--library", str(library_path), *args])
    assert exited.value.code == 2 and "Traceback" not in capsys.readouterr().err
