"""A rationale extraction run (issue 28, point 11: mining passes are runs of the engine) in the
Runs tab: listed with its kind, started, paused (nothing sent while paused), resumed to the
end, each document rewritten once. A real HTTP server on 127.0.0.1, the real window."""

from __future__ import annotations

from collections import Counter

from tests.core.rationales.test_mining import rewriting
from tests.helpers.servers import FakeModelServer, Recorded, Reply
from tests.ui.generation.conftest import COLLECTION
from tests.ui.generation.test_runs_panel import PAUSE_MS, cell, shown_cell
from thoughtdesk.core.generation.fragments import FragmentLibrary
from thoughtdesk.core.generation.runs import ModelSpec, RunLimits
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.runs import create_rationale_run
from thoughtdesk.core.rationales.setup import extraction_setup, plan_extraction

DOCUMENTS = 12


def _document_of(record: Recorded) -> str:
    content = record.json["messages"][-1]["content"]
    return content.rsplit("Text:\n", 1)[1].rsplit("\n\nAnswer:", 1)[0]


def test_a_rationale_run_pauses_and_resumes_in_the_runs_tab(window, generation, qtbot, tmp_path, fake_server):
    server: FakeModelServer = fake_server

    def slow(record: Recorded) -> Reply | None:
        reply = rewriting(record)
        assert reply is not None
        reply.delay = 0.2
        return reply

    server.responder = slow
    notes = tmp_path / "notes.txt"  # documents of a file: their requests have no sample (m020)
    notes.write_text("\n\n".join(f"Fact {i} holds. So {i} follows." for i in range(DOCUMENTS)) + "\n", "utf-8")
    setup = extraction_setup(
        ModelSpec("openai", "m", base_url=server.base_url, chat=True), FragmentLibrary.defaults(), source=str(notes)
    )
    with Library.open(window.library.path) as lib:
        plan = plan_extraction(lib, COLLECTION, setup)
        assert plan.total == DOCUMENTS
        run_id = create_rationale_run(lib, plan)

    panel = generation.runs_panel
    window.show_tab(panel)
    panel.reload()
    qtbot.waitUntil(lambda: panel.model.row_of(run_id) is not None, timeout=10000)
    assert shown_cell(panel, run_id, "Status") == "planned"
    worker = panel.start_run(run_id, limits=RunLimits(concurrency=1))
    live = lambda: panel.model.live.get(run_id)  # noqa: E731 - reads as the value it names
    qtbot.waitUntil(lambda: live() is not None and live().done >= 2, timeout=60000)

    assert panel.pause_button.isEnabled()
    panel.pause_button.click()
    qtbot.waitUntil(lambda: live().status == "paused" and live().in_flight == 0, timeout=30000)
    paused_done, sent = live().done, len(server.requests)
    qtbot.wait(PAUSE_MS)  # nothing to wait on but time: a broken pause sends within ~50 ms
    assert live().done == paused_done and len(server.requests) == sent, "nothing is sent while paused"
    assert "paused" in shown_cell(panel, run_id, "Status")
    assert panel.start_button.isEnabled() and not panel.pause_button.isEnabled()

    with qtbot.waitSignal(panel.run_ended, timeout=120000):
        panel.start_button.click()  # resume the paused worker
    assert not worker.isRunning()
    qtbot.waitUntil(lambda: cell(panel, run_id, "Status") == "done", timeout=10000)
    assert cell(panel, run_id, "Progress") == f"{DOCUMENTS} / {DOCUMENTS}"
    assert set(Counter(_document_of(r) for r in server.requests).values()) == {1}  # each sent once
    with Library.open(window.library.path) as lib:
        stored = lib.conn.execute("SELECT count(*), count(DISTINCT doc_key) FROM rationale_doc").fetchone()
        kind = lib.conn.execute("SELECT json_extract(spec, '$.kind') FROM run WHERE id = ?", (run_id,)).fetchone()[0]
    assert stored == (DOCUMENTS, DOCUMENTS) and kind == "rationale_extraction"
