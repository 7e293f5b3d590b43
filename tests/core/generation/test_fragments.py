"""The fragment library: defaults, ThoughtSource keys, editing, saving, importing, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.generation.prompts import Fragment, FragmentError, FragmentKind, FragmentLibrary


@pytest.fixture
def frag_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "generation"


@pytest.mark.parametrize(
    ("kind", "key", "text"),
    [
        ("instruction", "qa-01", "Answer the following question through step-by-step reasoning."),
        ("cot_trigger", "kojima-01", "Answer: Let's think step by step."),
        (
            "cot_trigger",
            "zhou-01",
            "Answer: Let's work this out in a step by step way to be sure we have the right answer.",
        ),
        ("cot_trigger", "lievin-01", "Answer: Let's derive the differential diagnosis step by step."),
        ("answer_extraction", "kojima-01", "Therefore, the answer is"),
        ("answer_extraction", "kojima-A-D", "Therefore, among A through D, the answer is"),
        ("answer_extraction", "kojima-A-E", "Therefore, among A through E, the answer is"),
    ],
)
def test_defaults_know_thoughtsource_keys(kind: FragmentKind, key: str, text: str) -> None:
    assert FragmentLibrary.defaults().text(kind, key) == text


def test_published_triggers_carry_citations() -> None:
    library = FragmentLibrary.defaults()
    assert "Kojima" in (library.get("cot_trigger", "kojima-01").citation or "")
    assert "2022" in (library.get("cot_trigger", "kojima-01").citation or "")
    assert "Zhou" in (library.get("cot_trigger", "zhou-01").citation or "")
    own = [f for f in library if f.source == "thoughtdesk"]
    assert {f.kind for f in own} == {
        "instruction",
        "cot_trigger",
        "answer_extraction",
        "critique",
        "critique_system",
        "rationale_extraction",
        "guide",
        "judge",
        "judge_system",
    }
    assert "MT-Bench" in (library.get("judge", "td-pairwise-v1").citation or "")


def test_defaults_agree_with_thoughtsource_file(frag_dir: Path) -> None:
    library = FragmentLibrary.defaults()
    before = len(library)
    report = library.import_file(frag_dir / "thoughtsource_fragments.json")
    assert report.added == [] and report.conflicts == [] and report.unchanged == 9
    assert len(library) == before


def test_import_thoughtsource_templates_variant_reports_conflicts(frag_dir: Path) -> None:
    library = FragmentLibrary.defaults()
    path = frag_dir / "thoughtsource_templates_variant.json"
    report = library.import_file(path)
    assert [f.key for f in report.added] == ["site-07"]
    assert report.added[0].source == f"import:{path.name}"
    # templates.json spells lievin-01 with a typographic apostrophe: kept apart, not overwritten.
    assert [f.key for f in report.conflicts] == ["lievin-01"]
    assert (library.text("cot_trigger", "lievin-01") or "").startswith("Answer: Let's")
    replaced = library.import_file(path, on_conflict="replace")
    assert [f.key for f in replaced.replaced] == ["lievin-01"]
    assert (library.text("cot_trigger", "lievin-01") or "").startswith("Answer: Let\u2019s")


def test_add_edit_duplicate_delete_and_save_round_trip(tmp_path: Path) -> None:
    library = FragmentLibrary()
    library.add(Fragment("mine", "cot_trigger", "Answer: Slowly."))
    with pytest.raises(FragmentError, match="already exists"):
        library.add(Fragment("mine", "cot_trigger", "other"))
    library.add(Fragment("mine", "answer_extraction", "So:"))  # same key, other kind: fine
    copy = library.duplicate("cot_trigger", "mine")
    assert copy.key == "mine-copy" and library.duplicate("cot_trigger", "mine").key == "mine-copy-2"
    edited = library.edit("cot_trigger", "mine-copy", text="Answer: Quickly.", new_key="fast", citation="Me 2025")
    assert (edited.key, edited.text, edited.citation) == ("fast", "Answer: Quickly.", "Me 2025")
    assert [f.key for f in library.of_kind("cot_trigger")] == ["mine", "fast", "mine-copy-2"]
    library.delete("cot_trigger", "mine-copy-2")
    with pytest.raises(FragmentError, match="no cot trigger fragment with key 'mine-copy-2'"):
        library.get("cot_trigger", "mine-copy-2")
    with pytest.raises(FragmentError, match="non-empty text"):
        library.edit("cot_trigger", "fast", text="  ")
    target = tmp_path / "sub" / "fragments.json"
    library.save(target)
    again = FragmentLibrary.load(target)
    assert list(again) == list(library)
    assert json.loads(target.read_text())["format"] == "thoughtdesk-fragments"


def test_save_and_load_of_defaults_round_trip(tmp_path: Path) -> None:
    library = FragmentLibrary.defaults()
    library.save(tmp_path / "f.json")
    assert list(FragmentLibrary.load(tmp_path / "f.json")) == list(library)


def test_bad_json_names_file_and_line(frag_dir: Path) -> None:
    with pytest.raises(DataFileError) as error:
        FragmentLibrary.load(frag_dir / "fragments_bad_json.json")
    assert "fragments_bad_json.json, line 4" in str(error.value)


def test_bad_value_names_key_and_line(frag_dir: Path) -> None:
    library = FragmentLibrary.defaults()
    before = list(library)
    with pytest.raises(DataFileError) as error:
        library.import_file(frag_dir / "fragments_bad_value.json")
    message = str(error.value)
    assert "fragments_bad_value.json, line 5" in message and "key qa-02" in message
    assert list(library) == before  # nothing half-imported


def test_missing_file_and_unknown_shape(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="not found"):
        FragmentLibrary.load(tmp_path / "absent.json")
    (tmp_path / "other.json").write_text('{"hello": 1}')
    with pytest.raises(DataFileError, match="no fragments found"):
        FragmentLibrary.load(tmp_path / "other.json")
