"""`thoughtdesk import` of ProcessBench and PRM800K files and `export --format processbench|prm800k|prm-jsonl`,
as a user runs them: real parsing, files, exit codes, one-line errors."""

from __future__ import annotations

import json

from tests.cli.test_cli import run
from tests.core.importing.test_import_skip import library_digest
from tests.helpers.paths import FIXTURES

STEPS = FIXTURES / "steps"


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def test_import_recognises_both_layouts_and_export_gives_them_back(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    result = run("import", STEPS / "phase2_test.jsonl", "--collection", "prm", library=lib)
    assert result.returncode == 0, result.stderr
    assert "3 PRM800K solution(s) of 2 problem(s) imported into 'prm' with 6 step label(s)" in result.stdout
    out = tmp_path / "prm.jsonl"
    result = run("export", "prm", out, "--format", "prm800k", library=lib)
    assert result.returncode == 0, result.stderr
    assert "3 prm800k record(s) of 'prm' written" in result.stdout
    assert lines(out) == lines(STEPS / "phase2_test.jsonl")

    result = run("import", STEPS / "gsm8k.json", "--collection", "pb", library=lib)
    assert result.returncode == 0, result.stderr
    assert "3 ProcessBench solution(s) of 3 problem(s)" in result.stdout
    out = tmp_path / "pb.jsonl"
    assert run("export", "pb", out, "--format", "processbench", library=lib).returncode == 0
    assert lines(out) == json.loads((STEPS / "gsm8k.json").read_text())

    out = tmp_path / "train.jsonl"
    result = run("export", "pb", out, "--format", "prm-jsonl", "--json", library=lib)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["records"] == 3
    assert [r["labels"] for r in lines(out)] == [[True, True, True], [False], [True, True, True, False]]


def test_a_bad_label_is_one_line_and_the_library_is_unchanged(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    assert run("import", STEPS / "math.jsonl", library=lib).returncode == 0
    before = library_digest(lib)
    records = lines(STEPS / "math.jsonl")
    records[1]["label"] = 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run("import", bad, "--collection", "bad", library=lib)
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"{bad}, line 2: field label: 2 is outside -1..1" in result.stderr
    assert library_digest(lib) == before


def test_a_prm800k_record_without_steps(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    records = lines(STEPS / "phase2_test.jsonl")
    del records[2]["label"]["steps"]
    bad = tmp_path / "phase2_bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run("import", bad, library=lib)
    assert result.returncode != 0 and result.stderr.count("\n") == 1, result.stderr
    assert f"{bad}, line 3: field label.steps: missing" in result.stderr
