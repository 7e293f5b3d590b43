"""Runs started from the planner against real servers on 127.0.0.1, shown in the Runs tab:
progress, pause, resume, cancel, a server that is down, and other views being told."""

from __future__ import annotations

import pytest

from tests.helpers.servers import free_port
from tests.ui.generation.conftest import SERVER_KEY
from tests.ui.generation.test_planner import add_model, open_planner, wait_plan
from thoughtdesk.core.generation.runs import run_info
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.config import store_api_key
from thoughtdesk.ui.generation.run_table import RUN_COLUMNS


def start_from_planner(
    generation, qtbot, base_url: str, *, n: int = 1, attempts: int = 6, concurrency: int = 2, max_tokens: int = 16
) -> int:
    planner = open_planner(generation, qtbot)
    planner.models.form.max_tokens.setValue(max_tokens)
    planner.models.form.extraction_max_tokens.setValue(4)
    add_model(planner, base_url=base_url, model="gemma-test")
    planner.n.setValue(n)
    planner.attempts.setValue(attempts)
    planner.concurrency.setValue(concurrency)
    wait_plan(qtbot, planner)
    with qtbot.waitSignal(planner.run_created, timeout=10000) as created:
        planner.start_button.click()
    return created.args[0]


#: How long a paused run is watched for sends. "Nothing is sent while paused" has no state to
#: wait on; a worker that ignored the pause would claim a queued request at its next look at the
#: queue (every 50 ms), and a claim is counted in the library at once (request.attempts).
PAUSE_MS = 500


def sends(library_path, run_id: int) -> int:
    """How many times the run's requests were claimed to be sent (each claim adds an attempt)."""
    with Library.open(library_path) as lib:
        return lib.conn.execute(
            "SELECT coalesce(sum(attempts), 0) FROM request WHERE run_id = ?", (run_id,)
        ).fetchone()[0]


def cell(panel, run_id: int, column: str) -> str | None:
    """The text of a run's cell; None while the run list has not been re-read to include it."""
    row = panel.model.row_of(run_id)
    if row is None:
        return None
    return panel.model.data(panel.model.index(row, RUN_COLUMNS.index(column)))


def shown_cell(panel, run_id: int, column: str) -> str:
    """The text of a run's cell, which the run list shows by now."""
    text = cell(panel, run_id, column)
    assert text is not None, f"run {run_id} is not listed"
    return text


def test_run_from_planner_completes_and_shows_in_runs_panel(window, generation, qtbot, llama_server):
    store_api_key("openai", SERVER_KEY, llama_server.base_url)
    panel = generation.runs_panel
    changes = []
    window.data_changed.connect(lambda: changes.append(1))
    with qtbot.waitSignal(panel.run_ended, timeout=240000):
        run_id = start_from_planner(generation, qtbot, llama_server.base_url)
        assert window.tabs.currentWidget() is panel
        qtbot.waitUntil(lambda: panel.model.row_of(run_id) is not None, timeout=5000)
    qtbot.waitUntil(lambda: cell(panel, run_id, "Status") == "done", timeout=10000)
    assert cell(panel, run_id, "Progress") == "6 / 6"  # 3 samples x (CoT + extraction)
    assert cell(panel, run_id, "Done") == "6" and cell(panel, run_id, "Failed") == "0"
    assert int(shown_cell(panel, run_id, "Tokens").replace(",", "")) > 0
    assert changes, "other views were told that CoTs arrived"
    with Library.open(window.library.path) as lib:
        assert run_info(lib, run_id).done == 6
        cots = lib.conn.execute(
            "SELECT count(*) FROM generated_cot c JOIN sample s ON s.id = c.sample_pk WHERE s.dataset = 'lab_quiz'"
        ).fetchone()[0]
    assert cots == 3


def test_pause_resume_cancel_and_resume_to_the_end(window, generation, qtbot, llama_server):
    store_api_key("openai", SERVER_KEY, llama_server.base_url)
    panel = generation.runs_panel
    run_id = start_from_planner(generation, qtbot, llama_server.base_url, n=4, concurrency=1)
    worker = panel.workers[run_id]
    live = lambda: panel.model.live.get(run_id)  # noqa: E731 - reads as the value it names
    qtbot.waitUntil(lambda: live() is not None and live().done >= 1, timeout=120000)

    assert panel.pause_button.isEnabled()
    panel.pause_button.click()
    qtbot.waitUntil(lambda: live().status == "paused" and live().in_flight == 0, timeout=60000)
    paused_done, paused_sends = live().done, sends(window.library.path, run_id)
    qtbot.wait(PAUSE_MS)
    assert live().done == paused_done and sends(window.library.path, run_id) == paused_sends, (
        "nothing is sent while paused"
    )
    assert "paused" in shown_cell(panel, run_id, "Status")
    assert panel.start_button.isEnabled() and not panel.pause_button.isEnabled()

    panel.start_button.click()  # resume the paused worker
    qtbot.waitUntil(lambda: live().done > paused_done, timeout=60000)

    # With another tab shown, other views are told about new CoTs while the run goes on.
    window.tabs.setCurrentIndex(0)
    with qtbot.waitSignal(window.data_changed, timeout=30000):
        pass
    assert worker.isRunning()
    window.show_tab(panel)

    with qtbot.waitSignal(panel.run_ended, timeout=60000):
        panel.cancel_button.click()
    assert not worker.isRunning()
    qtbot.waitUntil(lambda: cell(panel, run_id, "Status") == "cancelled", timeout=10000)
    remaining = int(shown_cell(panel, run_id, "Remaining"))
    assert remaining > 0

    panel.select_run(run_id)
    assert panel.start_button.isEnabled() and not panel.cancel_button.isEnabled()
    with qtbot.waitSignal(panel.run_ended, timeout=300000):
        panel.start_button.click()  # a new worker resumes exactly the missing requests
    qtbot.waitUntil(lambda: cell(panel, run_id, "Status") == "done", timeout=10000)
    assert cell(panel, run_id, "Progress") == "24 / 24"
    with Library.open(window.library.path) as lib:
        per_request = lib.conn.execute(
            "SELECT count(*) FROM generated_cot c JOIN sample s ON s.id = c.sample_pk WHERE s.dataset = 'lab_quiz'"
        ).fetchone()[0]
    assert per_request == 12  # 3 samples x n=4, each stored once


def test_server_down_shows_a_message_naming_the_provider(window, generation, qtbot):
    panel = generation.runs_panel
    url = f"http://127.0.0.1:{free_port()}/v1"
    with qtbot.waitSignal(panel.run_ended, timeout=60000):
        run_id = start_from_planner(generation, qtbot, url, attempts=1)
    qtbot.waitUntil(lambda: cell(panel, run_id, "Status") == "failed", timeout=10000)
    panel.select_run(run_id)
    message = panel.message.text()
    assert message.startswith("openai:") and url in message and "start the server" in message
    qtbot.waitUntil(lambda: panel.failed.rowCount() >= 1, timeout=10000)
    assert "openai:" in panel.failed.item(0, 5).text()
    assert panel.start_button.isEnabled()  # resumable once the server is up
    with Library.open(window.library.path) as lib:
        assert run_info(lib, run_id).status == "failed"


def test_runs_tab_shortcut_and_menu(window, generation, qtbot):
    titles = [a.text() for a in window.menu("&Generate").actions()]
    assert titles == [
        "&Plan a run…",
        "&Critique…",
        "Re&vise from critiques…",
        "&Judge pairs…",
        "&Label steps by rollouts…",
        "Mine &rationales…",
        "&Fragments…",
        "&Runs\tCtrl+4",
    ]
    assert generation.action_plan.shortcut().toString() == "Ctrl+G"
    mining = generation.open_rationales_dialog()
    assert mining is not None and mining.isVisible() and mining.collection.count() >= 1
    mining.close()
    assert window.tabs.tabText(window.tabs.indexOf(generation.runs_panel)) == "Runs"
    editor = generation.open_fragment_editor()
    assert editor.isVisible() and len(editor.library) == len(generation.fragments)
    planner = generation.open_planner()
    editor.tabs.setCurrentIndex(1)
    editor.add_new(text="Answer: A trigger added while planning.", key="live-trigger")
    labels = [planner.lists["cot_trigger"].item(r).text() for r in range(planner.lists["cot_trigger"].count())]
    assert any(label.startswith("live-trigger") for label in labels)


def _core_run(window, model) -> int:
    """A run of the test split created through the core API (as the CLI would)."""
    from tests.ui.generation.conftest import COLLECTION
    from thoughtdesk.core.generation.runs import RunSpec, SampleSelection, create_run, plan_run

    spec = RunSpec(
        samples=SampleSelection(COLLECTION, splits=("test",)),
        models=(model,),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-A-D",),
    )
    with Library.open(window.library.path) as lib:
        return create_run(lib, plan_run(lib, spec))


def _start_and_fail(panel, qtbot, run_id: int) -> str:
    with qtbot.waitSignal(panel.run_ended, timeout=60000):
        panel.start_run(run_id)
    qtbot.waitUntil(lambda: cell(panel, run_id, "Status") == "failed", timeout=10000)
    panel.select_run(run_id)
    qtbot.waitUntil(lambda: "Start / Resume" in panel.message.text() or "resume" in panel.message.text(), timeout=10000)
    assert panel.start_button.isEnabled() and not panel.cancel_button.isEnabled()
    return panel.message.text()


def test_bad_input_messages_name_the_provider_and_the_run_stays_resumable(window, generation, qtbot, tmp_path):
    from tests.helpers.servers import FakeModelServer
    from thoughtdesk.core.generation.runs import ModelSpec

    panel = generation.runs_panel
    with FakeModelServer(api_key="sk-right", models=("known",)) as server:
        store_api_key("openai", "sk-wrong", server.base_url)
        wrong_key = _core_run(window, ModelSpec("openai", "known", base_url=server.base_url))
        message = _start_and_fail(panel, qtbot, wrong_key)
        assert message.startswith("openai: the API key was refused")
        assert "Settings > Providers" in message and "Start / Resume" in message
        assert "sk-wrong" not in message and "sk-right" not in message

        store_api_key("openai", "sk-right", server.base_url)
        unknown = _core_run(window, ModelSpec("openai", "nope", base_url=server.base_url))
        message = _start_and_fail(panel, qtbot, unknown)
        assert message.startswith("openai: model 'nope' was not found") and "check the model name" in message

        # The key is fixed: the stopped run resumes to the end from the same panel.
        panel.select_run(wrong_key)
        with qtbot.waitSignal(panel.run_ended, timeout=60000):
            panel.start_button.click()
        qtbot.waitUntil(lambda: cell(panel, wrong_key, "Status") == "done", timeout=10000)

    missing = tmp_path / "missing.gguf"
    message = _start_and_fail(panel, qtbot, _core_run(window, ModelSpec("llamacpp", str(missing))))
    assert message.startswith(f"llamacpp: model file {missing} does not exist")
    assert "put the file back at this path and resume" in message
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 a zip, not a model")
    message = _start_and_fail(panel, qtbot, _core_run(window, ModelSpec("llamacpp", str(not_gguf))))
    assert message.startswith(f"llamacpp: {not_gguf} is not a GGUF model file")
    assert "download the model's GGUF version" in message and "Start / Resume" in message


@pytest.mark.slow
def test_local_model_streams_its_text_into_the_runs_panel(window, generation, qtbot, gguf_model):
    pytest.importorskip("llama_cpp")
    from tests.ui.generation.conftest import COLLECTION
    from thoughtdesk.core.generation.prompts import PromptMode
    from thoughtdesk.core.generation.runs import ModelSpec, RunSpec, SampleSelection, create_run, plan_run

    panel = generation.runs_panel
    window.show_tab(panel)
    model = ModelSpec("llamacpp", str(gguf_model), max_tokens=24, n_ctx=512, seed=5)
    spec = RunSpec(
        samples=SampleSelection(COLLECTION, splits=("test",), limit=1),
        models=(model,),
        cot_triggers=("kojima-01",),
        mode=PromptMode.ONE_STEP,
    )
    with Library.open(window.library.path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    pieces: list[str] = []
    with qtbot.waitSignal(panel.run_ended, timeout=240000):
        worker = panel.start_run(run_id)
        worker.token.connect(pieces.append)
    assert worker.error == "" and cell(panel, run_id, "Done") == "1"
    assert len(pieces) > 1, "the text arrived piece by piece, not at the end"
    qtbot.waitUntil(lambda: panel.output.text.toPlainText() == "".join(pieces)[-20000:], timeout=5000)
    assert f"run {run_id}" in panel.output.title.text()
    with Library.open(window.library.path) as lib:
        stored = lib.conn.execute("SELECT cot FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()[0]
    assert stored == "".join(pieces)  # what was shown is what was stored


def test_an_empty_runs_tab_says_how_to_start_one(window, generation, qtbot):
    from thoughtdesk.core.generation.runs import ModelSpec

    panel = generation.runs_panel
    window.show_tab(panel)
    with qtbot.waitSignal(panel.runs_loaded, timeout=10000):
        panel.reload()
    assert panel.model.rowCount() == 0
    assert panel.empty_hint.isVisible() and "Plan a run" in panel.empty_hint.text()
    _core_run(window, ModelSpec("openai", "m", base_url=f"http://127.0.0.1:{free_port()}/v1"))
    with qtbot.waitSignal(panel.runs_loaded, timeout=10000):
        panel.reload()
    assert panel.model.rowCount() == 1 and not panel.empty_hint.isVisible()
    local_server = panel.model.runs[0].id
    assert cell(panel, local_server, "Cost") == "$0.0000"  # a server on this machine costs nothing
    # Nothing is sent below: the runs are only created and listed.
    _core_run(window, ModelSpec("openai", "m", base_url="https://llm.example.org/v1"))
    _core_run(window, ModelSpec("openai", "gpt-4o-mini"))
    with qtbot.waitSignal(panel.runs_loaded, timeout=10000):
        panel.reload()
    unknown, priced = sorted(r.id for r in panel.model.runs if r.id != local_server)
    assert cell(panel, unknown, "Cost") == "unpriced"  # no price for 'm' there: unknown, not $0
    assert cell(panel, priced, "Cost") == "$0.0000"
