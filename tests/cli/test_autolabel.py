"""``thoughtdesk autolabel``: Math-Shepherd step labels from a deterministic completer on
127.0.0.1 (hard: any rollout reaches the gold answer; soft: the share), stored as the model's
labels, resumable, and compared with a reviewer's by ``agreement --steps --models``."""

from __future__ import annotations

import json

from tests.cli.test_cli import run
from tests.helpers.servers import FakeModelServer, Recorded, Reply
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.split import cot_steps
from thoughtdesk.core.steps.store import StepLabel, StepReview, StepTarget, put_review, review_of

COT = "Tom has 3 apples.\n\nHe buys 4 more: 3 + 4 = 8, a wrong sum.\n\nThe answer is 8."


class Completer(FakeModelServer):
    """Continues a solution: after a prefix holding "wrong", every rollout ends at 8; before it,
    the first of the n rollouts reaches 7 and the others 9."""

    def _normal(self, record: Recorded, anthropic: bool) -> Reply:
        payload = record.json
        prompt = payload["messages"][-1]["content"]
        n = int(payload.get("n", 1))
        prefix = prompt.split("Solution so far:\n", 1)[1]
        texts = (
            ["So the answer is 8."] * n if "wrong" in prefix else ["The answer is 7."] + ["The answer is 9."] * (n - 1)
        )
        choices = [
            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
            for i, t in enumerate(texts)
        ]
        usage = {"prompt_tokens": 50, "completion_tokens": 6 * n, "total_tokens": 50 + 6 * n}
        return Reply(
            200, {"id": "r", "object": "chat.completion", "model": "completer", "choices": choices, "usage": usage}
        )


def collection(path) -> None:
    sample = {
        "id": "q1", "ref_id": "", "question": "Tom has 3 apples and buys 4. How many?", "type": "number",
        "choices": [], "context": "", "cot": [], "answer": ["7"], "feedback": [],
        "generated_cot": [
            {"id": "c1", "fragments_version": "", "instruction": None, "cot_trigger": None, "cot_trigger_template": "",
             "prompt_text": "", "cot": COT, "answers": [], "author": "", "date": "", "api_service": "",
             "model": "student", "comment": "", "annotations": []}
        ],
    }  # fmt: skip
    path.write_text(json.dumps({"toy": {"test": [sample]}}))


def test_rollout_labels_hard_and_soft_resumable_and_compared(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    collection(tmp_path / "toy.json")
    assert run("import", tmp_path / "toy.json", "--collection", "toy", library=lib).returncode == 0
    with Completer() as server:
        args = ("autolabel", "toy", "--model", "openai:completer", "--base-url", server.base_url, "--k", "4", "--json")
        result = run(*args, library=lib)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["labelled"] == 1
        assert len(server.requests) == 3 and all(r.json["n"] == 4 for r in server.requests)
        again = run(*args, library=lib)  # resumed: the labelled CoT is not asked again
        assert json.loads(again.stdout)["skipped"] == 1 and len(server.requests) == 3
    with Library.open(lib) as opened:
        cot_pk, sample_pk = opened.conn.execute("SELECT id, sample_pk FROM generated_cot").fetchone()
        target = StepTarget(sample_pk, cot_pk)
        review = review_of(opened.conn, target, "completer rollouts")
        assert review is not None and review.kind == "model"
        assert [x.rating for x in review.labels] == [1, -1, -1]
        assert [x.extra["soft"] for x in review.labels] == [0.25, 0.0, 0.0]  # type: ignore[index]
        steps = cot_steps(COT)
        assert [x.step_id for x in review.labels] == [s.id for s in steps]
        with opened.transaction() as conn:
            human = tuple(StepLabel(s.index, s.id, r) for s, r in zip(steps, [1, -1, 1], strict=True))
            put_review(conn, target, "ann", StepReview("ann", human, first_error=1))
    compared = run("agreement", "toy", "--steps", "--models", "--json", library=lib)
    data = json.loads(compared.stdout)
    assert data["raters"] == ["ann", "completer rollouts"] and data["steps"] == 3
    assert abs(data["step_agreement"] - 200 / 3) < 1e-9
    humans_only = json.loads(run("agreement", "toy", "--steps", "--json", library=lib).stdout)
    assert humans_only["raters"] == ["ann"] and humans_only["steps"] == 0


def test_autolabel_is_a_run_planned_listed_and_resumed_exactly_once(tmp_path) -> None:
    """Issue 25: the labelling is a run of the run engine: --plan-only gives its requests, tokens
    and cost and sends nothing; the run is listed by `thoughtdesk runs` as an autolabel run; a
    stopped run keeps the labels of the steps done and `thoughtdesk resume` sends only the rest,
    each step's rollouts asked once."""
    lib = tmp_path / "lib.thoughtdesk"
    collection(tmp_path / "toy.json")
    assert run("import", tmp_path / "toy.json", "--collection", "toy", library=lib).returncode == 0
    with Completer() as server:
        base = ("autolabel", "toy", "--model", "openai:completer", "--base-url", server.base_url, "--k", "4")
        planned = run(*base, "--plan-only", library=lib)
        assert planned.returncode == 0, planned.stderr
        assert "3 rollout request(s): every step of 1 CoT(s) of 'toy', 4 rollout(s) each" in planned.stderr
        assert "completion tokens; cost" in planned.stderr
        assert "Solution so far:\nTom has 3 apples." in planned.stdout  # the exact first prompt
        assert server.requests == []  # planning sends nothing
        with Library.open(lib) as opened:
            assert opened.conn.execute("SELECT count(*) FROM run").fetchone()[0] == 0

        def failing(record: Recorded) -> Reply | None:  # the steps after the first: a server error
            if "/chat/completions" in record.path and "wrong" in record.json["messages"][-1]["content"]:
                return Reply(500, {"error": {"message": "overloaded"}})
            return None

        server.responder = failing
        stopped = run(*base, "--max-attempts", "1", "--json", library=lib)
        assert stopped.returncode != 0
        outcome = json.loads(stopped.stdout)
        run_id = outcome["run"]
        assert outcome["done"] == 1 and outcome["failed"] == 2 and outcome["labelled"] == 0 and outcome["steps"] == 1
        assert f"thoughtdesk resume {run_id}" in stopped.stderr
        with Library.open(lib) as opened:
            cot_pk, sample_pk = opened.conn.execute("SELECT id, sample_pk FROM generated_cot").fetchone()
            part = review_of(opened.conn, StepTarget(sample_pk, cot_pk), "completer rollouts")
            assert part is not None and [(x.step, x.rating) for x in part.labels] == [(0, 1)]
        listed = run("runs", library=lib)
        assert f"{run_id}\tautolabel\t" in listed.stdout and "1/3 done, 2 failed" in listed.stdout

        server.responder = None
        resumed = run("resume", str(run_id), "--json", library=lib)
        assert resumed.returncode == 0, resumed.stderr
        outcome = json.loads(resumed.stdout)
        assert outcome["status"] == "done" and outcome["done"] == 3 and outcome["failed"] == 0
        assert outcome["parsed"] == "3 step(s) of 1 CoT(s) labelled: 1 +1, 2 -1"
        prompts = [r.json["messages"][-1]["content"] for r in server.requests if "/chat/completions" in r.path]
        first = [p for p in prompts if "wrong" not in p]
        assert len(first) == 1 and len(prompts) == 5  # step 1 once; steps 2 and 3 failed once, then sent again
        again = run(*base, "--json", library=lib)  # a new labelling: the CoT is labelled, nothing is sent
        assert json.loads(again.stdout)["skipped"] == 1 and len(server.requests) == len(prompts)
    with Library.open(lib) as opened:
        review = review_of(opened.conn, StepTarget(sample_pk, cot_pk), "completer rollouts")
        assert review is not None and review.kind == "model" and (review.extra or {})["run_id"] == run_id
        assert [x.rating for x in review.labels] == [1, -1, -1]
        assert [x.extra["soft"] for x in review.labels] == [0.25, 0.0, 0.0]  # type: ignore[index]
        done = opened.conn.execute("SELECT count(*) FROM request WHERE run_id = ? AND status = 'done'", (run_id,))
        assert done.fetchone()[0] == 3
