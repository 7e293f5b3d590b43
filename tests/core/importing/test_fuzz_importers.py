"""Hostile files for every importer (issue 15: the fuzzing that found its failures stays in the
suite). Each real fixture is damaged by hypothesis (bytes changed, cut, inserted; JSON values
swapped for other JSON) and imported into a library that already holds a collection: the
dataset loaders, generic tables (CSV, JSON array, JSON Lines, Parquet) through a column mapping,
ThoughtSource (with critiques too), DS Critique Bank and reviewers' annotation exchange files. Whatever
happens, the import either succeeds or raises ThoughtDesk's own error (a one-line message with
the place), never another exception; and a failed import leaves every stored row as it was."""

from __future__ import annotations

import csv
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.importing.test_import_skip import library_digest
from tests.helpers.libraries import demo_library
from tests.helpers.paths import FIXTURES
from thoughtdesk.core.datasets.generic import ColumnMapping
from thoughtdesk.core.datasets.ts_extras import side_path
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.importing.dscb import import_dscb
from thoughtdesk.core.importing.importer import export_thoughtsource, import_dataset, import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import import_annotations
from thoughtdesk.core.review.exchange import export_review

DATASETS = FIXTURES / "datasets"

# (fixture file, how it is imported); a name without a folder is made by ``generated`` below.
Importer = Callable[[Library, Path], object]
#: The quiz table's columns (tests/fixtures/import_dialogs/quiz.csv) as sample fields.
TABLE = ColumnMapping(
    question="problem",
    answer="label",
    choices=["opt_a", "opt_b", "opt_c"],
    id="qid",
    cot="why",
    answer_type="multiplechoice",
)


def _table(lib: Library, path: Path) -> object:
    return import_dataset(lib, path, mapping=TABLE, on_error="skip")


CASES: dict[str, tuple[Path, Importer]] = {
    "thoughtsource": (FIXTURES / "thoughtsource" / "edge_cases.json", lambda lib, p: import_thoughtsource(lib, p)),
    "dscb": (FIXTURES / "dscb" / "DSCB-dev-crowd-anno.jsonl", lambda lib, p: import_dscb(lib, p)),
    "gsm8k": (DATASETS / "gsm8k" / "test.jsonl", lambda lib, p: import_dataset(lib, p, dataset="gsm8k")),
    "med_qa": (
        DATASETS / "medqa" / "phrases_no_exclude_test.jsonl",
        lambda lib, p: import_dataset(lib, p, dataset="med_qa"),
    ),
    "medmc_qa": (DATASETS / "medmcqa" / "MedMCQA_test.json", lambda lib, p: import_dataset(lib, p, dataset="medmc_qa")),
    "pubmed_qa": (DATASETS / "pubmedqa" / "ori_pqal.json", lambda lib, p: import_dataset(lib, p, dataset="pubmed_qa")),
    "mmlu_csv": (
        DATASETS / "mmlu_medical" / "anatomy_test.csv",
        lambda lib, p: import_dataset(lib, p, dataset="mmlu_anatomy"),
    ),
    "strategy_qa": (DATASETS / "strategyqa" / "dev.json", lambda lib, p: import_dataset(lib, p, dataset="strategy_qa")),
    "generic_jsonl": (
        DATASETS / "gsm8k" / "test.jsonl",
        lambda lib, p: import_dataset(lib, p, mapping=ColumnMapping(question="question", answer="answer")),
    ),
    # Generic tables through a column mapping, in every format (issue 15, audit).
    "table_csv": (Path("table.csv"), _table),
    "table_json_array": (Path("table.json"), _table),
    "table_jsonl": (Path("table.jsonl"), _table),
    "table_parquet": (Path("table.parquet"), _table),
    # Reviewers' exchange files: annotations with explanation and critique ratings, and a
    # ThoughtSource collection carrying critiques (thoughtdesk_critiques), both made from the DSCB
    # fixture; imported into a library that holds it, so records match and merge.
    "annotations": (Path("annotations.json"), lambda lib, p: import_annotations(lib, p)),
    "critiques_thoughtsource": (Path("critiques.json"), lambda lib, p: import_thoughtsource(lib, p)),
}
#: The cases imported into the library holding the DSCB fixture, not the demo library.
ON_DSCB = {"annotations", "critiques_thoughtsource"}
#: The cases whose file is JSON (or JSON Lines) to swap values in.
NOT_JSON = {"mmlu_csv", "table_csv", "table_parquet"}
JSON_LINES = {"table_jsonl"}

BYTES = st.sampled_from(
    [b"", b"\x00", b"\xff", b"\xe9", b'"', b"{", b"}", b"[", b"]", b",", b":", b"\n", b"\r\n", b"\\", b"\xef\xbb\xbf"]
    + [b"[" * 2000, b'{"a":' * 50, b"null", b"-1e999", "\u202e".encode(), b"A" * 5000]
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=6,
)


@st.composite
def damaged_bytes(draw: st.DrawFn, original: bytes) -> bytes:
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["replace", "insert", "delete", "cut"]))
        if action == "replace":
            data[at : at + 1] = draw(BYTES)
        elif action == "insert":
            data[at:at] = draw(BYTES)
        elif action == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        else:
            del data[at:]
    return bytes(data)


def _swap_a_value(draw: st.DrawFn, value: object) -> object:
    """``value`` with one nested value (chosen by hypothesis) replaced by arbitrary JSON."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: _swap_a_value(draw, value[key])}
    if isinstance(value, list) and value and draw(st.booleans()):
        at = draw(st.integers(0, len(value) - 1))
        return [*value[:at], _swap_a_value(draw, value[at]), *value[at + 1 :]]
    return draw(JSON_VALUES)


@st.composite
def damaged_json(draw: st.DrawFn, original: bytes, lines: bool) -> bytes:
    if lines:
        records = [json.loads(line) for line in original.decode("utf-8").splitlines() if line.strip()]
        at = draw(st.integers(0, len(records) - 1))
        records[at] = _swap_a_value(draw, records[at])
        return "".join(json.dumps(r) + "\n" for r in records).encode()
    return json.dumps(_swap_a_value(draw, json.loads(original.decode("utf-8")))).encode()


@pytest.fixture(scope="module")
def base_library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = demo_library(tmp_path_factory.mktemp("fuzz") / "base.thoughtdesk")
    return path, library_digest(path)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[Path, str]]:
    """The folder of the made source files, and the library holding the DSCB fixture (with its digest)."""
    folder = tmp_path_factory.mktemp("fuzz-sources")
    quiz = FIXTURES / "import_dialogs" / "quiz.csv"
    shutil.copy(quiz, folder / "table.csv")
    with quiz.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    (folder / "table.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    (folder / "table.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    try:
        import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        pass
    else:
        pq.write_table(pa.table({k: [r[k] for r in rows] for k in rows[0]}), folder / "table.parquet")
    library = folder / "dscb.thoughtdesk"
    with Library.open(library) as lib:
        import_dscb(lib, FIXTURES / "dscb" / "DSCB-dev-crowd-anno.jsonl", collection="dscb")
        export_thoughtsource(lib, "dscb", folder / "critiques.json")
        counts = export_review(lib, None, folder / "annotations.json")
    assert counts.explanation_ratings and counts.critique_ratings  # the ratings are in the file
    assert "thoughtdesk_critiques" in side_path(folder / "critiques.json").read_text(encoding="utf-8")
    return folder, (library, library_digest(library))


def _source(case: str, generated: tuple[Path, tuple[Path, str]]) -> Path:
    path = CASES[case][0]
    if path.parent == Path("."):
        path = generated[0] / path.name
        if not path.exists():
            pytest.skip(f"{path.name} needs pyarrow (the parquet extra)")
    return path


def _check(case: str, content: bytes, base: tuple[Path, str], folder: Path) -> None:
    source, importer = CASES[case]
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name  # the same name: DSCB split and dataset detection use it
    target.write_bytes(content)
    library = folder / "library.thoughtdesk"
    shutil.copy(base[0], library)
    with Library.open(library) as lib:
        try:
            importer(lib, target)
        except ThoughtDeskError as error:
            message = str(error)
            assert message and "\n" not in message and "Traceback" not in message
            failed = True
        else:
            failed = False
    if failed:
        assert library_digest(library) == base[1], f"{case}: a failed import changed the library"


FUZZ = settings(
    max_examples=int(os.environ.get("THOUGHTDESK_FUZZ_EXAMPLES", "20")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("case", sorted(CASES))
def test_damaged_bytes_never_escape_as_tracebacks(case, base_library, generated, tmp_path):
    original = _source(case, generated).read_bytes()
    base = generated[1] if case in ON_DSCB else base_library

    @FUZZ
    @given(content=damaged_bytes(original))
    def run(content: bytes) -> None:
        _check(case, content, base, tmp_path / "bytes")

    run()


@pytest.mark.parametrize("case", sorted(c for c in CASES if c not in NOT_JSON))
def test_wrong_json_values_never_escape_as_tracebacks(case, base_library, generated, tmp_path):
    source = _source(case, generated)
    original = source.read_bytes()
    lines = source.suffix == ".jsonl" or (case == "medmc_qa")
    base = generated[1] if case in ON_DSCB else base_library

    @FUZZ
    @given(content=damaged_json(original, lines))
    def run(content: bytes) -> None:
        _check(case, content, base, tmp_path / "json")

    run()
