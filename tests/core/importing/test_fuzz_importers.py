"""Hostile files for every importer (issue 15: the fuzzing that found its failures stays in the
suite). Each real fixture is damaged by hypothesis (bytes changed, cut, inserted; JSON values
swapped for other JSON) and imported into a library that already holds a collection. Whatever
happens, the import either succeeds or raises ThoughtDesk's own error (a one-line message with
the place), never another exception; and a failed import leaves every stored row as it was."""

from __future__ import annotations

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
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.importing.dscb import import_dscb
from thoughtdesk.core.importing.importer import import_dataset, import_thoughtsource
from thoughtdesk.core.library.store import Library

DATASETS = FIXTURES / "datasets"

# (fixture file, how it is imported)
Importer = Callable[[Library, Path], object]
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
}

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
def test_damaged_bytes_never_escape_as_tracebacks(case, base_library, tmp_path):
    original = CASES[case][0].read_bytes()

    @FUZZ
    @given(content=damaged_bytes(original))
    def run(content: bytes) -> None:
        _check(case, content, base_library, tmp_path / "bytes")

    run()


@pytest.mark.parametrize("case", sorted(c for c in CASES if c != "mmlu_csv"))
def test_wrong_json_values_never_escape_as_tracebacks(case, base_library, tmp_path):
    source = CASES[case][0]
    original = source.read_bytes()
    lines = source.suffix == ".jsonl" or (case == "medmc_qa")

    @FUZZ
    @given(content=damaged_json(original, lines))
    def run(content: bytes) -> None:
        _check(case, content, base_library, tmp_path / "json")

    run()
