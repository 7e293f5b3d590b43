"""`thoughtdesk import` of DS Critique Bank files and `thoughtdesk export --format dscb`, as a user
runs them: a real process, real files, exit codes, one-line errors."""

from __future__ import annotations

import json

from tests.cli.test_cli import run
from tests.core.importing.test_import_skip import library_digest
from tests.helpers.paths import FIXTURES
from thoughtdesk.core.datasets.ts_extras import load_with_extras

DSCB = FIXTURES / "dscb"
CROWD = DSCB / "DSCB-train-crowd-anno.jsonl"


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def test_import_recognises_dscb_and_export_gives_it_back(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    result = run("import", CROWD, "--collection", "crowd", library=lib)
    assert result.returncode == 0, result.stderr
    assert "2 DS Critique Bank record(s) of 2 question(s) imported into 'crowd'" in result.stdout
    assert "3 critique(s) and 6 human rating(s)" in result.stdout
    stats = json.loads(run("stats", "crowd", "--json", library=lib).stdout)["splits"]
    assert {(s["dataset"], s["split"], s["generated_cots"]) for s in stats} == {
        ("ARC-Challenge", "train-crowd-anno", 1),
        ("OBQA", "train-crowd-anno", 1),
    }
    out = tmp_path / "out.jsonl"
    result = run("export", "crowd", out, "--format", "dscb", library=lib)
    assert result.returncode == 0, result.stderr
    assert "2 DS Critique Bank record(s) of 'crowd' written" in result.stdout
    assert lines(out) == lines(CROWD)
    # The default export stays ThoughtSource JSON, with the critiques in the extension field.
    ts = tmp_path / "out.json"
    assert run("export", "crowd", ts, library=lib).returncode == 0
    data = load_with_extras(ts)  # ThoughtDesk's extension fields are in the side file
    cot = data["OBQA"]["train-crowd-anno"][0]["generated_cot"][0]
    assert len(cot["thoughtdesk_critiques"]["critiques"]) == 2


def test_split_option_and_duplicates(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    assert run("import", CROWD, "--collection", "c", "--split", "mine", library=lib).returncode == 0
    result = run("import", CROWD, "--collection", "c", "--split", "mine", library=lib)
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "--on-duplicate" in result.stderr
    result = run("import", CROWD, "--collection", "c", "--split", "mine", "--on-duplicate", "replace", library=lib)
    assert result.returncode == 0 and "2 question(s) replaced" in result.stdout
    stats = json.loads(run("stats", "c", "--json", library=lib).stdout)["splits"]
    assert {s["split"] for s in stats} == {"mine"} and sum(s["samples"] for s in stats) == 2


def test_a_bad_record_is_one_line_naming_file_line_and_field(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    assert run("import", CROWD, library=lib).returncode == 0
    before = library_digest(lib)
    records = lines(CROWD)
    records[1]["critiques"] = "none"
    bad = tmp_path / "DSCB-bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    result = run("import", bad, library=lib)
    assert result.returncode == 1
    assert result.stderr == f"thoughtdesk: {bad}, line 2: field critiques: must be a list, not text\n"
    assert library_digest(lib) == before
    result = run("import", bad, "--on-error", "skip", library=lib)
    assert result.returncode == 0, result.stderr
    assert "1 DS Critique Bank record(s)" in result.stdout and "1 bad record(s) skipped; skip log:" in result.stdout


def test_subset_options_are_refused(tmp_path):
    result = run("import", CROWD, "--limit", "1", library=tmp_path / "lib.thoughtdesk")
    assert result.returncode == 1 and "--limit cannot be used with a DS Critique Bank file" in result.stderr
    result = run("import", CROWD, "--split", "a", "--split", "b", library=tmp_path / "lib.thoughtdesk")
    assert result.returncode == 1 and "give --split once" in result.stderr
