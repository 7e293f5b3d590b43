"""Mining a collection against a local fake server: extraction (resumable, nothing stored twice),
filtering with the 0.9-decay loss reduction (resumable), export, and bad input. The passes are
runs of the generation engine (core/rationales/runs.py; tests/core/rationales/test_rationale_runs.py
kills and resumes them)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.servers import FakeModelServer, Recorded, Reply, toy_logprob
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.generation.fragments import FragmentLibrary
from thoughtdesk.core.generation.runs import ModelSpec
from thoughtdesk.core.generation.scoring import weighted_loss
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.export import export_rationales
from thoughtdesk.core.rationales.extraction import DEFAULT_PROMPT_KEY, RationaleError
from thoughtdesk.core.rationales.filtering import scored_following
from thoughtdesk.core.rationales.mining import filter_table
from thoughtdesk.core.rationales.setup import extraction_setup, filter_setup, run_extraction, run_filter
from thoughtdesk.core.rationales.store import documents, file_documents, rationales

RATIONALE = "The next step uses the numbers found so far."


#: Whether ``rewriting`` refuses a document with FAIL in it (a test turns it off).
REFUSING = {"FAIL": True}


def rewriting(record: Recorded) -> Reply | None:
    """A model that copies the document and inserts one rationale after its first sentence;
    the document comes between the built-in prompt's 'Text:' and 'Answer:' lines."""
    content = record.json["messages"][-1]["content"]
    text = content.rsplit("Text:\n", 1)[1].rsplit("\n\nAnswer:", 1)[0]
    if "FAIL" in text and REFUSING["FAIL"]:
        return Reply(status=400, body={"error": {"message": "refused"}})
    first, sep, rest = text.partition(". ")
    rewritten = f"{first}. <BOT>{RATIONALE}<EOT> {rest}" if sep else text
    return Reply(body={"choices": [{"index": 0, "message": {"role": "assistant", "content": rewritten}}]})


def writer(server: FakeModelServer) -> ModelSpec:
    """The rewriting model: the fake server's chat endpoint."""
    return ModelSpec("openai", "m", base_url=server.base_url, chat=True)


def scorer(server: FakeModelServer) -> ModelSpec:
    """The scorer: the fake server's completions endpoint (echoed log-probs)."""
    return ModelSpec("openai", "m", base_url=server.base_url, endpoint="completions")


def extract(lib: Library, server: FakeModelServer, source: str = "reference"):
    setup = extraction_setup(writer(server), FragmentLibrary.defaults(), source=source)
    return asyncio.run(run_extraction(lib, DEMO, setup))


def score(lib: Library, server: FakeModelServer, limit: int | None = None):
    return asyncio.run(run_filter(lib, DEMO, filter_setup(scorer(server), limit=limit)))


def test_extraction_stores_valid_rewrites_and_resumes(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.responder = rewriting
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        # One document fails: it is counted, named, and the only one sent again next time (its
        # run is resumed: the request is sent as planned, so the server, not the text, changes).
        lib.conn.execute("UPDATE sample SET cot = '[\"FAIL here. Then more.\"]' WHERE id = 3")
        first = extract(lib, fake_server)
        assert (first.total, first.done, first.failed, first.skipped) == (16, 15, 1, 0)
        assert first.valid == 15 and first.records == 15
        assert "reference:" in first.errors[0] and "refused" in first.errors[0]
        sent = len(fake_server.requests)
        REFUSING["FAIL"] = False
        try:
            second = extract(lib, fake_server)
        finally:
            REFUSING["FAIL"] = True
        assert (second.done, second.skipped, second.failed) == (1, 15, 0)
        assert len(fake_server.requests) == sent + 1
        third = extract(lib, fake_server)
        assert (third.done, third.skipped) == (0, 16) and len(fake_server.requests) == sent + 1
        stored = list(rationales(lib, DEMO))
        assert len(stored) == 16 and all(r.rationale == RATIONALE for r in stored)
        doc = lib.conn.execute(
            "SELECT original, output, valid, similarity, markers, fragment_key FROM rationale_doc WHERE doc_key LIKE "
            "'reference:%' ORDER BY id LIMIT 1"
        ).fetchone()
        assert (
            doc[2] == 1 and doc[3] == 1.0 and json.loads(doc[4]) == ["<BOT>", "<EOT>"] and doc[5] == DEFAULT_PROMPT_KEY
        )
        assert stored[0].preceding + stored[0].following == doc[0]


def test_generated_and_file_sources(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.responder = rewriting
    notes = tmp_path / "notes.txt"
    notes.write_text("First doc. It goes on.\n\n\nSecond doc. More here.\nAnd more.\n", encoding="utf-8")
    assert [(d.doc_key, d.text) for d in file_documents(notes)] == [
        ("file:notes.txt:1", "First doc. It goes on."),
        ("file:notes.txt:4", "Second doc. More here.\nAnd more."),
    ]
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        assert len(documents(lib, DEMO, "generated")) == 33
        summary = extract(lib, fake_server, str(notes))
        assert summary.done == 2 and summary.records == 2


def test_bad_sources_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "docs.jsonl"
    bad.write_text('{"text": "fine"}\n{"txt": "no text field"}\n', encoding="utf-8")
    with pytest.raises(DataFileError, match=r"docs.jsonl, line 2: a record needs a string field 'text'"):
        file_documents(bad)
    bad.write_text('{"text": "fine"}\n{not json\n', encoding="utf-8")
    with pytest.raises(DataFileError, match=r"docs.jsonl, line 2, column 2: not JSON"):
        file_documents(bad)
    with pytest.raises(RationaleError, match="no such file"):
        file_documents(tmp_path / "missing.txt")


def test_filter_scores_loss_reductions_and_resumes(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.responder = rewriting
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        extract(lib, fake_server)
        fake_server.responder = None  # the toy echo model answers the scoring requests

        first = score(lib, fake_server, limit=5)
        assert (first.done, first.skipped, first.total) == (5, 0, 16)
        second = score(lib, fake_server)
        assert (second.done, second.skipped) == (11, 5)
        # two scorings per rationale (one document each), none repeated; one probe a pass
        assert len(fake_server.requests) - 16 == 2 * 16 + 2
        for record in rationales(lib, DEMO, scorer="openai:m", decay=0.9):
            assert record.score is not None
            # The toy model's log-probs by hand: 0.9-decayed loss of the following words.
            target = scored_following(record.following)
            words = [w for w in target.split(" ") if w]
            with_context = f"{record.preceding} <BOT>{record.rationale}<EOT>"
            expected = []
            for context in (record.preceding, with_context):
                logprobs, seen = [], context
                for word in words:
                    logprobs.append(toy_logprob(seen, " " + word))
                    seen += " " + word
                expected.append(weighted_loss(logprobs))
            assert record.score.loss_without == pytest.approx(expected[0])
            assert record.score.loss_with == pytest.approx(expected[1])
        table = filter_table(lib, DEMO, "openai:m", tau=0.0, decay=0.9)
        assert table.scored == 16 and table.kept + table.dropped == 16
        reductions = sorted(table.reductions)
        assert reductions[0] >= 0  # the rationale only adds seen words
        strict = filter_table(lib, DEMO, "openai:m", tau=reductions[8], decay=0.9)
        assert strict.kept == sum(1 for value in reductions if value >= reductions[8])


def test_export_writes_kept_rationales_as_chat_records(tmp_path: Path, fake_server: FakeModelServer) -> None:
    fake_server.responder = rewriting
    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        extract(lib, fake_server)
        out = tmp_path / "out.jsonl"
        with pytest.raises(RationaleError, match="no scored rationales"):
            export_rationales(lib, DEMO, out, tau=1.2, decay=0.9)
        assert not out.exists()
        assert export_rationales(lib, DEMO, out, tau=1.2, decay=0.9, unfiltered=True) == 16
        fake_server.responder = None
        score(lib, fake_server)
        table = filter_table(lib, DEMO, "openai:m", tau=1.2, decay=0.9)
        count = export_rationales(lib, DEMO, out, tau=1.2, decay=0.9)
        assert count == table.kept
        lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert len(lines) == count
        kept = [r for r in rationales(lib, DEMO, scorer="openai:m", decay=0.9) if r.score and r.score.kept(1.2)]
        for line, record in zip(lines, kept, strict=True):
            assert line == {
                "messages": [
                    {"role": "user", "content": record.preceding},
                    {"role": "assistant", "content": record.rationale},
                ]
            }
        with pytest.raises(RationaleError, match="no rationales scored by 'openai:other'"):
            export_rationales(lib, DEMO, out, tau=1.2, decay=0.9, scorer="openai:other")


def test_a_score_stored_again_is_updated_in_place(tmp_path):
    """add_score is sqlite-utils' upsert on the score's identity (rationale, scorer, decay): a
    second filtering pass updates the row (its id stays), never a second row."""
    from thoughtdesk.core.rationales.filtering import LossReduction
    from thoughtdesk.core.rationales.store import add_score

    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        cid = lib.require_collection(DEMO)
        with lib.transaction() as conn:
            conn.execute(
                "INSERT INTO rationale_doc (collection_id, doc_key, source, model, markers, prompt_text, original, "
                "output, similarity, valid, created) VALUES (?, 'd', 'file', 'm', '[]', '', '', '', 1, 1, 'now')",
                (cid,),
            )
            conn.execute(
                "INSERT INTO rationale (doc_id, position, preceding, rationale, following) "
                "VALUES ((SELECT max(id) FROM rationale_doc), 0, 'a', 'b', 'c')"
            )
        (rid,) = lib.conn.execute("SELECT id FROM rationale").fetchone()
        add_score(lib, rid, scorer="s", decay=0.9, result=LossReduction(2.0, 1.5, 10, 10))
        (first,) = lib.conn.execute("SELECT id FROM rationale_score").fetchone()
        add_score(lib, rid, scorer="s", decay=0.9, result=LossReduction(2.0, 1.0, 10, 10))
        add_score(lib, rid, scorer="s", decay=1.0, result=LossReduction(2.0, 1.9, 10, 10))
        rows = lib.conn.execute("SELECT id, decay, reduction FROM rationale_score ORDER BY decay").fetchall()
        assert rows[0] == (first, 0.9, pytest.approx(1.0)) and len(rows) == 2
        assert [r.score and r.score.reduction for r in rationales(lib, DEMO, scorer="s", decay=0.9)] == [
            pytest.approx(1.0)
        ]
