"""``thoughtdesk critique --preset processbench``: ProcessBench's step-judge template sent to a
deterministic judge server, its last \\boxed{} stored as the judge's first error, and
``critiques --json`` scoring the judge the way ProcessBench does."""

from __future__ import annotations

import json

from tests.cli.test_cli import run
from tests.helpers.paths import FIXTURES
from tests.helpers.servers import StepJudgeServer
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.judge import parse_first_error, score, tagged_response
from thoughtdesk.core.steps.store import StepTarget, review_of

PROCESSBENCH = FIXTURES / "steps" / "gsm8k.json"


def test_parser_takes_the_last_box_and_never_guesses():
    assert parse_first_error("first \\boxed{-1} then \\boxed{ 2 }", 4).index == 2
    assert parse_first_error("\\boxed{-1}", 4).index == -1
    for text, reason in [
        ("no box here", "no \\boxed{} answer"),
        ("\\boxed{two}", "is not an index"),
        ("\\boxed{4}", "4 is outside -1..3"),
        ("\\boxed{-2}", "outside"),
    ]:
        verdict = parse_first_error(text, 4)
        assert verdict.index is None and reason in verdict.reason


def test_processbench_metric():
    result = score([(-1, -1), (0, 0), (3, None), (2, 1), (-1, 0)])
    assert (result.n, result.n_error, result.n_correct, result.unparseable) == (5, 3, 2, 1)
    assert result.error_accuracy == 1 / 3 and result.correct_accuracy == 0.5
    assert abs(result.f1 - 2 * (1 / 3) * 0.5 / (1 / 3 + 0.5)) < 1e-12  # type: ignore[operator]
    assert [-1, 0, 1] in result.confusion and [3, None, 1] in result.confusion


def test_critique_preset_processbench_end_to_end(tmp_path):
    lib = tmp_path / "lib.thoughtdesk"
    records = json.loads(PROCESSBENCH.read_text())
    records[2]["steps"][1] = "This one is undecidable."
    records[2]["label"] = 1
    source = tmp_path / "gsm8k.json"
    source.write_text(json.dumps(records))
    assert run("import", source, "--collection", "pb", library=lib).returncode == 0
    with StepJudgeServer() as server:
        result = run(
            "critique", "pb", "--model", "openai:step-judge", "--base-url", server.base_url, "--preset", "processbench",
            library=lib,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        prompts = [r.json["messages"] for r in server.requests]
    assert len(prompts) == 3 and all(len(m) == 1 and m[0]["role"] == "user" for m in prompts)
    # The three requests run concurrently: they arrive in any order.
    first = next(m[0]["content"] for m in prompts if "Tom has 3 apples" in m[0]["content"])
    assert first.startswith("The following is a math problem and a solution (split into paragraphs")
    assert "[Math Problem]\n\nTom has 3 apples" in first
    assert tagged_response(records[0]["steps"]) in first and first.endswith("in \\boxed{}.")
    with Library.open(lib) as opened:
        cots = opened.conn.execute("SELECT id, sample_pk FROM generated_cot ORDER BY id").fetchall()
        judged = [review_of(opened.conn, StepTarget(s, c), "step-judge") for c, s in cots]
    assert [r.first_error for r in judged] == [-1, 0, None]  # type: ignore[union-attr]
    assert all(r.kind == "model" for r in judged)  # type: ignore[union-attr]
    assert "unparseable" in judged[2].extra  # type: ignore[union-attr, operator]

    result = run("critiques", "pb", "--json", library=lib)
    assert result.returncode == 0, result.stderr
    model = json.loads(result.stdout)["critique_models"][0]
    assert model["model"] == "step-judge"
    process = model["process"]
    assert {k: process[k] for k in ("n", "unparseable", "error_accuracy", "correct_accuracy")} == {
        "n": 3,
        "unparseable": 1,
        "error_accuracy": 0.5,
        "correct_accuracy": 1.0,
    }
    assert abs(process["f1"] - 2 / 3) < 1e-12
    assert process["confusion"] == [[-1, -1, 1], [0, 0, 1], [1, None, 1]]
