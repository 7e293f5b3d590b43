"""Reasoning traces in and out (issue 24, points 2 and 5): reasoning-trace datasets imported
with the thinking apart (chat records with ``<think>`` or a reasoning field, OpenThoughts' and
s1K's layouts: fixtures in tests/fixtures/reasoning), ``samples-jsonl``/``samples-csv`` and chat
JSONL carrying it, the ThoughtSource export keeping it in its side file (and loadable by
ThoughtSource's loader), and stored CoTs with a ``<think>`` block split by
``thoughtdesk cots split-thinking``, nothing lost."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.core.importing.test_thoughtsource_loader import load_in_thoughtsource, ts_python  # noqa: F401 - fixture
from tests.helpers.cli import run_cli
from thoughtdesk.core.datasets.ts_extras import side_path
from thoughtdesk.core.importing.flat_export import export_flat
from thoughtdesk.core.importing.importer import export_thoughtsource, import_thoughtsource
from thoughtdesk.core.importing.traces import import_traces
from thoughtdesk.core.library.reader import iter_stored_split
from thoughtdesk.core.library.records import GeneratedCot, Sample, model_repr
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import OnDuplicate, SampleWriter

FIXTURES = Path(__file__).parents[2] / "fixtures" / "reasoning"


def cots(lib: Library, collection: str) -> list[GeneratedCot]:
    cid = lib.require_collection(collection)
    return [
        cot
        for dataset, split in lib.splits(cid)
        for stored in iter_stored_split(lib, cid, dataset, split)
        for cot in stored.sample.generated_cot
    ]


@pytest.fixture
def lib(tmp_path: Path):
    with Library.open(tmp_path / "lib.thoughtdesk") as library:
        yield library


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "r1_chat.jsonl",
            [
                ("7 * 8 = 56. Wait, let me check: 7 * 8 = 56.", "The answer is 56."),
                ("91 = 7 * 13, so it is not prime.", "No."),  # only the closing tag
                ("9.80 > 9.11.", "9.8 is larger."),  # reasoning_content beside content
            ],
        ),
        ("openthoughts.jsonl", [("Okay, 2 + 2 = 4.", "\\boxed{4}")]),
        (
            "s1k.jsonl",
            [("Let me add: 2 + 2 = 4.\n\nAlternatively, count: 3, 4. Yes, 4.", "The answer is $\\boxed{4}$.")],
        ),
        ("openthoughts_metadata.jsonl", [("3 * 3 = 9.", "**9**")]),
    ],
)
def test_reasoning_trace_files_import_with_the_thinking_apart(lib, name, expected):
    report = import_traces(lib, FIXTURES / name, collection="traces")
    assert report.inserted == len(expected)
    stored = cots(lib, "traces")
    assert [(c.reasoning, c.cot) for c in stored] == expected
    assert all(c.reasoning_tokens and c.reasoning_tokens > 0 for c in stored)


def test_what_a_trace_file_says_besides_is_kept(lib):
    import_traces(lib, FIXTURES / "s1k.jsonl", collection="s1k")
    cid = lib.require_collection("s1k")
    ((dataset, split),) = lib.splits(cid)
    (stored,) = list(iter_stored_split(lib, cid, dataset, split))
    sample = stored.sample
    assert sample.question == "Compute 2 + 2." and sample.cot == ["The sum is 4."]
    assert sample.extra["trace_record"]["cot_type"] == "math" and sample.extra["trace_record"]["cot"] is None


def test_a_trace_whose_thinking_is_not_text_is_one_line_naming_the_line_and_field(tmp_path):
    result = run_cli("import", FIXTURES / "bad_thinking.jsonl", library=tmp_path / "lib.thoughtdesk")
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if "bad_thinking.jsonl" in line]
    assert errors == [
        f"thoughtdesk: {FIXTURES / 'bad_thinking.jsonl'}, line 2: field reasoning is a number, not text; "
        "fix the line, or add --on-error skip"
    ]
    assert "Traceback" not in result.stderr
    skipped = run_cli(
        "import", FIXTURES / "bad_thinking.jsonl", "--on-error", "skip", "--json", library=tmp_path / "lib.thoughtdesk"
    )
    assert skipped.returncode == 0, skipped.stderr
    assert json.loads(skipped.stdout)["inserted"] == 1


def _write(lib: Library, name: str, samples: list[Sample]) -> None:
    with lib.transaction():
        writer = SampleWriter(lib, lib.create_collection(name), OnDuplicate.FAIL)
        for sample in samples:
            writer.add("gsm8k", "test", sample)  # a dataset ThoughtSource's loader knows
        writer.close(name)


def _reasoning_collection(lib: Library) -> None:
    sample = Sample(
        id="q1",
        question="Which is larger, 9.11 or 9.8?",
        type="number",
        answer=["9.8"],
        generated_cot=[
            GeneratedCot(
                id="c1",
                cot="9.8 is larger.",
                author="thoughtdesk",
                model=model_repr("thinker"),
                reasoning="9.80 > 9.11.",
                finish_reason="stop",
                reasoning_tokens=7,
            ),
            GeneratedCot(id="c2", cot="The answer is 9.8", author="thoughtdesk", model=model_repr("thinker")),
        ],
    )
    _write(lib, "thinking", [sample])


def test_samples_jsonl_and_csv_carry_reasoning_visible_text_finish_reason_and_tokens(lib, tmp_path):
    _reasoning_collection(lib)
    export_flat(lib, "thinking", tmp_path / "s.jsonl", "samples-jsonl")
    (record,) = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    first, second = record["generated_cots"]
    assert (first["reasoning"], first["cot"], first["finish_reason"], first["reasoning_tokens"]) == (
        "9.80 > 9.11.",
        "9.8 is larger.",
        "stop",
        7,
    )
    assert (second["reasoning"], second["finish_reason"], second["reasoning_tokens"]) == (None, None, None)
    export_flat(lib, "thinking", tmp_path / "s.csv", "samples-csv")
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    assert (rows[0]["reasoning"], rows[0]["cot"], rows[0]["finish_reason"], rows[0]["reasoning_tokens"]) == (
        "9.80 > 9.11.",
        "9.8 is larger.",
        "stop",
        "7",
    )


@pytest.mark.parametrize("layout", ["think", "field", "none"])
def test_chat_jsonl_carries_the_thinking_in_the_chosen_layout(lib, tmp_path, layout):
    _reasoning_collection(lib)
    result = run_cli(
        "export",
        "thinking",
        tmp_path / "c.jsonl",
        "--format",
        "chat-jsonl",
        "--chat-thinking",
        layout,
        library=lib.path,
    )
    assert result.returncode == 0, result.stderr
    first, second = (json.loads(line)["messages"][-1] for line in (tmp_path / "c.jsonl").read_text().splitlines())
    if layout == "think":
        assert first == {"role": "assistant", "content": "<think>\n9.80 > 9.11.\n</think>\n\n9.8 is larger."}
    elif layout == "field":
        assert first == {"role": "assistant", "content": "9.8 is larger.", "reasoning_content": "9.80 > 9.11."}
    else:
        assert first == {"role": "assistant", "content": "9.8 is larger."}
    assert second == {"role": "assistant", "content": "The answer is 9.8"}  # no thinking: none added


def test_a_chat_jsonl_export_imports_back_with_its_thinking(lib, tmp_path):
    _reasoning_collection(lib)
    export_flat(lib, "thinking", tmp_path / "c.jsonl", "chat-jsonl")
    import_traces(lib, tmp_path / "c.jsonl", collection="back")
    assert [(c.reasoning, c.cot) for c in cots(lib, "back")] == [
        ("9.80 > 9.11.", "9.8 is larger."),
        (None, "The answer is 9.8"),
    ]


def test_the_thoughtsource_export_keeps_the_reasoning_in_its_side_file_and_round_trips(lib, tmp_path):
    _reasoning_collection(lib)
    out = tmp_path / "ts.json"
    export_thoughtsource(lib, "thinking", out)
    main = out.read_text()
    assert "9.80 > 9.11." not in main and "thoughtdesk_reasoning" not in main  # ThoughtSource's keys only
    assert "9.80 > 9.11." in side_path(out).read_text()
    import_thoughtsource(lib, out, collection="again")
    first, second = cots(lib, "again")
    assert (first.reasoning, first.cot, first.finish_reason, first.reasoning_tokens) == (
        "9.80 > 9.11.",
        "9.8 is larger.",
        "stop",
        7,
    )
    assert (second.reasoning, second.finish_reason, second.reasoning_tokens) == (None, None, None)
    assert "thoughtdesk_reasoning" not in first.extra


def test_thoughtsource_s_loader_opens_an_export_with_reasoning(lib, tmp_path, ts_python):  # noqa: F811
    _reasoning_collection(lib)
    out = tmp_path / "ts.json"
    export_thoughtsource(lib, "thinking", out)
    loaded = load_in_thoughtsource(ts_python, out)
    assert loaded[str(out)]["sizes"] == {"gsm8k": {"test": 1}}


# --- existing libraries: cots split-thinking -----------------------------------------------


def _old_cots(lib: Library) -> None:
    texts = [
        "<think>\nLet me see. 7 * 8 = 56.\n</think>\n\nThe answer is 56.",
        "Hmm, 91 = 7 * 13.\n</think>\n\nNo.",
        "<think>I ran out of tokens while",
        "A plain CoT without thinking. The answer is B.",
    ]
    samples = [
        Sample(id=f"q{i}", question=f"question {i}", type="text", generated_cot=[GeneratedCot(id=f"c{i}", cot=text)])
        for i, text in enumerate(texts)
    ]
    _write(lib, "old", samples)


def test_split_thinking_splits_stored_cots_keeps_the_originals_and_undo_puts_them_back(lib, tmp_path):
    _old_cots(lib)
    before = [c.cot for c in cots(lib, "old")]
    dry = run_cli("cots", "split-thinking", "old", "--dry-run", "--json", library=lib.path)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["changed"] == 3 and [c.cot for c in cots(lib, "old")] == before
    done = run_cli("cots", "split-thinking", "old", library=lib.path)
    assert done.returncode == 0, done.stderr
    assert "split 3 CoT(s)" in done.stdout and "1 with thinking never closed" in done.stdout
    after = cots(lib, "old")
    assert [(c.reasoning, c.cot) for c in after] == [
        ("Let me see. 7 * 8 = 56.", "The answer is 56."),
        ("Hmm, 91 = 7 * 13.", "No."),
        ("I ran out of tokens while", ""),
        (None, "A plain CoT without thinking. The answer is B."),
    ]
    assert [c.extra.get("thoughtdesk_thinking_split", {}).get("original_cot") for c in after] == [*before[:3], None]
    # The search index holds each CoT's visible text, then its thinking (as a run stores them).
    (indexed,) = lib.conn.execute(
        "SELECT f.generated FROM sample_fts f JOIN sample s ON s.id = f.rowid WHERE s.sample_id = 'q0'"
    ).fetchone()
    assert indexed == "The answer is 56.\nLet me see. 7 * 8 = 56."
    again = run_cli("cots", "split-thinking", "old", "--json", library=lib.path)
    assert json.loads(again.stdout)["changed"] == 0  # split once
    undo = run_cli("cots", "split-thinking", "old", "--undo", library=lib.path)
    assert undo.returncode == 0, undo.stderr
    restored = cots(lib, "old")
    assert [c.cot for c in restored] == before and all(c.reasoning is None for c in restored)
    assert all("thoughtdesk_thinking_split" not in c.extra for c in restored)


def test_split_thinking_of_an_unknown_collection_or_bad_tags_is_one_line(lib):
    missing = run_cli("cots", "split-thinking", "nope", library=lib.path)
    assert missing.returncode != 0 and len(missing.stderr.strip().splitlines()) == 1 and "nope" in missing.stderr
    _old_cots(lib)
    bad = run_cli("cots", "split-thinking", "old", "--tags", "<think>", library=lib.path)
    assert bad.returncode != 0 and "OPEN,CLOSE" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
