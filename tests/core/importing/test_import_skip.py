"""Bad records end to end: abort stores nothing; skip stores the rest and writes a report."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.paths import FIXTURES
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.importing.importer import import_dataset
from thoughtdesk.core.importing.skip_log import save_skip_log, skip_log_text
from thoughtdesk.core.library.store import Library

IMPORT_FIXTURES = FIXTURES / "import_dialogs"
BAD_MEDMCQA = IMPORT_FIXTURES / "medmcqa_bad" / "dev.json"  # lines 2 (malformed) and 4 (no cop) are bad
QUIZ = IMPORT_FIXTURES / "quiz.csv"  # line 4: answer Z is not a choice


def library_digest(path: Path) -> str:
    """A digest of every row of every table: equal digests mean nothing was written."""
    digest = hashlib.sha256()
    with Library.open(path) as lib:
        tables = [r[0] for r in lib.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in tables:
            digest.update(table.encode())
            # Sorted in Python: some tables are WITHOUT ROWID.
            for row in sorted(repr(row) for row in lib.conn.execute(f'SELECT * FROM "{table}"')):
                digest.update(row.encode())
    return digest.hexdigest()


def test_abort_names_file_and_line_and_changes_nothing(tmp_path):
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        import_dataset(lib, IMPORT_FIXTURES.parent / "datasets" / "gsm8k", dataset="gsm8k")
    before = library_digest(path)
    with Library.open(path) as lib, pytest.raises(DataFileError) as caught:
        import_dataset(lib, BAD_MEDMCQA, dataset="medmc_qa", on_error="abort")
    assert caught.value.path == BAD_MEDMCQA and caught.value.line == 2
    assert "dev.json, line 2" in str(caught.value)
    assert library_digest(path) == before


def test_skip_stores_good_records_and_lists_bad_ones(tmp_path):
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        report = import_dataset(lib, BAD_MEDMCQA, dataset="medmc_qa", on_error="skip")
        stored = lib.conn.execute("SELECT count(*) FROM sample").fetchone()[0]
    assert report.inserted == 3 and stored == 3
    assert [(e.path, e.line) for e in report.bad_records] == [(BAD_MEDMCQA, 2), (BAD_MEDMCQA, 4)]
    assert "malformed JSON" in report.bad_records[0].message
    assert "cop" in str(report.bad_records[1])
    assert "2 bad record(s) skipped" in report.summary


def test_report_file_next_to_the_library(tmp_path):
    path = tmp_path / "work" / "my lib.thoughtdesk"
    with Library.open(path) as lib:
        report = import_dataset(
            lib,
            QUIZ,
            mapping="question=problem,answer=label,choices=opt_a|opt_b|opt_c,type=multiplechoice",
            on_error="skip",
        )
    saved = save_skip_log(path, report, QUIZ)
    assert saved is not None and saved.parent == path.parent
    assert re.fullmatch(r"my lib\.import-\d{8}-\d{6}\.txt", saved.name)
    lines = saved.read_text(encoding="utf-8").splitlines()
    assert f"Source: {QUIZ}" in lines and "Bad records skipped: 1" in lines
    bad = [line.split("\t") for line in lines[lines.index("file\tline\treason") + 1 :]]
    assert len(bad) == 1 and bad[0][0] == str(QUIZ) and bad[0][1] == "4"
    assert "'Z' is not among the choices" in bad[0][2]
    # A second report in the same second does not overwrite the first.
    assert save_skip_log(path, report, QUIZ) != saved
    assert report.inserted == 3


def test_no_report_without_bad_records(tmp_path):
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path) as lib:
        report = import_dataset(lib, IMPORT_FIXTURES.parent / "datasets" / "gsm8k", dataset="gsm8k", on_error="skip")
    assert save_skip_log(path, report, "x") is None
    assert not list(tmp_path.glob("*.txt"))
    assert "Bad records skipped: 0" in skip_log_text(report, "x")


def test_cli_on_error_abort_is_the_default(tmp_path):
    library = tmp_path / "lib.thoughtdesk"
    assert (
        run_cli(
            "import", IMPORT_FIXTURES.parent / "datasets" / "gsm8k", "--dataset", "gsm8k", library=library
        ).returncode
        == 0
    )
    before = library_digest(library)
    result = run_cli("import", BAD_MEDMCQA, "--dataset", "medmc_qa", library=library)
    assert result.returncode == 1
    assert f"{BAD_MEDMCQA}, line 2" in result.stderr
    assert library_digest(library) == before
    assert not list(tmp_path.glob("*.import-*.txt"))


def test_cli_on_error_skip_prints_the_report_path(tmp_path):
    library = tmp_path / "lib.thoughtdesk"
    result = run_cli("import", BAD_MEDMCQA, "--dataset", "medmc_qa", "--on-error", "skip", library=library)
    assert result.returncode == 0, result.stderr
    assert "3 sample(s) imported" in result.stdout
    match = re.search(r"2 bad record\(s\) skipped; skip log: (.+\.txt)$", result.stdout.strip())
    assert match, result.stdout
    report = Path(match.group(1))
    assert report.parent == tmp_path and report.name.startswith("lib.import-")
    body = report.read_text(encoding="utf-8")
    assert f"{BAD_MEDMCQA}\t2\t" in body and f"{BAD_MEDMCQA}\t4\t" in body


def test_cli_skip_refused_for_thoughtsource(tmp_path):
    edge = IMPORT_FIXTURES.parent / "thoughtsource" / "edge_cases.json"
    result = run_cli("import", edge, "--on-error", "skip", library=tmp_path / "lib.thoughtdesk")
    assert result.returncode == 1 and "--on-error skip needs --dataset or --map" in result.stderr
