"""``thoughtdesk import --no-header`` (issue 16, point 10)."""

from __future__ import annotations

import json
import shutil

from tests.helpers.paths import FIXTURES
from thoughtdesk.cli.main import main

MMLU = FIXTURES / "datasets" / "mmlu_medical" / "anatomy_test.csv"
MAP = "question=1,choices=2|3|4|5,answer=6,type=multiplechoice,answer_format=letter"


def test_no_header_imports_every_row_and_a_missing_flag_is_pointed_out(tmp_path, capsys):
    exam = tmp_path / "exam.csv"
    shutil.copy(MMLU, exam)
    lib = tmp_path / "lib.thoughtdesk"
    assert main(["import", str(exam), "--library", str(lib)]) == 1
    assert "--no-header" in capsys.readouterr().err
    assert main(["import", str(exam), "--map", MAP, "--library", str(lib)]) == 1  # row 1 taken as the header
    assert "looks like data, not a header; if it is, add --no-header" in capsys.readouterr().err
    assert main(["import", str(exam), "--map", MAP, "--no-header", "--json", "--library", str(lib)]) == 0
    assert json.loads(capsys.readouterr().out)["inserted"] == 3
    assert main(["import", str(exam), "--no-header", "--library", str(lib)]) == 1
    assert "--no-header needs --map" in capsys.readouterr().err
