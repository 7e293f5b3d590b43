"""Generic JSON/JSONL/CSV/TSV import through a column mapping."""

from __future__ import annotations

import json

import pytest

from thoughtdesk.core.datasets.generic import ColumnMapping, load_generic, parse_mapping, preview
from thoughtdesk.core.errors import DataFileError


def test_parse_mapping_and_json_round_trip():
    mapping = parse_mapping("question=problem, answer=label, choices=a|b|c, type=multiplechoice")
    assert mapping.question == "problem" and mapping.choices == ["a", "b", "c"]
    assert mapping.answer_type == "multiplechoice"
    assert ColumnMapping.from_json(mapping.to_json()) == mapping
    with pytest.raises(ValueError, match="unknown mapping field"):
        parse_mapping("question=q,colour=red")
    with pytest.raises(ValueError, match="question"):
        parse_mapping("answer=a")
    with pytest.raises(ValueError):
        parse_mapping("question=q,type=essay")


def test_csv_with_choice_columns_and_letter_answers(tmp_path):
    path = tmp_path / "quiz.csv"
    path.write_text(
        'q,a,b,c,gold,why\n"2+2, please",3,4,5,B,Two and two. Make four.\nSky colour?,blue,green,red,blue,\n'
    )
    mapping = parse_mapping("question=q,choices=a|b|c,answer=gold,cot=why,type=multiplechoice")
    loaded = list(load_generic(path, mapping))
    assert [s.answer for _, s in loaded] == [["4"], ["blue"]]
    assert loaded[0][1].cot == ["Two and two.", "Make four."] and loaded[1][1].cot == []
    assert loaded[0][0] == "train"
    again = [s.id for _, s in load_generic(path, mapping)]
    assert again == [s.id for _, s in loaded] and len(set(again)) == 2


def test_json_object_of_records_and_nested_keys(tmp_path):
    path = tmp_path / "data.json"
    path.write_text(
        json.dumps(
            {
                "k1": {"q": {"text": "Is it?"}, "gold": "yes", "opts": ["yes", "no"], "part": "test"},
                "k2": {"q": {"text": "Or not?"}, "gold": "no", "opts": ["yes", "no"], "part": "dev"},
            },
            indent=1,
        )
    )
    mapping = ColumnMapping(
        question="q.text", answer="gold", choices=["opts"], answer_type="multiplechoice", id="id", split="part"
    )
    loaded = list(load_generic(path, mapping))
    assert [(split, s.id, s.choices, s.answer) for split, s in loaded] == [
        ("test", "k1", ["yes", "no"], ["yes"]),
        ("dev", "k2", ["yes", "no"], ["no"]),
    ]
    assert [s.id for _, s in load_generic(path, mapping, splits=["dev"])] == ["k2"]


def test_jsonl_errors_name_file_line_field(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text(
        '{"q": "a", "ans": "x", "ch": ["x", "y"]}\n'
        '{"q": "b", "ch": ["x", "y"]}\n'
        '{"q": "c", "ans": "z", "ch": ["x", "y"]}\n'
        '{"q": "d", "ans": \n'
    )
    mapping = ColumnMapping(question="q", answer="ans", choices=["ch"], answer_type="multiplechoice")
    with pytest.raises(DataFileError) as caught:
        list(load_generic(path, mapping))
    assert caught.value.line == 2 and "field ans" in str(caught.value)
    errors: list[DataFileError] = []
    loaded = list(load_generic(path, mapping, on_error="skip", errors=errors))
    assert len(loaded) == 1
    assert [e.line for e in errors] == [2, 3, 4]
    assert "not among the choices" in str(errors[1]) and "malformed JSON" in str(errors[2])


def test_tsv_and_preview(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("id\tquestion\tanswer\n1\tHow many?\t1,200\n2\tAnd now?\t3.0\n3\tbad row\n")
    columns, rows = preview(path, n=2)
    assert columns == ["id", "question", "answer"] and len(rows) == 2
    mapping = parse_mapping("question=question,answer=answer,id=id,type=number")
    errors: list[DataFileError] = []
    loaded = list(load_generic(path, mapping, on_error="skip", errors=errors))
    assert [s.answer for _, s in loaded] == [["1200"], ["3"]]
    assert errors[0].line == 4 and "expected 3 columns" in str(errors[0])


def test_unsupported_file(tmp_path):
    path = tmp_path / "x.xlsx"
    path.write_bytes(b"PK")
    with pytest.raises(DataFileError, match="unsupported"):
        list(load_generic(path, ColumnMapping(question="q")))


@pytest.mark.shared
def test_generic_medmcqa_matches_dedicated_loader(shared):
    from thoughtdesk.core.datasets import load_dataset

    path = shared("medmcqa", "MedMCQA_test.json")
    mapping = parse_mapping(
        "question=question,choices=opa|opb|opc|opd,answer=cop,id=id,type=multiplechoice,answer_format=index1"
    )
    generic = [s for _, s in load_generic(path, mapping)]
    dedicated = [s for _, s in load_dataset("medmc_qa", path)]
    assert [(s.id, s.answer, s.choices) for s in generic] == [(s.id, s.answer, s.choices) for s in dedicated]
