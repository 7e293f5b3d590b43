"""``thoughtdesk judge --pairwise`` and ``thoughtdesk judgements`` (issue 26, points 1 and 2)."""

from __future__ import annotations

import json

import pytest

from tests.core.generation.test_judge_runs import REQUESTS, correct_texts
from tests.helpers.judge_servers import first_judge, right_answer_judge
from tests.helpers.libraries import DEMO
from thoughtdesk.cli.main import main
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import CONFIG_DIR_ENV


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv(CONFIG_DIR_ENV, str(folder))
    return folder


def _run(library_path, *args: str) -> int:
    return main(["--library", str(library_path), *args])


def test_plan_only_prints_pairs_cost_and_both_orders_prompts_and_sends_nothing(library_path, capsys):
    with first_judge() as server:
        code = _run(
            library_path,
            "judge",
            DEMO,
            "--pairwise",
            "--model",
            "openai:j",
            "--base-url",
            server.base_url,
            "--plan-only",
        )
        out, err = capsys.readouterr()
        assert code == 0, err and server.requests == []
    assert (
        "36 judge request(s): 18 pair(s) of CoTs of 16 sample(s), both orders" in err and "cost at most $0.0000" in err
    )
    assert "--- judge |" in out and "td-pairwise-v1 (A first)" in out and "td-pairwise-v1 (swapped)" in out
    with Library.open(library_path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM run").fetchone()[0] == 0


def test_judge_run_then_judgements_json_and_runs_list_it(library_path, capsys):
    with first_judge() as a, right_answer_judge(correct_texts(library_path)) as b:
        for server, name in ((a, "first"), (b, "right")):
            code = _run(
                library_path, "judge", DEMO, "--pairwise", "--model", f"openai:{name}", "--base-url", server.base_url
            )
            out, err = capsys.readouterr()
            assert code == 0, err
            assert f"{REQUESTS} done" in out
            if name == "first":
                assert "36 verdict(s): 36 A, 0 B, 0 tie, 0 unparseable" in out
    assert _run(library_path, "judgements", DEMO, "--json", "--resamples", "20") == 0
    figures = json.loads(capsys.readouterr().out)
    judges = {j["model"]: j for j in figures["judges"]}
    assert judges["first"]["position_consistency"] == 0.0 and judges["first"]["first_position_rate"] == 1.0
    assert judges["right"]["position_consistency"] == 1.0
    for key in ("model", "pairs", "position_consistency", "first_position_rate", "ties", "unparseable"):
        assert key in judges["first"]
    condition = figures["conditions"][0]
    assert {"judge", "condition", "wins", "losses", "ties", "strength", "low", "high"} <= set(condition)
    assert _run(library_path, "runs") == 0
    assert "\tjudge\t" in capsys.readouterr().out
    assert _run(library_path, "judgements", DEMO) == 0
    assert "position_consistency" in capsys.readouterr().out


def test_without_pairwise_or_verdicts_one_clear_line(library_path, capsys):
    assert _run(library_path, "judge", DEMO, "--model", "openai:j", "--plan-only") == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "add --pairwise" in err
    assert _run(library_path, "judgements", DEMO, "--json") == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["judges"] == [] and "has no pairwise verdicts" in captured.err
