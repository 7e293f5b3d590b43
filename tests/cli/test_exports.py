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
