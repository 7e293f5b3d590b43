"""An automatic step label run (Math-Shepherd rollouts, issue 25) in the Runs tab: listed with its
kind, paused (nothing sent while paused), resumed to the end, each step's rollouts asked once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_autolabel import Completer
from tests.helpers.servers import Reply
from tests.ui.generation.test_runs_panel import cell, shown_cell
from thoughtdesk.core.generation.runs import ModelSpec, RunLimits
from thoughtdesk.core.generation.runs.kind_specs import AutolabelSpec
from thoughtdesk.core.generation.runs.rollouts import create_autolabel_run, plan_autolabel_run
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.store import StepTarget, review_of

STEPS = ["Tom has 3 apples.", "He buys 4 more.", "So 3 + 4 = 7.", "Check: 7 - 4 = 3.", "The answer is 7."]


def _collection(path: Path) -> Path:
    sample = {
        "id": "q1", "ref_id": "", "question": "Tom has 3 apples and buys 4. How many?", "type": "number",
        "choices": [], "context": "", "cot": [], "answer": ["7"], "feedback": [],
        "generated_cot": [
            {"id": "c1", "fragments_version": "", "instruction": None, "cot_trigger": None, "cot_trigger_template": "",
             "prompt_text": "", "cot": "\n\n".join(STEPS), "answers": [], "author": "", "date": "",
             "api_service": "", "model": "student", "comment": "", "annotations": []}
        ],
    }  # fmt: skip
    path.write_text(json.dumps({"toy": {"test": [sample]}}))
    return path


def test_an_autolabel_run_is_listed_paused_and_resumed_in_the_runs_tab(window, generation, qtbot, tmp_path) -> None:
    panel = generation.runs_panel
    path = window.library.path
    with Library.open(path) as lib:
        import_thoughtsource(lib, _collection(tmp_path / "toy.json"), collection="toy")
    with Completer() as server:
        server.responder = lambda _record: Reply(delay=0.3)  # the normal answer, a little later
        spec = AutolabelSpec("toy", (ModelSpec("openai", "completer", base_url=server.base_url, chat=True),), k=4)
        with Library.open(path) as lib:
            plan = plan_autolabel_run(lib, spec)
            assert plan.total == len(STEPS) and plan.cots == 1
            run_id = create_autolabel_run(lib, plan)
        live = lambda: panel.model.live.get(run_id)  # noqa: E731 - reads as the value it names
        panel.start_run(run_id, RunLimits(concurrency=1))
        qtbot.waitUntil(lambda: cell(panel, run_id, "Run") is not None, timeout=10000)
        assert shown_cell(panel, run_id, "Run").endswith("[autolabel]")
        qtbot.waitUntil(lambda: live() is not None and live().done >= 1, timeout=30000)
        panel.pause_button.click()
        qtbot.waitUntil(lambda: live().status == "paused" and live().in_flight == 0, timeout=30000)
        paused_done = live().done
        assert paused_done < len(STEPS)
        sent = len(server.requests)
        qtbot.wait(800)  # (a pause holds: nothing to wait on but time passing)
        assert live().done == paused_done and len(server.requests) == sent, "nothing is sent while paused"
        with qtbot.waitSignal(panel.run_ended, timeout=60000):
            panel.start_button.click()
        qtbot.waitUntil(lambda: cell(panel, run_id, "Status") == "done", timeout=10000)
        assert shown_cell(panel, run_id, "Progress") == f"{len(STEPS)} / {len(STEPS)}"
        prompts = [r.json["messages"][-1]["content"] for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(prompts) == len(set(prompts)) == len(STEPS)  # each step's rollouts asked once
    with Library.open(path) as lib:
        cot_pk, sample_pk = lib.conn.execute(
            "SELECT c.id, c.sample_pk FROM generated_cot c JOIN sample s ON s.id = c.sample_pk WHERE s.dataset = 'toy'"
        ).fetchone()
        review = review_of(lib.conn, StepTarget(sample_pk, cot_pk), "completer rollouts")
    assert review is not None and [x.rating for x in review.labels] == [1] * len(STEPS)
