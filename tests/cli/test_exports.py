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
