"""The headless commands, run as a user runs them: real files, exit codes, the output; in this
process (tests/helpers/cli.py), but for the entry point itself, tested in a real child."""

from __future__ import annotations

import json

import pytest

from tests.helpers.cli import run_cli as run
from tests.helpers.cli import run_cli_process
from tests.helpers.paths import FIXTURES
from thoughtdesk import __version__
from thoughtdesk.core.datasets.ts_extras import load_with_extras
from thoughtdesk.core.library.store import Library

EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"


def test_version():
    result = run_cli_process("--version")  # `python -m thoughtdesk`, as installed
    assert result.returncode == 0
    assert result.stdout.strip() == f"thoughtdesk {__version__}"


def test_import_stats_collections_export_round_trip(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    result = run("import", EDGE, "--collection", "edge", library=lib)
    assert result.returncode == 0, result.stderr
    assert "4 sample(s) imported into 'edge'" in result.stdout

    result = run("collections", "--json", library=lib)
    assert result.returncode == 0
    assert [(c["name"], c["samples"]) for c in json.loads(result.stdout)] == [("edge", 4)]

    result = run("stats", "edge", "--json", library=lib)
    assert result.returncode == 0
    splits = {(s["dataset"], s["split"]): s for s in json.loads(result.stdout)["splits"]}
    counts = ("dataset", "split", "samples", "generated_cots", "answers", "annotations")
    assert {k: splits[("med_qa", "test")][k] for k in counts} == {
        "dataset": "med_qa",
        "split": "test",
        "samples": 2,
        "generated_cots": 2,
        "answers": 2,
        "annotations": 4,
    }
    assert splits[("gsm8k", "train")]["generated_cots"] == 1

    result = run("stats", "edge", library=lib)
    assert result.returncode == 0 and "med_qa" in result.stdout and "total" in result.stdout

    out = tmp_path / "out.json"
    result = run("export", "edge", out, library=lib)
    assert result.returncode == 0, result.stderr
    assert load_with_extras(out) == json.loads(EDGE.read_text(encoding="utf-8"))


def test_duplicate_import_fails_by_default_then_skip_and_replace(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    assert run("import", EDGE, library=lib).returncode == 0
    result = run("import", EDGE, library=lib)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "already exist" in result.stderr and "--on-duplicate" in result.stderr
    result = run("import", EDGE, "--on-duplicate", "skip", library=lib)
    assert result.returncode == 0 and "4 duplicate(s) skipped" in result.stdout
    result = run("import", EDGE, "--on-duplicate", "replace", library=lib)
    assert result.returncode == 0 and "4 replaced" in result.stdout


def test_library_from_environment(tmp_path):
    import os

    env = dict(os.environ, THOUGHTDESK_LIBRARY=str(tmp_path / "env.thoughtdesk"))
    assert run("import", EDGE, env=env).returncode == 0
    assert (tmp_path / "env.thoughtdesk").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("export", "missing", "x.json"), "no collection named 'missing'"),
        (("stats", "missing"), "no collection named 'missing'"),
        (("import", "does-not-exist.json"), "does-not-exist.json: cannot be read"),
    ],
)
def test_failures_exit_non_zero_with_one_line(tmp_path, args, message):
    lib = tmp_path / "lib.thoughtdesk"
    Library.open(lib).close()  # an existing, empty library
    result = run(*args, library=lib)
    assert result.returncode == 1
    assert result.stderr.startswith("thoughtdesk: ") and result.stderr.count("\n") == 1
    assert message in result.stderr


def test_bad_json_names_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": {"b": [\n  {"id": 1,,}\n]}}')
    result = run("import", bad, library=tmp_path / "lib.thoughtdesk")
    assert result.returncode == 1
    assert f"{bad}, line 2, column 12: invalid JSON" in result.stderr


def test_refuses_a_file_that_is_not_a_library(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = run("collections", library=notes)
    assert result.returncode == 1 and "not a ThoughtDesk library" in result.stderr
    assert notes.read_text() == "hello"


def test_usage_error_exits_2():
    result = run("import")
    assert result.returncode == 2


DATASETS = FIXTURES / "datasets"


def test_datasets_catalogue_json():
    result = run("datasets", "--json")
    assert result.returncode == 0
    names = {d["name"] for d in json.loads(result.stdout)}
    assert {"gsm8k", "med_qa", "medmc_qa", "pubmed_qa", "commonsense_qa", "strategy_qa"} <= names


def test_import_dataset_with_limit_seed_and_no_duplicates(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    result = run(
        "import",
        DATASETS / "gsm8k",
        "--dataset",
        "gsm8k",
        "--split",
        "test",
        "--limit",
        "2",
        "--seed",
        "5",
        "--collection",
        "math",
        library=lib,
    )
    assert result.returncode == 0, result.stderr
    assert "2 sample(s) imported into 'math'" in result.stdout
    stats = json.loads(run("stats", "math", "--json", library=lib).stdout)["splits"]
    assert [(s["dataset"], s["split"], s["samples"]) for s in stats] == [("gsm8k", "test", 2)]
    again = run(
        "import",
        DATASETS / "gsm8k",
        "--dataset",
        "gsm8k",
        "--split",
        "test",
        "--limit",
        "2",
        "--seed",
        "5",
        "--collection",
        "math",
        library=lib,
    )
    assert again.returncode == 1 and "already exist" in again.stderr
    skip = run(
        "import",
        DATASETS / "gsm8k",
        "--dataset",
        "gsm8k",
        "--split",
        "test",
        "--collection",
        "math",
        "--on-duplicate",
        "skip",
        library=lib,
    )
    assert skip.returncode == 0 and "2 duplicate(s) skipped" in skip.stdout


def test_import_unknown_dataset_lists_the_known_ones(tmp_path):
    result = run("import", DATASETS / "gsm8k", "--dataset", "nosuch", library=tmp_path / "lib.thoughtdesk")
    assert result.returncode == 1 and "unknown dataset 'nosuch'" in result.stderr and "gsm8k" in result.stderr


def test_generic_import_with_a_mapping(tmp_path):
    table = tmp_path / "items.csv"
    table.write_text("problem,label\nWhat is 2+2?,4\nWhat is 3+3?,6\n")
    result = run(
        "import",
        table,
        "--map",
        "question=problem,answer=label",
        "--collection",
        "g",
        library=tmp_path / "lib.thoughtdesk",
    )
    assert result.returncode == 0, result.stderr
    assert "2 sample(s) imported into 'g'" in result.stdout


def test_download_reuses_verified_cache_files_without_network(tmp_path, shared):
    import shutil

    source = shared("gsm8k")
    cache = tmp_path / "cache"
    (cache / "gsm8k").mkdir(parents=True)
    for name in ("train.jsonl", "test.jsonl"):
        shutil.copy(source / name, cache / "gsm8k" / name)
    result = run("--offline", "datasets", "gsm8k", "--download", "--cache", cache)
    assert result.returncode == 0, result.stderr
    assert f"2 file(s) of gsm8k in {cache / 'gsm8k'}" in result.stdout
    assert f"thoughtdesk import {cache / 'gsm8k'} --dataset gsm8k" in result.stdout


def test_download_offline_names_the_url_and_leaves_nothing(tmp_path):
    cache = tmp_path / "cache"
    result = run("--offline", "datasets", "gsm8k", "--download", "--cache", cache)
    assert result.returncode == 1
    assert "https://raw.githubusercontent.com/openai/grade-school-math/" in result.stderr
    assert "Traceback" not in result.stderr
    assert not list(cache.rglob("*.jsonl"))


def test_download_needs_a_name():
    result = run("datasets", "--download")
    assert result.returncode == 1
    assert "--download needs a dataset name" in result.stderr


def test_thoughtsource_file_refuses_subset_options_before_creating_a_library(tmp_path):
    library = tmp_path / "lib.thoughtdesk"
    result = run("import", EDGE, "--limit", "3", "--seed", "1", library=library)
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        "--limit, --seed need --dataset or --map; a ThoughtSource collection file is imported whole"
    )
    assert not library.exists()


def test_export_never_overwrites_the_library_and_asks_for_force_elsewhere(tmp_path):
    """Issue 15, point 1: `export edge L` onto the open library L exited 0 and destroyed it."""
    lib = tmp_path / "lib.thoughtdesk"
    assert run("import", EDGE, "--collection", "edge", library=lib).returncode == 0
    assert run("import", EDGE, "--collection", "other", library=lib).returncode == 0
    before = lib.read_bytes()
    for target in (lib, f"{lib}-wal", tmp_path / "." / lib.name):
        for force in ([], ["--force"]):
            result = run("export", "edge", target, *force, library=lib)
            assert result.returncode == 1, result.stdout
            assert "open library" in result.stderr and "Traceback" not in result.stderr
            assert len(result.stderr.strip().splitlines()) == 1
    assert lib.read_bytes() == before
    result = run("collections", "--json", library=lib)
    assert sorted(c["name"] for c in json.loads(result.stdout)) == ["edge", "other"]

    notes = tmp_path / "notes.txt"
    notes.write_text("keep me\n")
    result = run("export", "edge", notes, library=lib)
    assert result.returncode == 1 and "--force" in result.stderr and notes.read_text() == "keep me\n"
    assert run("export", "edge", notes, "--force", library=lib).returncode == 0
    assert json.loads(notes.read_text())  # overwritten with the export, as asked
    result = run("export", "edge", "", library=lib)
    assert result.returncode == 1 and "no file was named" in result.stderr


def test_datasets_table_has_a_header_and_aligned_columns(capsys):
    # Issue 28: no header, and a long licence pushed the title column out of line.
    from thoughtdesk.cli.main import main

    assert main(["datasets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "ANSWER", "TYPE", "TITLE", "LICENCE"]
    starts = {line.index(title) for line, title in zip(lines[1:], _titles(), strict=True)}
    assert len(starts) == 1 and starts == {lines[0].index("TITLE")}
    assert any(line.startswith("gsm8k ") for line in lines)


def _titles() -> list[str]:
    from thoughtdesk.core.datasets import catalogue

    return [info.title for info in catalogue()]
