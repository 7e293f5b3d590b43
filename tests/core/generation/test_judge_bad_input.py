"""Bad input to pairwise judging (issue 26, point 7): a judge answering both [[A]] and [[B]],
nothing, or 10 MB; a sample with one CoT; a condition with no CoTs. Each ends in a clear
outcome (a verdict counted as unparseable with why, a failed request with one line) or one
clear error, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.generation.test_judge_runs import _count, _plan_and_create, judge_model
from tests.helpers.judge_servers import JudgeServer
from tests.helpers.libraries import DEMO, demo_library
from thoughtdesk.cli.main import main
from thoughtdesk.core.generation.runs import (
    CotSelection,
    JudgeSpec,
    RunLimits,
    RunSpecError,
    execute_run,
    plan_judge_run,
)
from thoughtdesk.core.judges.analysis import analyse_judgements
from thoughtdesk.core.library.store import Library

GSM8K = CotSelection(DEMO, datasets=("gsm8k",))  # 5 samples, one with 3 CoTs: 7 pairs, 14 requests


@pytest.fixture
def library_path(tmp_path: Path) -> Path:
    return demo_library(tmp_path / "library.thoughtdesk")


def _reasons(path: Path) -> list[tuple[str, str]]:
    with Library.open(path) as lib:
        return lib.conn.execute("SELECT verdict, coalesce(reason, '') FROM judge_verdict ORDER BY id").fetchall()


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("A is better: [[A]]. No wait, [[B]].", "answers [[A]] and [[B]]: more than one verdict"),
        ("", "the judge answered nothing"),
        ("I cannot decide.", "no verdict [[A]], [[B]] or [[C]] found"),
    ],
)
def test_an_unreadable_verdict_is_stored_and_counted_as_unparseable_never_a_win(library_path, answer, reason):
    with JudgeServer(lambda a, b: answer) as server:
        run_id = _plan_and_create(library_path, JudgeSpec(GSM8K, (judge_model(server),)))
        final = execute_run(library_path, run_id, limits=RunLimits(max_attempts=1))
    assert final.status == "done" and final.done == 14 and final.failed == 0  # answered: not retried for ever
    assert _reasons(library_path) == [("unparseable", reason)] * 14
    with Library.open(library_path) as lib:
        figures = analyse_judgements(lib, DEMO, n_resamples=0)
    (judge,) = figures.judges
    assert judge.unparseable == 14 and judge.pairs == 7 and judge.ties == 0
    assert judge.position_consistency is None and judge.first_position_rate is None
    assert figures.conditions == []  # no pair decided: no wins, no strengths


def test_a_ten_megabyte_answer_fails_its_request_with_one_line_or_is_read_when_allowed(library_path):
    big = "x" * 10_000_000 + " [[B]]"
    with JudgeServer(lambda a, b: big) as server:
        # max tokens 64: the answer is far past the bound a request allows; the request fails
        # with the limit named, nothing half-stored, and the run says resume retries it.
        run_id = _plan_and_create(library_path, JudgeSpec(GSM8K, (judge_model(server),), limit=1))
        final = execute_run(library_path, run_id, limits=RunLimits(max_attempts=1))
        assert final.status == "failed" and final.failed == 2
        with Library.open(library_path) as lib:
            errors = [row[0] for row in lib.conn.execute("SELECT error FROM request WHERE run_id = ?", (run_id,))]
        assert errors and all(e and "\n" not in e and "bytes allowed" in e for e in errors), errors
        assert _count(library_path, "SELECT count(*) FROM judge_verdict") == 0
        # A judge allowed that many tokens: the answer is stored whole and its verdict read.
        roomy = judge_model(server, "roomy")
        roomy = type(roomy)(**{**{f: getattr(roomy, f) for f in roomy.__dataclass_fields__}, "max_tokens": 100_000})
        run_id = _plan_and_create(library_path, JudgeSpec(GSM8K, (roomy,), limit=1))
        assert execute_run(library_path, run_id).status == "done"
    assert _reasons(library_path) == [("B", ""), ("B", "")]
    assert _count(library_path, "SELECT max(length(raw_text)) FROM judge_verdict") == len(big)


def test_samples_with_one_cot_are_left_out_and_said_and_none_to_pair_is_one_clear_error(library_path):
    with JudgeServer(lambda a, b: "[[A]]") as server, Library.open(library_path) as lib:
        model = (judge_model(server),)
        plan = plan_judge_run(lib, JudgeSpec(CotSelection(DEMO, only="correct"), model))
        assert plan.single_cot_samples > 0 and "with fewer than two CoTs to pair left out" in plan.summary()
        one = lib.conn.execute("SELECT id FROM generated_cot ORDER BY id LIMIT 1").fetchone()[0]
        with pytest.raises(RunSpecError, match="no pairs to judge .* fewer than two CoTs"):
            plan_judge_run(lib, JudgeSpec(CotSelection(DEMO, cot_pks=(one,)), model))


def test_on_the_command_line_a_condition_without_cots_is_one_line(library_path, capsys):
    code = main(
        [
            "--library",
            str(library_path),
            "judge",
            DEMO,
            "--pairwise",
            "--model",
            "openai:j",
            "--conditions",
            "gpt-4o-mini,nobody",
            "--plan-only",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code != 0 and err.count("\n") == 0 and "Traceback" not in err
    assert "'nobody' have no CoTs" in err
