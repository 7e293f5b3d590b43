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


def test_judgements_json_compares_stored_pairwise_judges_with_human_preferences(library_path, capsys):
    # Humans prefer the right answer on every pair the right-answer judge decides: it agrees with
    # them throughout; the first-shown judge's every verdict flipped, so it says "tie" to them all.
    with first_judge() as a, right_answer_judge(correct_texts(library_path)) as b:
        for server, name in ((a, "first"), (b, "right")):
            assert (
                _run(
                    library_path,
                    "judge",
                    DEMO,
                    "--pairwise",
                    "--model",
                    f"openai:{name}",
                    "--base-url",
                    server.base_url,
                )
                == 0
            )
    capsys.readouterr()
    with Library.open(library_path) as lib, lib.transaction() as conn:
        conn.execute(
            "INSERT INTO pairwise_preference (sample_pk, first_cot_pk, second_cot_pk, preferred_cot_pk, author, date, "
            "blind) SELECT sample_pk, min(first_cot_pk, second_cot_pk), max(first_cot_pk, second_cot_pk), "
            "preferred_cot_pk, 'ana', '2026-11-28T10:00:00Z', 1 FROM judge_verdict "
            "WHERE judge_model = 'right' AND verdict != 'tie' AND first_cot_pk < second_cot_pk"
        )
    assert _run(library_path, "judgements", DEMO, "--json", "--resamples", "0") == 0
    humans = json.loads(capsys.readouterr().out)["human_agreement"]
    assert humans["human_pairs"] > 0 and humans["reviewers"] == ["ana"]
    pairwise = {j["judge"]: j for j in humans["judges"] if j["kind"] == "pairwise"}
    assert pairwise["right"]["accuracy"] == 1.0 and pairwise["right"]["version"].startswith("td-pairwise-v1@")
    assert pairwise["first"]["accuracy"] == 0.0 and pairwise["first"]["n_disagreements"] == humans["human_pairs"]
