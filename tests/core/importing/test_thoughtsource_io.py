"""ThoughtSource collection JSON: lossless round-trip, atomic import, bad input, duplicates."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.paths import FIXTURES, SHARED
from thoughtdesk.core.datasets.ts_extras import load_with_extras
from thoughtdesk.core.errors import DataFileError, DuplicateSamplesError
from thoughtdesk.core.importing.importer import export_thoughtsource, import_thoughtsource
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.library.store import Library

TS_DIR = SHARED / "thoughtsource"
SHARED_FILES = sorted(TS_DIR.glob("*.json")) if TS_DIR.exists() else []


def library_digest(lib: Library) -> str:
    """A digest of every row of every table: equal digests mean nothing was changed."""
    h = hashlib.sha256()
    tables = [
        r[0]
        for r in lib.conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sample_fts_%' ORDER BY name"
        )
    ]
    for table in tables:
        for row in lib.conn.execute(f"SELECT * FROM {table} ORDER BY rowid"):
            h.update(repr(row).encode())
    return h.hexdigest()


@pytest.fixture
def lib(tmp_path):
    library = Library.open(tmp_path / "lib.thoughtdesk")
    yield library
    library.close()


def _sample_id(lib: Library, key: int) -> str | None:
    stored = load_sample(lib, key)
    assert stored is not None, key
    return stored.sample.id


def roundtrip(lib: Library, path: Path, tmp_path: Path) -> tuple[Any, Any]:
    """The file as read and as exported again (JSON documents)."""
    import_thoughtsource(lib, path, collection="rt")
    out = tmp_path / "out.json"
    export_thoughtsource(lib, "rt", out)
    # keys outside ThoughtSource's schema are in the export's side file: put back, the same data
    return json.loads(path.read_text(encoding="utf-8")), load_with_extras(out)


@pytest.mark.parametrize("name", [p.name for p in SHARED_FILES] or ["<no shared files>"])
def test_shared_thoughtsource_files_round_trip(lib, tmp_path, name):
    if not SHARED_FILES:
        pytest.skip(f"{TS_DIR} is absent (clone without ../shared)")
    original, exported = roundtrip(lib, TS_DIR / name, tmp_path)
    assert exported == original


def test_fixture_round_trip_keeps_every_oddity(lib, tmp_path):
    original, exported = roundtrip(lib, FIXTURES / "thoughtsource" / "edge_cases.json", tmp_path)
    assert exported == original
    cot = exported["med_qa"]["test"][0]["generated_cot"][0]
    preferred = next(a for a in cot["annotations"] if a["key"] == "preferred")
    assert preferred["value"] is True  # a JSON boolean, not the string "true"
    extras = cot["annotations"][2]
    assert extras["span"] == {"start": 0, "end": 9} and extras["confidence"] == 0.75
    assert cot["model"] == "{'name': 'gpt-4', 'temperature': 0, 'max_tokens': 512}"
    old = exported["gsm8k"]["train"][0]["generated_cot"][0]
    assert "cot_trigger_template" not in old and "answer_extraction_template" not in old["answers"][0]
    assert exported["gsm8k"]["test"][0] == {"id": "g-2", "question": "Only required keys here", "answer": ["7"]}
    assert exported["med_qa"]["test"][0]["feedback"] is None


def test_relational_storage_and_counts(lib):
    import_thoughtsource(lib, FIXTURES / "thoughtsource" / "edge_cases.json", collection="c")
    assert lib.conn.execute("SELECT count(*) FROM generated_cot").fetchone()[0] == 3
    assert lib.conn.execute("SELECT count(*) FROM answer").fetchone()[0] == 3
    assert lib.conn.execute("SELECT count(*) FROM annotation").fetchone()[0] == 4
    row = lib.conn.execute(
        "SELECT n_cots, n_answers, n_correct, n_incorrect, n_annotations FROM sample WHERE sample_id='mq-1'"
    ).fetchone()
    assert row == (2, 2, 1, 1, 4)
    names = {r[0] for r in lib.conn.execute("SELECT model_name FROM generated_cot")}
    assert names == {"gpt-4", "name"}
    stats = {(s.dataset, s.split): s for s in lib.split_stats(lib.require_collection("c"))}
    assert stats[("med_qa", "test")].samples == 2 and stats[("med_qa", "test")].annotations == 4
    assert stats[("gsm8k", "train")].generated_cots == 1


def test_full_text_search_over_question_reference_and_generated(lib):
    from thoughtdesk.core.library.queries import SampleFilter, sample_keys

    import_thoughtsource(lib, FIXTURES / "thoughtsource" / "edge_cases.json", collection="c")
    cid = lib.require_collection("c")

    def ids(text):
        keys = sample_keys(lib, SampleFilter(collection_id=cid, search=text))
        return sorted(_sample_id(lib, k) for k in keys)

    assert ids("hepatic") == ["mq-1"]  # reference CoT
    assert ids("insulin always") == ["mq-1"]  # generated CoT
    assert ids("unicode") == ["mq-2"]  # question, diacritics folded
    assert ids("plus") == ["g-1"]
    assert ids("Metf") == ["mq-1"]  # the last word is a prefix


#: Searches that are FTS5 syntax errors (or operators) unless every word is quoted, and the one
#: sample each must find; the questions hold them as plain text.
ODD_SEARCHES = {
    "well-known": "hyphen",
    "cats OR dogs": "operator",
    "don't": "apostrophe",
    "NEAR(x y)": "near",
    "NOT cured": "not",
    "title: anemia": "colon",
    '"quoted': "quote",
    "^caret": "caret",
    "a AND": "and",
}
ODD_QUESTIONS = {
    "hyphen": "Which well-known drug lowers glucose?",
    "operator": "Do cats OR dogs live longer?",
    "apostrophe": "Why don't fish drown?",
    "near": "Is NEAR(x y) a function?",
    "not": "Is it NOT cured by rest?",
    "colon": "Book title: anemia in children",
    "quote": 'She said "quoted text" twice',
    "caret": "The ^caret sign",
    "and": "Salt a AND pepper",
}


def test_search_words_are_text_not_fts_syntax(lib, tmp_path):
    """Every typed word is quoted in the FTS5 query: unquoted, "well-known", "cats OR dogs" and
    "don't" are SQLite errors (or operators that change what is found)."""
    from thoughtdesk.core.library.queries import SampleFilter, sample_keys

    source = tmp_path / "odd.json"
    samples = [{"id": key, "question": question, "answer": ["x"]} for key, question in ODD_QUESTIONS.items()]
    source.write_text(json.dumps({"odd": {"test": samples}}), encoding="utf-8")
    import_thoughtsource(lib, source, collection="odd")
    cid = lib.require_collection("odd")
    for typed, expected in ODD_SEARCHES.items():
        keys = sample_keys(lib, SampleFilter(collection_id=cid, search=typed))
        assert [_sample_id(lib, k) for k in keys] == [expected], typed


def test_import_failing_late_leaves_library_exactly_as_it_was(lib):
    import_thoughtsource(lib, FIXTURES / "thoughtsource" / "edge_cases.json", collection="keep")
    before = library_digest(lib)
    with pytest.raises(DataFileError) as info:
        import_thoughtsource(lib, FIXTURES / "thoughtsource" / "fails_late.json")
    message = str(info.value)
    assert "fails_late.json" in message
    assert "dataset strategy_qa, split train, sample index 50, field question" in message
    assert library_digest(lib) == before
    assert [c.name for c in lib.collections()] == ["keep"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"a": {"b": [1,}}', "line 1, column 16: invalid JSON"),
        ('{\n  "a": {\n    "b": [\n      {"id": "x"\n', "line 5, column 1: invalid JSON"),
        ("[1, 2]", "is not a ThoughtSource collection"),
        ('{"a": {"b": {}}}', "dataset a, split b: the split must be a list of samples, not an object"),
        ('{"a": {"b": [{"id": "x"}]}}', "dataset a, split b, sample index 0, field question: is missing"),
        ('{"a": {"b": [{"id": "x", "question": 3}]}}', "sample index 0, field question: must be text, not a number"),
        (
            '{"a": {"b": [{"id": "x", "question": "q", "generated_cot": {}}]}}',
            "field generated_cot: must be a list, not an object",
        ),
        (
            '{"a": {"b": [{"id": "x", "question": "q", "generated_cot": [{"answers": 5}]}]}}',
            "sample index 0, generated_cot 0, field answers: must be a list",
        ),
        (
            '{"a": {"b": [{"id": "x", "question": "q", "generated_cot": [{"answers": [{"correct_answer": "yes"}]}]}]}}',
            "generated_cot 0, answer 0, field correct_answer: must be true, false or null",
        ),
        (
            '{"a": {"b": [{"id": "x", "question": "q", "generated_cot": [{"annotations": [{"value": "t"}]}]}]}}',
            "generated_cot 0, annotation 0, field key: is missing",
        ),
        (
            '{"a": {"b": [{"id": "x", "question": "q"}, {"id": "x", "question": "r"}]}}',
            "sample index 1: sample id 'x' occurs twice in a/b",
        ),
    ],
)
def test_bad_input_names_the_place_and_changes_nothing(lib, tmp_path, content, expected):
    import_thoughtsource(lib, FIXTURES / "thoughtsource" / "edge_cases.json", collection="keep")
    before = library_digest(lib)
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        import_thoughtsource(lib, bad)
    assert str(bad) in str(info.value)
    assert expected in str(info.value)
    assert library_digest(lib) == before


def test_duplicates_fail_by_default_skip_or_replace_on_request(lib, tmp_path):
    path = FIXTURES / "thoughtsource" / "edge_cases.json"
    import_thoughtsource(lib, path, collection="c")
    before = library_digest(lib)
    with pytest.raises(DuplicateSamplesError) as info:
        import_thoughtsource(lib, path, collection="c")
    assert "4 sample(s) already exist in collection 'c'" in str(info.value)
    assert library_digest(lib) == before

    report = import_thoughtsource(lib, path, collection="c", on_duplicate="skip")
    assert (report.inserted, report.skipped) == (0, 4)
    assert library_digest(lib) == before

    changed = json.loads(path.read_text(encoding="utf-8"))
    changed["med_qa"]["test"][1]["question"] = "A new wording"
    changed["med_qa"]["test"].append({"id": "mq-3", "question": "brand new"})
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(changed), encoding="utf-8")
    report = import_thoughtsource(lib, newer, collection="c", on_duplicate="replace")
    assert (report.inserted, report.replaced) == (1, 4)
    assert lib.conn.execute("SELECT count(*) FROM sample").fetchone()[0] == 5
    out = tmp_path / "out.json"
    export_thoughtsource(lib, "c", out)
    assert load_with_extras(out) == changed  # replaced in place, order kept
    assert lib.conn.execute("SELECT count(*) FROM sample_fts").fetchone()[0] == 5


def test_cancel_rolls_back(lib):
    from thoughtdesk.core.errors import Cancelled
    from thoughtdesk.core.importing.importer import import_records
    from thoughtdesk.core.library.records import Sample

    before = library_digest(lib)
    records = (("d", "s", Sample(id=str(i), question=f"q{i}"), "") for i in range(2000))
    with pytest.raises(Cancelled):
        import_records(lib, records, collection="x", cancel=lambda: True)
    assert library_digest(lib) == before
