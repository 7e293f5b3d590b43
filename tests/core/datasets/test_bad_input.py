"""Bad input: each error names the file and the line (and the field where there is one)."""

from __future__ import annotations

import json
import shutil

import pytest

from thoughtdesk.core.datasets import UnknownDatasetError, get_dataset, load_dataset
from thoughtdesk.core.errors import DataFileError


def _copy(dataset_fixtures, tmp_path, relative):
    target = tmp_path / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(dataset_fixtures / relative, target)
    return target


def test_malformed_json_line_raise_and_skip(dataset_fixtures, tmp_path):
    path = _copy(dataset_fixtures, tmp_path, "medmcqa/MedMCQA_test.json")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:-5]  # cut the closing of the second record
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataFileError) as caught:
        list(load_dataset("medmc_qa", path))
    assert caught.value.path == path and caught.value.line == 2
    assert "MedMCQA_test.json, line 2" in str(caught.value) and "malformed JSON" in str(caught.value)
    errors: list[DataFileError] = []
    loaded = list(load_dataset("medmc_qa", path, on_error="skip", errors=errors))
    assert len(loaded) == len(lines) - 1 and [e.line for e in errors] == [2]
    # The records after the bad one keep their ids.
    assert loaded[1][1].id == json.loads(lines[2])["id"]


def test_wrong_csv_column_count(dataset_fixtures, tmp_path):
    path = _copy(dataset_fixtures, tmp_path, "mmlu_medical/anatomy_test.csv")
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("only,three,columns\n")
    with pytest.raises(DataFileError) as caught:
        list(load_dataset("mmlu_anatomy", path))
    assert caught.value.line == 4 and "expected 6 columns, found 3" in str(caught.value)
    errors: list[DataFileError] = []
    assert len(list(load_dataset("mmlu_anatomy", path, on_error="skip", errors=errors))) == 3
    assert errors[0].line == 4


def test_missing_answer_names_field_and_line(dataset_fixtures, tmp_path):
    path = _copy(dataset_fixtures, tmp_path, "gsm8k/test.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[2]["answer"] = records[2]["answer"].split("####")[0]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(DataFileError) as caught:
        list(load_dataset("gsm8k", path))
    message = str(caught.value)
    assert caught.value.line == 3 and "field answer" in message and "####" in message


def test_missing_field_medmcqa(dataset_fixtures, tmp_path):
    path = _copy(dataset_fixtures, tmp_path, "medmcqa/MedMCQA_test.json")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    del records[0]["cop"]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(DataFileError, match=r"line 1: .*field cop: missing answer"):
        list(load_dataset("medmc_qa", path))


def test_answer_not_among_choices(dataset_fixtures, tmp_path):
    path = _copy(dataset_fixtures, tmp_path, "commonsense_qa/dev_rand_split.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[1]["answerKey"] = "Z"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(DataFileError) as caught:
        list(load_dataset("commonsense_qa", path))
    assert caught.value.line == 2 and "field answerKey" in str(caught.value)
    assert "not among the choices" in str(caught.value)


def test_answer_not_among_choices_in_json_array_reports_line(dataset_fixtures, tmp_path):
    path = _copy(dataset_fixtures, tmp_path, "strategyqa/dev.json")
    data = json.loads(path.read_text())
    data[1]["answer"] = "perhaps"
    path.write_text(json.dumps(data, indent=2))
    with pytest.raises(DataFileError) as caught:
        list(load_dataset("strategy_qa", path))
    text = path.read_text()
    second_start = text.index(data[1]["qid"])
    expected_line = text.count("\n", 0, second_start)  # the '{' is on the line before 'qid'
    assert caught.value.line == expected_line and "field answer" in str(caught.value)


def test_medmcqa_cop_is_one_based(dataset_fixtures, tmp_path):
    path = _copy(dataset_fixtures, tmp_path, "medmcqa/MedMCQA_test.json")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["cop"] = 0
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(DataFileError, match="1-based"):
        list(load_dataset("medmc_qa", path))


def test_wrong_dataset_file_names_expected_format(dataset_fixtures):
    with pytest.raises(DataFileError) as caught:
        list(load_dataset("gsm8k", dataset_fixtures / "medqa" / "phrases_no_exclude_test.jsonl"))
    message = str(caught.value)
    assert "phrases_no_exclude_test.jsonl" in message and "GSM8K" in message
    assert get_dataset("gsm8k").file_format in message


def test_wrong_dataset_folder(dataset_fixtures):
    with pytest.raises(DataFileError, match="no MedMCQA files found"):
        list(load_dataset("medmc_qa", dataset_fixtures / "gsm8k"))


def test_broken_json_array_is_a_file_error_with_line(dataset_fixtures, tmp_path):
    path = _copy(dataset_fixtures, tmp_path, "svamp/SVAMP.json")
    text = path.read_text()
    path.write_text(text.replace('"Type"', '"Type" "broken"', 1))
    with pytest.raises(DataFileError) as caught:
        list(load_dataset("svamp", path, on_error="skip", errors=[]))
    assert caught.value.line == text[: text.index('"Type"')].count("\n") + 1


def test_malformed_xml(dataset_fixtures, tmp_path):
    path = _copy(dataset_fixtures, tmp_path, "asdiv/ASDiv.xml")
    path.write_text(path.read_text(encoding="utf-8").replace("</Body>", "</Bod>", 1), encoding="utf-8")
    with pytest.raises(DataFileError, match="malformed XML") as caught:
        list(load_dataset("asdiv", path))
    assert caught.value.line is not None


def test_unknown_dataset_lists_known_names(tmp_path):
    with pytest.raises(UnknownDatasetError) as caught:
        get_dataset("gsm9k")
    assert "gsm8k" in str(caught.value) and "worldtree" in str(caught.value)
    with pytest.raises(UnknownDatasetError):
        list(load_dataset("nope", tmp_path))


def test_bad_options_and_policy(dataset_fixtures):
    with pytest.raises(ValueError):
        list(load_dataset("gsm8k", dataset_fixtures / "gsm8k", on_error="ignore"))
    with pytest.raises(TypeError):
        list(load_dataset("gsm8k", dataset_fixtures / "gsm8k", ecqa="x"))


# Issue 15, point 8: these ended in UnicodeDecodeError / RecursionError tracebacks.
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "name, content, line, column, words",
    [
        (
            "bad.jsonl",
            b'{"question": "q", "answer": "a"}\n{"question": "caf\xe9", "answer": "a"}\n',
            2,
            None,
            "not UTF-8 text (column 18: byte 0xE9)",
        ),
        (
            "deep.jsonl",
            b'{"question": "q", "answer": "a"}\n{"question": ' + DEEP.encode() + b"}\n",
            2,
            None,
            "nested too deeply",
        ),
        ("deep.json", DEEP.encode(), 1, 2, "nested too deeply"),
        ("bad.json", b'[{"question": "\xff", "answer": "a"}]', None, None, "not UTF-8 text (byte 15)"),
    ],
)
def test_undecodable_and_deeply_nested_files_name_the_place(tmp_path, name, content, line, column, words):
    from thoughtdesk.core.datasets.generic import ColumnMapping, load_generic

    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DataFileError) as caught:
        list(load_generic(path, ColumnMapping(question="question", answer="answer")))
    error = caught.value
    assert (error.path, error.line, error.column) == (path, line, column)
    assert words in str(error) and len(str(error).splitlines()) == 1


def test_a_line_that_cannot_be_decoded_can_be_skipped(tmp_path):
    from thoughtdesk.core.datasets.generic import ColumnMapping, load_generic

    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        b'{"question": "one", "answer": "a"}\n{"question": "\xe9"}\n'
        + b'{"question": '
        + DEEP.encode()
        + b"}\n"
        + b'{"question": "four", "answer": "b"}\n'
    )
    errors: list[DataFileError] = []
    loaded = list(
        load_generic(path, ColumnMapping(question="question", answer="answer"), on_error="skip", errors=errors)
    )
    assert [sample.question for _, sample in loaded] == ["one", "four"]
    assert [e.line for e in errors] == [2, 3]


# Issue 15, the smaller failures.


def test_invalid_utf8_in_a_csv_names_its_real_line(tmp_path):
    from thoughtdesk.core.datasets.generic import ColumnMapping, load_generic

    path = tmp_path / "bad.csv"
    path.write_bytes(b"question,answer\n" + b"fine,a\n" * 5000 + b"caf\xe9,c\n")
    with pytest.raises(DataFileError) as caught:
        list(load_generic(path, ColumnMapping(question="question", answer="answer")))
    assert (caught.value.line, caught.value.column) == (5002, 4) and "byte 0xE9" in str(caught.value)


def test_a_list_valued_question_is_refused_with_its_field(tmp_path):
    from thoughtdesk.core.datasets.generic import ColumnMapping, load_generic

    path = tmp_path / "lists.json"
    path.write_text('[{"question": "fine", "answer": "a"}, {"question": ["x", "y"], "answer": "b"}]')
    with pytest.raises(DataFileError) as caught:
        list(load_generic(path, ColumnMapping(question="question", answer="answer")))
    assert (
        caught.value.line == 1 and "field question" in str(caught.value) and "is a list, not text" in str(caught.value)
    )
    # The first item is what the user can map instead.
    loaded = list(load_generic(path, ColumnMapping(question="question.0", answer="answer"), on_error="skip", errors=[]))
    assert [sample.question for _, sample in loaded] == ["x"]


def test_a_thoughtsource_file_with_a_utf8_bom_is_read(tmp_path):
    from thoughtdesk.core.datasets.thoughtsource import ThoughtSourceFile
    from thoughtdesk.core.paths import resource_path

    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + resource_path("demo_collection.json").read_bytes())
    assert len(ThoughtSourceFile(path)) == 16


@pytest.mark.parametrize(
    "name, content, line",
    [
        ("dup.jsonl", '{"question": "a", "answer": "x"}\n{"question": "b", "answer": "y", "answer": "z"}\n', 2),
        ("dup-spaced.jsonl", '{"question" : "a", "question"  :  "b", "answer": "x"}\n', 1),
        ("dup-nested.jsonl", '{"question": "a", "answer": "x", "meta": {"k": 1, "k": 2}}\n', 1),
        ("dup.json", '[{"question": "a", "answer": "x"},\n {"question": "b",\n  "answer": "y", "answer": "z"}]', 2),
    ],
)
def test_duplicate_keys_are_refused_with_their_place(tmp_path, name, content, line):
    """Issue 15: duplicate JSON keys silently dropped data (the decoders keep the last value)."""
    from thoughtdesk.core.datasets.generic import ColumnMapping, load_generic

    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataFileError) as caught:
        list(load_generic(path, ColumnMapping(question="question", answer="answer")))
    assert caught.value.line == line and "appears twice in one object" in str(caught.value)


def test_values_that_look_like_keys_are_not_duplicates(tmp_path):
    from thoughtdesk.core.datasets.generic import ColumnMapping, load_generic

    path = tmp_path / "fine.jsonl"
    path.write_text('{"question": "say \\"a\\": twice \\"a\\":", "answer": "x"}\n')
    assert [s.question for _, s in load_generic(path, ColumnMapping(question="question", answer="answer"))] == [
        'say "a": twice "a":'
    ]
