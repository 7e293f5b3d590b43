"""``generate`` refused before a run is written, ``runs --rename/--delete`` (issue 16, point 8)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.libraries import DEMO
from thoughtdesk.cli.main import main
from thoughtdesk.core.generation.runs import ModelSpec, RunSpec, SampleSelection, create_run, list_runs, plan_run
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings import network


@pytest.fixture
def restore_online():
    yield
    network.set_offline(False)
    network.clear_override()


def runs(path) -> list:
    with Library.open(path) as lib:
        return list_runs(lib)


@pytest.mark.parametrize(
    "model, words",
    [
        ("openai:gpt-4o-mini", "offline mode is on: the openai API (model gpt-4o-mini) needs the network"),
        ("llamacpp:/no/such/gema-3-270m.gguf", "model file /no/such/gema-3-270m.gguf does not exist"),
    ],
)
def test_a_refused_run_is_not_left_behind(library_path, capsys, restore_online, model, words):
    code = main(["--library", str(library_path), "--offline", "generate", DEMO, "--model", model, "--limit", "1"])
    assert code == 1
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
    assert runs(library_path) == []


def test_rename_and_delete_from_the_command_line(library_path, capsys, restore_online):
    base = ["--library", str(library_path)]
    assert (
        main(
            [
                *base,
                "generate",
                DEMO,
                "--model",
                "openai:m",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--limit",
                "1",
                "--max-attempts",
                "1",
                "--name",
                "try",
            ]
        )
        == 1
    )  # nothing listens on port 9
    (run,) = runs(library_path)
    capsys.readouterr()
    assert main([*base, "runs", "--rename", "try", "baseline", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"run": run.id, "renamed": "baseline"}
    assert runs(library_path)[0].name == "baseline"
    assert main([*base, "runs", "--delete", "baseline"]) == 0
    assert f"run {run.id} deleted" in capsys.readouterr().out
    assert runs(library_path) == []
    assert main([*base, "runs", "--delete", "baseline"]) == 1
    assert "no run 'baseline'" in capsys.readouterr().err


def test_resume_is_refused_before_it_touches_the_run(library_path, capsys, restore_online):
    base = ["--library", str(library_path)]
    with Library.open(library_path) as lib:  # a run written earlier, while online
        spec = RunSpec(samples=SampleSelection(DEMO, limit=1), models=(ModelSpec("openai", "gpt-4o-mini"),))
        run_id = create_run(lib, plan_run(lib, spec))
    before = runs(library_path)[0]
    capsys.readouterr()
    assert main([*base, "--offline", "resume", str(run_id)]) == 1
    assert "offline mode is on" in capsys.readouterr().err
    after = runs(library_path)[0]
    assert (after.status, after.last_error, after.done) == (before.status, before.last_error, before.done)


def test_a_misspelled_model_is_refused_before_a_run_is_written(library_path, capsys, restore_online):
    """Audit of issue 16, point 8: a typo in the model (the server answering 404 model_not_found)
    left a failed run behind, and the message said to resume it, which cannot fix a stored model."""
    from tests.helpers.servers import FakeModelServer

    with FakeModelServer(models=("gpt-4o-mini", "gpt-4o")) as server:
        code = main(
            ["--library", str(library_path), "generate", DEMO, "--model", "openai:gpt-4o-mnii"]
            + ["--base-url", server.base_url, "--limit", "1"]
        )
        assert not server.requests  # nothing generated: one GET of the model list
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    assert "has no model 'gpt-4o-mnii'; did you mean 'gpt-4o-mini'" in err and "resume" not in err
    assert runs(library_path) == []


def test_a_run_whose_model_is_not_found_says_start_a_new_run_not_resume(library_path, capsys, restore_online):
    """Where the server cannot be asked first (no model list), the run is written and fails at its
    first requests; then the message says what helps: a new run with the right model, and how to
    delete this empty one."""
    from tests.helpers.servers import FakeModelServer

    with FakeModelServer(models=("served",), list_models=False) as server:
        code = main(
            ["--library", str(library_path), "generate", DEMO, "--model", "openai:typo"]
            + ["--base-url", server.base_url, "--limit", "1", "--one-step"]
        )
    err = capsys.readouterr().err
    (run,) = runs(library_path)
    assert code == 1 and run.status == "failed" and run.done == 0
    last = err.strip().splitlines()[-1]
    assert "model 'typo' was not found (HTTP 404)" in last
    assert f"run {run.id} has no answers and cannot be resumed with another model" in last
    assert "start a new run with the right model name" in last and f"thoughtdesk runs --delete {run.id}" in last
    assert "fix this, then `thoughtdesk resume" not in err
