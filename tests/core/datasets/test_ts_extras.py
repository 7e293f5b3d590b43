"""The side file of a ThoughtSource export: keys outside ThoughtSource's schema go there, come
back on import, a side file that does not match is one clear line, a stale one is removed, and
an export to standard output keeps them inline (docs/answer-extraction.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.core.importing.test_import_skip import library_digest
from tests.helpers.paths import FIXTURES
from thoughtdesk.core.datasets.ts_extras import load_with_extras, side_path, split_extras
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.importing.importer import export_thoughtsource, import_thoughtsource
from thoughtdesk.core.library.store import Library

EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"


def test_split_takes_unknown_keys_and_non_text_values_out():
    sample: dict[str, Any] = {
        "id": "q1",
        "question": "Q",
        "choices": ["a", 2],
        "lengths": [3],  # the annotator's: ThoughtSource's loader removes it itself
        "mine": {"x": 1},
        "generated_cot": [
            {
                "cot": "c",
                "annotations": [{"key": "preferred", "value": True}, {"key": "comment", "value": "ok"}],
                "answers": [{"answer": "a", "answer_from_choices": "A", "thoughtdesk_scoring": {"outcome": "correct"}}],
                "thoughtdesk": {"run": 1},
            }
        ],
    }
    extras = split_extras(sample)
    assert extras == {
        "extra": {"mine": {"x": 1}, "choices": ["a", 2]},
        "generated_cot": {
            "0": {
                "extra": {"thoughtdesk": {"run": 1}},
                "answers": {"0": {"thoughtdesk_scoring": {"outcome": "correct"}}},
                "annotations": {"0": {"value": True}},
            }
        },
    }
    assert sample["choices"] == ["a", "2"] and sample["lengths"] == [3] and "mine" not in sample
    assert sample["generated_cot"][0]["annotations"][0]["value"] == "true"
    assert sample["generated_cot"][0]["answers"][0] == {"answer": "a", "answer_from_choices": "A"}


@pytest.fixture
def exported(tmp_path):
    """The edge-case fixture (unknown keys at every level) imported and exported."""
    out = tmp_path / "out.json"
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, EDGE, collection="edge")
        export_thoughtsource(lib, "edge", out)
    return out


def test_import_puts_the_extras_back(exported, tmp_path):
    assert side_path(exported).is_file()
    assert load_with_extras(exported) == json.loads(EDGE.read_text("utf-8"))
    with Library.open(tmp_path / "again.thoughtdesk") as lib:
        import_thoughtsource(lib, exported, collection="edge")
        export_thoughtsource(lib, "edge", tmp_path / "again.json")
    assert load_with_extras(tmp_path / "again.json") == json.loads(EDGE.read_text("utf-8"))


def test_a_side_file_of_another_export_is_one_line_and_stores_nothing(exported, tmp_path):
    data = json.loads(exported.read_text("utf-8"))
    line = next(i for i, text in enumerate(side_path(exported).read_text("utf-8").splitlines(), 1) if i > 1)
    row = json.loads(side_path(exported).read_text("utf-8").splitlines()[line - 1])
    data[row["dataset"]][row["split"]][row["index"]]["id"] = "someone-else"
    exported.write_text(json.dumps(data), encoding="utf-8")
    target = tmp_path / "target.thoughtdesk"
    with Library.open(target):
        pass
    before = library_digest(target)
    with Library.open(target) as lib, pytest.raises(DataFileError) as raised:
        import_thoughtsource(lib, exported, collection="x")
    text = str(raised.value)
    assert text.startswith(f"{side_path(exported)}, line {line}: does not match out.json")
    assert "someone-else" in text and "move it away" in text and "\n" not in text
    assert library_digest(target) == before


def test_a_side_file_naming_a_sample_the_export_lacks_is_refused(exported, tmp_path):
    with side_path(exported).open("a", encoding="utf-8") as side:
        side.write(json.dumps({"dataset": "med_qa", "split": "test", "index": 99, "id": "x", "extras": {}}) + "\n")
    with Library.open(tmp_path / "t.thoughtdesk") as lib, pytest.raises(DataFileError, match="sample index 99"):
        import_thoughtsource(lib, exported, collection="x")


def test_a_stale_side_file_is_removed_by_an_export_without_extras(exported, tmp_path):
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"d": {"test": [{"id": "1", "question": "q", "generated_cot": []}]}}), "utf-8")
    with Library.open(tmp_path / "p.thoughtdesk") as lib:
        import_thoughtsource(lib, plain, collection="p")
        side_path(exported).write_text("stale", encoding="utf-8")
        export_thoughtsource(lib, "p", exported)
    assert not side_path(exported).exists()


def test_cli_names_the_side_file_and_standard_output_keeps_the_keys_inline(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    thoughtdesk = [sys.executable, "-m", "thoughtdesk", "--library", str(lib)]
    assert subprocess.run([*thoughtdesk, "import", str(EDGE), "--collection", "edge"], timeout=120).returncode == 0
    out = tmp_path / "out.json"
    done = subprocess.run([*thoughtdesk, "export", "edge", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "out.thoughtdesk-extras.jsonl beside it" in done.stdout
    done = subprocess.run([*thoughtdesk, "export", "edge", "-"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(EDGE.read_text("utf-8"))  # one stream: inline


def test_a_side_file_name_that_cannot_be_written_stops_the_export_before_anything_is_written(tmp_path):
    # The side file is checked like the export's own name: a folder (or the library) under
    # OUT.thoughtdesk-extras.jsonl is one line naming it, and OUT.json is not written.
    out = tmp_path / "out.json"
    side_path(out).mkdir()
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, EDGE, collection="edge")
        with pytest.raises(Exception) as raised:
            export_thoughtsource(lib, "edge", out)
    assert str(raised.value).startswith(f"{side_path(out)} is a folder")
    assert not out.exists()
