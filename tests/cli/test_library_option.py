"""``--library`` naming a file that does not exist (issue 16, point 11) and imports given
without ``--dataset``/``--map`` (point 9): only an import creates a library, and says so; a
refused import leaves nothing behind."""

from __future__ import annotations

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.cli.main import main

EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"


@pytest.mark.parametrize(
    "command",
    [["collections"], ["stats", "x"], ["runs"], ["export", "x", "out.json"], ["evaluate", "x"]],
)
def test_read_commands_refuse_a_missing_library_and_create_nothing(tmp_path, capsys, command):
    missing = tmp_path / "typo" / "lib.thoughtdesk"
    assert main(["--library", str(missing), *command]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"thoughtdesk: no library at {missing}") and err.count("\n") == 1
    assert not missing.parent.exists()


def test_import_creates_the_library_and_its_folder_and_says_so(tmp_path, capsys):
    target = tmp_path / "new" / "folder" / "lib.thoughtdesk"
    assert main(["--library", str(target), "import", str(EDGE)]) == 0
    err = capsys.readouterr().err
    assert f"creating the folder {target.parent} for a new library" in err
    assert f"created new library at {target}" in err
    assert target.is_file()
    capsys.readouterr()
    assert main(["--library", str(target), "import", str(EDGE), "--collection", "again"]) == 0
    assert "created" not in capsys.readouterr().err  # an existing library is not announced


def test_a_failed_import_removes_the_library_it_created(tmp_path, capsys):
    target = tmp_path / "new" / "lib.thoughtdesk"
    medqa = FIXTURES / "datasets" / "medqa" / "phrases_no_exclude_test.jsonl"
    assert main(["--library", str(target), "import", str(medqa), "--dataset", "gsm8k"]) == 1
    err = capsys.readouterr().err
    assert "nothing was imported" in err and "does not look like a GSM8K" in err
    assert not (tmp_path / "new").exists()


def test_picture_is_refused_before_any_library_exists(tmp_path, capsys):
    picture = tmp_path / "scan.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    target = tmp_path / "lib.thoughtdesk"
    for extra in ([], ["--map", "question=a,answer=b"]):
        assert main(["--library", str(target), "import", str(picture), *extra]) == 1
        assert "not a file ThoughtDesk can import (it is a PNG image)" in capsys.readouterr().err
    assert not target.exists()


def test_a_dataset_file_without_dataset_says_which_option(tmp_path, capsys):
    target = tmp_path / "lib.thoughtdesk"
    pubmed = FIXTURES / "datasets" / "pubmedqa" / "ori_pqal.json"
    assert main(["--library", str(target), "import", str(pubmed)]) == 1
    assert "import them with --dataset pubmed_qa" in capsys.readouterr().err
    assert not target.exists()
