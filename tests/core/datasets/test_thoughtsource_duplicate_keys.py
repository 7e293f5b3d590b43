"""ThoughtSource collection JSON with a key twice in one object is refused with its place (issue 15,
smaller failures: the streaming reader kept the last value and dropped the first without a word)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from thoughtdesk.core.datasets.readers import find_duplicate_key, key_places
from thoughtdesk.core.datasets.thoughtsource import ThoughtSourceFile
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library

COT: dict[str, Any] = {
    "id": "c1",
    "fragments_version": "0.01",
    "instruction": None,
    "cot_trigger": "kojima-01",
    "cot_trigger_template": "",
    "prompt_text": "",
    "cot": 'A CoT quoting JSON: {"answer": "B", "answer": "C"} and "x" : y.',
    "answers": [],
    "author": "",
    "date": "",
    "api_service": "",
    "model": "m",
    "comment": "",
    "annotations": [],
}
SAMPLE = {
    "id": "s1",
    "ref_id": "",
    "question": "Which?",
    "type": "multiplechoice",
    "choices": ["A", "B"],
    "context": "",
    "cot": [],
    "answer": ["A"],
    "generated_cot": [COT],
    "feedback": [],
}


def pretty(value: object) -> str:
    return json.dumps(value, indent=2)


def collection(sample_text: str) -> str:
    return '{\n "med_qa": {\n  "test": [\n' + sample_text + "\n  ]\n }\n}\n"


def place_of(text: str, needle: str, occurrence: int = 2) -> tuple[int, int]:
    """1-based line and column of the ``occurrence``-th ``needle`` in ``text``."""
    offset = -1
    for _ in range(occurrence):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


CASES = {
    # A sample field twice (the strict fast path decodes it).
    "sample field": (
        collection(pretty(SAMPLE).replace('"question": "Which?",', '"question": "Which?",\n"question": "Lost",')),
        '"question"',
    ),
    # A CoT field twice, inside generated_cot.
    "cot field": (collection(pretty(SAMPLE).replace('"model": "m",', '"model": "m", "model": "n",')), '"model"'),
    # A sample with an extra field (the careful path) and a key twice in its feedback.
    "careful path": (
        collection(pretty({**SAMPLE, "extra": 1, "feedback": {"k": 1}}).replace('"k": 1', '"k": 1, "k": 2')),
        '"k"',
    ),
    # A whole dataset twice: the first one's samples would be lost.
    "dataset": ('{"med_qa": {"test": []},\n "med_qa": {"train": [' + json.dumps(SAMPLE) + "]}}", '"med_qa"'),
    # A split twice.
    "split": ('{"med_qa": {"test": [' + json.dumps(SAMPLE) + '],\n  "test": []}}', '"test"'),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_duplicate_key_is_refused_with_its_line_and_column(tmp_path, case) -> None:
    text, needle = CASES[case]
    path = tmp_path / "dup.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFileError) as caught:
        list(ThoughtSourceFile(path).records())
    error = caught.value
    assert "appears twice in one object" in str(error) and json.loads(needle) in str(error)
    assert (error.line, error.column) == place_of(text, needle)
    assert str(path) in str(error)


def test_an_import_of_such_a_file_stores_nothing(tmp_path) -> None:
    text, _ = CASES["cot field"]
    source = tmp_path / "dup.json"
    source.write_text(text, encoding="utf-8")
    with Library.open(tmp_path / "lib.thoughtdesk") as library:
        before = library.conn.execute("SELECT count(*) FROM collection").fetchone()[0]
        with pytest.raises(DataFileError):
            import_thoughtsource(library, source, collection="dup")
        assert library.conn.execute("SELECT count(*) FROM collection").fetchone()[0] == before
        assert library.conn.execute("SELECT count(*) FROM sample").fetchone()[0] == 0


@pytest.mark.parametrize("indent", [None, 2, "\t"])
def test_key_like_text_in_values_and_any_layout_are_fine(tmp_path, indent) -> None:
    path = tmp_path / "fine.json"
    path.write_text(json.dumps({"med_qa": {"test": [SAMPLE, {**SAMPLE, "id": "s2"}]}}, indent=indent))
    records = list(ThoughtSourceFile(path).records())
    assert [r.sample.generated_cot[0].cot for r in records] == [COT["cot"], COT["cot"]]


def test_spaced_keys_are_counted_and_found() -> None:
    assert key_places(b'{"a" : 1, "b":2}') == 2
    assert key_places(b'{"a": "x\\": y"}') == 2  # a quote-colon inside a string counts; so does it written back
    assert find_duplicate_key(b'{"a" : 1, "b": {"a": 1}, "a"\n: 2}') == ("a", 25)
    assert find_duplicate_key(b'[{"a": 1}, {"a": 2}, "a", {"b": "a"}]') is None


@pytest.mark.parametrize("escape", ["\\u0022:", "\\u0022\\u003a", '\\"\\u003A'])
def test_an_escaped_quote_colon_elsewhere_does_not_hide_a_duplicate(tmp_path, escape) -> None:
    """Issue 15 (audit): a string holding \\u0022: is "\\": when written back, one more place than
    the file has, which made up for the lost key: two "question" keys imported with exit 0."""
    plain = {**SAMPLE, "generated_cot": [{**COT, "cot": "A plain CoT."}]}  # no other key-like text
    text = pretty(plain).replace('"question": "Which?",', '"question": "Which?",\n"question": "Lost",')
    text = collection(text.replace('"comment": ""', f'"comment": "quoting {escape} here"'))
    path = tmp_path / "dup.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFileError, match="appears twice in one object") as caught:
        list(ThoughtSourceFile(path).records())
    assert (caught.value.line, caught.value.column) == place_of(text, '"question"')
    fine = tmp_path / "fine.json"  # the same escape without a duplicate is read as before
    fine.write_text(collection(pretty(plain).replace('"comment": ""', f'"comment": "quoting {escape} here"')))
    assert [r.sample.id for r in ThoughtSourceFile(fine).records()] == ["s1"]


@pytest.mark.parametrize("escape", ["\\u0022:", "\\u0022\\u003a"])
def test_a_json_lines_record_is_not_fooled_either(tmp_path, escape) -> None:
    from thoughtdesk.core.datasets.generic import ColumnMapping, load_generic

    path = tmp_path / "dup.jsonl"
    path.write_text(f'{{"question": "a", "note": "x{escape}y", "question": "b", "answer": "z"}}\n')
    with pytest.raises(DataFileError, match="appears twice in one object") as caught:
        list(load_generic(path, ColumnMapping(question="question", answer="answer")))
    assert caught.value.line == 1
