"""Samples, answers and chat examples as JSONL/CSV, and Parquet both ways (issue 16, point 16)."""

from __future__ import annotations

import csv
import json

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.core.datasets import ColumnMapping
from thoughtdesk.core.errors import Cancelled, DataFileError
from thoughtdesk.core.files import ExportTargetError, check_export_target, looks_like_export
from thoughtdesk.core.importing.flat_export import (
    ANSWER_COLUMNS,
    SAMPLE_COLUMNS,
    ChatFilter,
    ParquetUnavailableError,
    export_answers_csv,
    export_chat_jsonl,
    export_flat,
    export_samples_csv,
    export_samples_jsonl,
)
from thoughtdesk.core.importing.importer import import_dataset, import_thoughtsource
from thoughtdesk.core.library.store import Library

EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"


@pytest.fixture
def lib(tmp_path):
    with Library.open(tmp_path / "lib.thoughtdesk") as library:
        import_thoughtsource(library, EDGE, collection="edge")
        yield library


def read_csv(path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_samples_jsonl_carries_cots_answers_verdicts_and_annotations(lib, tmp_path):
    out = tmp_path / "samples.jsonl"
    assert export_samples_jsonl(lib, "edge", out) == 4
    samples = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [s["id"] for s in samples] == ["mq-1", "mq-2", "g-1", "g-2"]
    first = samples[0]
    assert [c["cot_id"] for c in first["generated_cots"]] == ["cot-1", "cot-2"]
    assert [c["answers"][0]["correct"] for c in first["generated_cots"]] == [True, False]
    assert {"key": "preferred", "value": True, "author": first["generated_cots"][0]["annotations"][0]["author"]} in (
        first["generated_cots"][0]["annotations"]
    )
    assert "<img src=x>" in first["question"]  # data is written as it is, not interpreted


def test_samples_csv_has_a_row_per_cot_and_answers_csv_a_row_per_answer(lib, tmp_path):
    rows_path, answers_path = tmp_path / "samples.csv", tmp_path / "answers.csv"
    assert export_samples_csv(lib, "edge", rows_path) == 5  # 3 CoTs + 2 samples without one
    rows = read_csv(rows_path)
    assert tuple(rows[0]) == SAMPLE_COLUMNS
    assert [(r["sample_id"], r["cot_id"], r["correct"]) for r in rows] == [
        ("mq-1", "cot-1", "true"),
        ("mq-1", "cot-2", "false"),
        ("mq-2", "", ""),
        ("g-1", "old-format", ""),
        ("g-2", "", ""),
    ]
    assert rows[0]["choices"].startswith("Insulin | Metformin")
    assert export_answers_csv(lib, "edge", answers_path) == 3
    answers = read_csv(answers_path)
    assert tuple(answers[0]) == ANSWER_COLUMNS
    assert [(a["cot_id"], a["answer"].strip(), a["correct"]) for a in answers] == [
        ("cot-1", "B) Metformin.", "true"),
        ("cot-2", "A) Insulin.", "false"),
        ("old-format", "5", ""),
    ]


def test_answers_csv_carries_thoughtdesks_verdict_after_rescoring(lib, tmp_path):
    from thoughtdesk.core.evaluation.rescoring import rescore

    rescore(lib, "edge")
    assert export_answers_csv(lib, "edge", tmp_path / "answers.csv") == 3
    answers = read_csv(tmp_path / "answers.csv")
    assert [a["td_outcome"] for a in answers[:2]] == ["correct", "incorrect"]
    assert answers[0]["td_method"]


@pytest.mark.parametrize(
    "filters, expected",
    [
        (ChatFilter(), ["cot-1", "cot-2", "old-format"]),
        (ChatFilter(correct_only=True), ["cot-1"]),
        (ChatFilter(preferred_only=True), ["cot-1"]),
        (ChatFilter(labels=("Too verbose",)), ["cot-1"]),
        (ChatFilter(labels=("Incorrect reasoning",)), []),  # stored as the string "false"
    ],
)
def test_chat_jsonl_filters(lib, tmp_path, filters, expected):
    out = tmp_path / "chat.jsonl"
    assert export_chat_jsonl(lib, "edge", out, filters=filters, system="You are careful.") == len(expected)
    examples = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for example in examples:
        roles = [m["role"] for m in example["messages"]]
        assert roles == ["system", "user", "assistant"]
    if "cot-1" in expected:
        first = examples[0]["messages"]
        assert "B) Metformin" in first[1]["content"] and first[2]["content"].startswith("Metformin is first-line")
        assert first[2]["content"].endswith("Answer: B) Metformin.")


def test_a_failed_export_leaves_no_file(lib, tmp_path):
    out = tmp_path / "samples.csv"
    with pytest.raises(Exception, match="no collection named 'missing'"):
        export_samples_csv(lib, "missing", out)
    assert not out.exists() and not list(tmp_path.glob("*.part"))


def test_parquet_round_trip(lib, tmp_path):
    pytest.importorskip("pyarrow", reason="Parquet is optional (the parquet extra)")
    out = tmp_path / "samples.parquet"
    assert export_flat(lib, "edge", out, "parquet") == 5
    mapping = ColumnMapping(question="question", answer="reference_answer", id="cot_id", cot="reference_cot")
    with pytest.raises(DataFileError, match=r"samples.parquet, line 3: .*field cot_id: missing id"):
        import_dataset(lib, out, mapping=mapping, collection="from parquet")  # row 3: a sample without CoTs
    mapping = ColumnMapping(question="question", answer="reference_answer", cot="reference_cot")
    report = import_dataset(lib, out, mapping=mapping, collection="from parquet")
    assert report.inserted == 5
    assert {c.name: c.samples for c in lib.collections()}["from parquet"] == 5


def test_parquet_without_pyarrow_says_what_to_install(lib, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    with pytest.raises(ParquetUnavailableError, match=r"pip install 'thoughtdesk\[parquet\]'"):
        export_flat(lib, "edge", tmp_path / "x.parquet", "parquet")
    assert not (tmp_path / "x.parquet").exists()


@pytest.mark.parametrize("fmt", ["samples-jsonl", "samples-csv", "answers-csv", "chat-jsonl", "parquet"])
def test_every_format_reports_progress_and_a_cancel_leaves_no_file(lib, tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="Parquet is optional (the parquet extra)")
    seen: list[tuple[int, int]] = []
    out = tmp_path / f"out.{fmt}"
    export_flat(lib, "edge", out, fmt, progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    out.unlink()
    with pytest.raises(Cancelled, match="export cancelled"):
        export_flat(lib, "edge", out, fmt, cancel=lambda: True)
    assert not out.exists() and not [p.name for p in tmp_path.iterdir() if p.name.startswith("out.")]


@pytest.mark.parametrize("fmt", ["samples-csv", "answers-csv", "parquet"])
def test_csv_and_parquet_exports_are_recognised_as_earlier_exports(lib, tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="Parquet is optional (the parquet extra)")
    out = tmp_path / f"out.{fmt}"
    export_flat(lib, "edge", out, fmt)
    assert looks_like_export(out)
    assert check_export_target(out) == out  # exporting again needs no --force
    other = tmp_path / f"other.{fmt}"
    other.write_bytes(b"PAR1 someone else's table PAR1" if fmt == "parquet" else b"name,dose\nmetformin,500\n")
    assert not looks_like_export(other)


@pytest.mark.parametrize(
    ("fmt", "kind"),
    [
        ("thoughtsource", "ThoughtSource collection"),
        ("samples-jsonl", "samples-jsonl"),
        ("chat-jsonl", "chat-jsonl"),
        ("samples-csv", "CSV"),
        ("answers-csv", "CSV"),
        ("parquet", "parquet"),
        ("dscb", "dscb"),
        ("annotations", "annotations"),
    ],
)
def test_every_export_is_recognised_by_its_content_when_written_again(lib, tmp_path, fmt, kind):
    """Issue 15, point 1 (audit): earlier exports were recognised by being JSON at all; now by
    what ThoughtDesk writes, so each of them is still replaced without --force."""
    from thoughtdesk.core.files import export_kind
    from thoughtdesk.core.importing.dscb import export_dscb
    from thoughtdesk.core.importing.importer import export_thoughtsource
    from thoughtdesk.core.review.exchange import export_review

    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="Parquet is optional (the parquet extra)")
    out = tmp_path / "out.data"

    def write() -> None:
        if fmt == "thoughtsource":
            export_thoughtsource(lib, "edge", out)
        elif fmt == "dscb":
            export_dscb(lib, "edge", out)
        elif fmt == "annotations":
            export_review(lib, None, out)
        else:
            export_flat(lib, "edge", out, fmt)

    write()
    assert export_kind(out) == kind
    assert check_export_target(out, libraries=[lib.path]) == out
    write()  # again onto the earlier export: no --force needed
    for target in (lib.path, lib.path.with_name(lib.path.name + "-wal")):
        with pytest.raises(ExportTargetError, match="open library"):
            check_export_target(target, libraries=[lib.path], force=True)
