"""What a file offered for import holds, and the guidance for a file given without options
(issue 16, point 9)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.core.importing.detect import (
    NotImportableError,
    check_importable,
    classify_import_file,
    options_needed,
)

DATASETS = FIXTURES / "datasets"
EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"
QUIZ = FIXTURES / "import_dialogs" / "quiz.csv"


@pytest.mark.parametrize(
    "head, what",
    [
        (b"\x89PNG\r\n\x1a\n", "a PNG image"),
        (b"%PDF-1.7\n", "a PDF document"),
        (b"PK\x03\x04", "a zip archive"),
        (b"SQLite format 3\x00", "an SQLite database"),
        (b"\x00\x01\x02garbage", "a binary file"),
    ],
)
def test_binary_files_are_not_importable_whatever_their_name(tmp_path, head, what):
    path = tmp_path / "data.json"  # the suffix of a table, the content of something else
    path.write_bytes(head + bytes(100))
    assert classify_import_file(path) == "unknown"
    with pytest.raises(NotImportableError, match="not a file ThoughtDesk can import") as caught:
        check_importable(path)
    assert what in str(caught.value) and str(path) in str(caught.value)


def test_kinds():
    assert classify_import_file(EDGE) == "thoughtsource"
    assert classify_import_file(DATASETS / "pubmedqa" / "ori_pqal.json") == "dataset"
    assert classify_import_file(QUIZ) == "table"
    assert classify_import_file(DATASETS / "gsm8k") == "dataset"


def test_guidance_names_the_option():
    message = options_needed(DATASETS / "pubmedqa" / "ori_pqal.json")
    assert message is not None and "--dataset pubmed_qa" in message
    message = options_needed(DATASETS / "medqa" / "phrases_no_exclude_test.jsonl")
    assert message is not None and "--dataset med_qa" in message
    message = options_needed(QUIZ)
    assert message is not None and "--map" in message and "qid, problem, opt_a" in message


def test_unknown_suffix_and_text_is_not_importable(tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# just notes\n", encoding="utf-8")
    message = options_needed(notes)
    assert message is not None and "not a file ThoughtDesk can import" in message


def test_thoughtsource_and_damaged_json_go_to_the_thoughtsource_reader(tmp_path):
    assert options_needed(EDGE) is None
    damaged = tmp_path / "collection.json"
    damaged.write_text(json.dumps({"gsm8k": {"train": "not a list"}}), encoding="utf-8")
    assert options_needed(damaged) is None  # its reader names the split and what is wrong
    assert options_needed(tmp_path / "missing.json") is None  # the import names the missing file
    records = tmp_path / "records.json"
    records.write_text(json.dumps([{"q": "1+1?", "a": "2"}]), encoding="utf-8")
    message = options_needed(records)
    assert message is not None and "--map" in message and "q, a" in message
