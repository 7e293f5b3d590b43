"""``thoughtdesk stats``: the text tables, --json with distributions, --overlap, bad options."""

from __future__ import annotations

import json

from tests.cli.test_cli import run
from tests.helpers.libraries import DEMO, demo_library


def test_stats_json_with_overlap_and_text_tables(tmp_path):
    lib = demo_library(tmp_path / "lib.thoughtdesk")
    result = run("stats", DEMO, "--json", "--overlap", "--ngram", "3", library=lib)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    splits = {(s["dataset"], s["split"]): s for s in data["splits"]}
    med = splits[("med_qa", "test")]
    assert med["samples"] == 5 and med["answer_types"] == {"multiplechoice": 5} and med["choice_counts"] == {"4": 5}
    assert med["token_lengths"]["question"]["count"] == 5 and med["token_lengths"]["question"]["min"] > 0
    fields = data["overlap"]["fields"]
    assert [f["field"] for f in fields] == ["question", "reference_cot"] and fields[0]["n"] == 3
    assert fields[0]["units"] == ["gsm8k", "med_qa", "pubmed_qa", "commonsense_qa"]
    assert all(fields[0]["containment"][i][i] == 1.0 for i in range(4))

    result = run("stats", DEMO, "--overlap", library=lib)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "token lengths (words)" in out and "median" in out and "multiplechoice 5" in out
    assert "question 8-gram overlap" in out and "reference_cot 8-gram overlap" in out
    assert "total" in out and "Traceback" not in result.stderr


def test_stats_bad_options_are_one_line_errors(tmp_path):
    lib = demo_library(tmp_path / "lib.thoughtdesk")
    result = run("stats", DEMO, "--overlap", "--ngram", "0", library=lib)
    assert result.returncode == 2 and "out of range" in result.stderr and "Traceback" not in result.stderr
    result = run("stats", DEMO, "--overlap-by", "model", library=lib)
    assert result.returncode == 2 and "invalid choice" in result.stderr
    result = run("stats", "nope", library=lib)
    assert result.returncode == 1 and "no collection named 'nope'" in result.stderr
