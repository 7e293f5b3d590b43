"""``thoughtdesk export --format ...`` (issue 16, point 16)."""

from __future__ import annotations

import csv
import importlib.util
import json

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.cli.main import main

EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"


@pytest.fixture
def lib(tmp_path):
    path = tmp_path / "lib.thoughtdesk"
    assert main(["import", str(EDGE), "--collection", "edge", "--library", str(path)]) == 0
    return path


def test_formats_and_chat_filters(lib, tmp_path, capsys):
    base = ["--library", str(lib), "export", "edge"]
    assert main([*base, str(tmp_path / "a.csv"), "--format", "answers-csv", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert result == {"collection": "edge", "format": "answers-csv", "records": 3, "path": str(tmp_path / "a.csv")}
    with open(tmp_path / "a.csv", encoding="utf-8", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 3
    out = tmp_path / "train.jsonl"
    assert main([*base, str(out), "--format", "chat-jsonl", "--correct-only", "--preferred-only"]) == 0
    assert "1 chat example(s)" in capsys.readouterr().out
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    assert main([*base, str(tmp_path / "x.csv"), "--format", "samples-csv", "--correct-only"]) == 1
    assert "--correct-only only apply to --format chat-jsonl" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is not None, reason="pyarrow is installed here")
def test_parquet_without_pyarrow_is_one_line(lib, tmp_path, capsys):
    assert main(["--library", str(lib), "export", "edge", str(tmp_path / "x.parquet"), "--format", "parquet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'thoughtdesk[parquet]'" in err
    assert not (tmp_path / "x.parquet").exists()


def test_the_message_counts_what_was_written(lib, tmp_path, capsys):
    """Audit of issue 16: samples-csv said "row(s) (one per generated CoT)" whatever the rows were,
    and a missing folder got "Free some space or choose another folder"."""
    base = ["--library", str(lib), "export", "edge"]
    assert main([*base, str(tmp_path / "rows.csv"), "--format", "samples-csv"]) == 0
    assert "5 row(s): 3 generated CoT(s) and 2 sample(s) without one of 'edge'" in capsys.readouterr().out
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"quiz": {"test": [{"id": "q1", "question": "2+2?", "answer": ["4"]}]}}))
    assert main(["--library", str(lib), "import", str(plain), "--collection", "no cots"]) == 0
    capsys.readouterr()
    assert main(["--library", str(lib), "export", "no cots", str(tmp_path / "q.csv"), "--format", "samples-csv"]) == 0
    assert "1 row(s), one per sample (no generated CoTs) of 'no cots'" in capsys.readouterr().out
    missing = tmp_path / "unplugged" / "rows.csv"
    assert main([*base, str(missing), "--format", "samples-csv"]) == 1
    err = capsys.readouterr().err
    assert f"the folder {missing.parent} does not exist" in err and "space" not in err and err.count("\n") == 1


def _special_files(tmp_path) -> list[tuple[str, object]]:
    """A FIFO, and a character device (a copy of /dev/null's node, made in the test's folder,
    never the system's own) where this process may make one."""
    import os
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    found: list[tuple[str, object]] = [("a named pipe (FIFO)", fifo)]
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        found.append(("a character device", device))
    except OSError:
        pass  # no CAP_MKNOD here: the FIFO stands for every special file
    return found


@pytest.mark.parametrize("force", [False, True])
def test_an_export_never_replaces_a_device_or_a_fifo(lib, tmp_path, force):
    """Issue 23, point 5: an export onto a device node replaced it with a regular file even without
    --force (and --force onto a FIFO did the same); without --force a FIFO made the command wait
    forever (it was opened to see whether it held an earlier export). Run as a child process
    with a timeout, so the old behaviour fails instead of hanging."""
    import stat
    import subprocess
    import sys

    for what, special in _special_files(tmp_path):
        before = special.stat()  # type: ignore[attr-defined]
        for fmt in ("thoughtsource", "samples-csv"):
            result = subprocess.run(
                [sys.executable, "-m", "thoughtdesk", "--library", str(lib), "export", "edge", str(special)]
                + ["--format", fmt]
                + (["--force"] if force else []),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert result.returncode == 1, result.stdout + result.stderr
            message = result.stderr.strip()
            assert len(message.splitlines()) == 1 and "Traceback" not in message
            assert f"{special} is {what}, not a regular file" in message
            after = special.stat()  # type: ignore[attr-defined]
            assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    assert not [p for p in tmp_path.iterdir() if ".part" in p.name]
