"""Headerless CSV/TSV files such as MMLU's (issue 16, point 10): detected, imported with the
columns named by position, the first row kept as a sample, and a ragged row named by its line."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.core.datasets.generic import first_row_is_data, load_generic, parse_mapping
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.importing.detect import options_needed

MMLU = FIXTURES / "datasets" / "mmlu_medical" / "anatomy_test.csv"
QUIZ = FIXTURES / "import_dialogs" / "quiz.csv"
MAPPING = "question=1,choices=2|3|4|5,answer=6,type=multiplechoice,answer_format=letter,header=no"


@pytest.fixture
def exam(tmp_path):
    path = tmp_path / "exam.csv"  # MMLU's layout under a name no dataset loader claims
    shutil.copy(MMLU, path)
    return path


def test_detection(exam, tmp_path):
    assert first_row_is_data(exam)
    assert not first_row_is_data(QUIZ)
    tsv = tmp_path / "exam.tsv"
    tsv.write_text("What is 2+2?\t3\t4\tB\nWhat is 1+1?\t2\t3\tA\n", encoding="utf-8")
    assert first_row_is_data(tsv)
    named = tmp_path / "named.tsv"
    named.write_text("question\topt1\topt2\tanswer\nWhat is 2+2?\t3\t4\tB\n", encoding="utf-8")
    assert not first_row_is_data(named)


def test_columns_by_position_keep_the_first_row(exam):
    rows = MMLU.read_text(encoding="utf-8").count("\n")
    samples = list(load_generic(exam, parse_mapping(MAPPING)))
    assert len(samples) == rows
    first = samples[0][1]
    assert first.question.startswith("A lesion causing compression of the facial nerve")
    assert first.choices is not None
    assert first.choices[0] == "paralysis of the facial muscles." and first.answer == [first.choices[0]]
    assert samples[1][1].question == 'A "dished face" profile is often associated with'


def test_without_header_no_the_first_row_becomes_the_header(exam):
    with pytest.raises(DataFileError):  # column "1" does not exist when row 1 is read as the header
        list(load_generic(exam, parse_mapping(MAPPING.replace(",header=no", ""))))


def test_a_ragged_row_is_named_by_its_line(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("What is 2+2?,3,4,B\nWhat is 1+1?,2,A\n", encoding="utf-8")
    mapping = parse_mapping("question=1,choices=2|3,answer=4,type=multiplechoice,header=no")
    with pytest.raises(DataFileError, match=r"line 2.*expected 4 columns, found 3"):
        list(load_generic(path, mapping))
    errors: list[DataFileError] = []
    kept = list(load_generic(path, mapping, on_error="skip", errors=errors))
    assert len(kept) == 1 and errors[0].line == 2


def test_header_value_is_checked():
    with pytest.raises(ValueError, match="header=maybe"):
        parse_mapping("question=1,header=maybe")


def test_guidance_for_a_headerless_table(exam):
    message = options_needed(exam)
    assert message is not None and "first row is data" in message and "--no-header" in message
    assert "positions 1 to 6" in message or "position 1 to 6" in message
