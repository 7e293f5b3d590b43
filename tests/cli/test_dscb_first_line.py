"""A DS Critique Bank file whose first line has a problem is still a DSCB file (issue 23, point 10).

It used to be called "a table" with advice to use --map: a byte-order mark (a valid file saved by
a Windows tool could not be imported at all), NaN or Infinity, a lone surrogate escape, deep
nesting, UTF-16, a first record over a megabyte, an empty file. Each shape: one line naming the
file, line 1 and what is wrong, the library unchanged; a BOM file and a big first record import
whole.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from tests.core.importing.test_import_skip import library_digest
from tests.helpers.paths import FIXTURES
from thoughtdesk.cli.main import main
from thoughtdesk.core.critiques.dscb import looks_like_dscb
from thoughtdesk.core.library.store import Library

SOURCE = FIXTURES / "dscb" / "DSCB-dev-crowd-anno.jsonl"


def _lines() -> list[str]:
    return [line for line in SOURCE.read_text(encoding="utf-8").split("\n") if line.strip()]


def _with_first(first: str) -> str:
    return "\n".join([first, *_lines()[1:]]) + "\n"


def _first(change) -> str:
    record = json.loads(_lines()[0])
    change(record)
    return json.dumps(record, ensure_ascii=False)


def _nested() -> str:
    """The first record with 3,000 levels of lists in its llm options (too deep for json.dumps)."""
    first = _first(lambda r: r.update(student_llm_options={"deep": "DEEP"}))
    return first.replace('"DEEP"', "[" * 3000 + "1" + "]" * 3000)


# shape -> (file bytes, what the one line must say)
BAD = {
    "nan": (
        _with_first(_first(lambda r: r.update(student_accuracy=float("nan")))).encode(),
        "NaN is not a JSON number",
    ),
    "infinity": (
        _with_first(_first(lambda r: r.update(student_accuracy=float("-inf")))).encode(),
        "-Infinity is not a JSON number",
    ),
    "lone surrogate": (  # json.dumps writes the escape \ud800, which is no character
        _with_first(json.dumps(json.loads(_lines()[0]) | {"student_explanation": "\ud800 oops"})).encode(),
        "\\ud800 is half of a UTF-16 surrogate pair",
    ),
    "deep nesting": (_with_first(_nested()).encode(), "nested too deeply"),
    "utf-16": ("\n".join(_lines()).encode("utf-16"), "UTF-16 text"),
}


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def library(tmp_path) -> Path:
    path = tmp_path / "lib.thoughtdesk"
    with Library.open(path):
        pass
    return path


@pytest.mark.parametrize("shape", list(BAD))
def test_a_bad_first_line_is_named_not_called_a_table(capsys, tmp_path, library, shape):
    data, says = BAD[shape]
    path = tmp_path / "DSCB-dev-crowd-anno.jsonl"
    path.write_bytes(data)
    assert looks_like_dscb(path)
    before = library_digest(library)
    code, out, err = _run(capsys, "--library", library, "import", path)
    assert code != 0
    message = err.strip()
    assert "\n" not in message and "Traceback" not in message, message
    assert str(path) in message and "line 1" in message and says in message, message
    assert "table" not in message and "--map" not in message, message
    assert library_digest(library) == before


def test_an_empty_file_says_so(capsys, tmp_path, library):
    path = tmp_path / "DSCB-empty.jsonl"
    path.write_bytes(b"")
    before = library_digest(library)
    code, _, err = _run(capsys, "--library", library, "import", path)
    message = err.strip()
    assert code != 0 and "\n" not in message
    assert f"{path} is empty" in message and "nothing to import" in message and "--map" not in message
    assert library_digest(library) == before


def _imported(capsys, library: Path, path: Path) -> list[dict]:
    code, _, err = _run(capsys, "--library", library, "import", path, "--collection", "c")
    assert code == 0, err
    out = path.with_name("out.jsonl")
    code, _, err = _run(capsys, "--library", library, "export", "c", out, "--format", "dscb")
    assert code == 0, err
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_file_with_a_byte_order_mark_imports_whole(capsys, tmp_path, library):
    path = tmp_path / "DSCB-dev-crowd-anno.jsonl"
    path.write_bytes(codecs.BOM_UTF8 + SOURCE.read_bytes())
    assert _imported(capsys, library, path) == [json.loads(line) for line in _lines()]


def test_a_first_record_over_a_megabyte_imports_whole(capsys, tmp_path, library):
    long = "Plants breathe. " * 80_000  # 1.3 MB
    first = _first(lambda r: r.update(student_explanation=long, student_raw_output=f"Explanation: {long}"))
    path = tmp_path / "DSCB-dev-crowd-anno.jsonl"
    path.write_text(_with_first(first), encoding="utf-8")
    assert len(first) > 1 << 20 and looks_like_dscb(path)
    records = _imported(capsys, library, path)
    assert len(records) == len(_lines()) and records[0]["student_explanation"] == long
