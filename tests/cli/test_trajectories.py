"""``thoughtdesk generate --guide`` and ``thoughtdesk trajectories``: the JSON shape the issue
names, the text form, and guide options that cannot work refused with a one-line message."""

from __future__ import annotations

import json

from thoughtdesk.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_guided_generate_then_trajectories_json(capsys, library_path, fake_server):
    code, out, err = run(
        capsys,
        "--library",
        str(library_path),
        "generate",
        "demo",
        "--model",
        "openai:agent",
        "--base-url",
        fake_server.base_url,
        "--guide",
        "process",
        "--rater-model",
        "openai:rater",
        "--candidates",
        "2",
        "--max-steps",
        "2",
        "--dataset",
        "med_qa",
        "--limit",
        "2",
    )
    assert code == 0, err
    assert "2 guided CoT(s) (process: up to 2 steps of 2 candidate(s))" in err
    code, out, err = run(capsys, "--library", str(library_path), "trajectories", "demo", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == ["trajectories"] and len(data["trajectories"]) == 2
    for trajectory in data["trajectories"]:
        assert {"sample_id", "steps"} <= set(trajectory)
        assert len(trajectory["steps"]) == 2  # the echo server never states an answer: the step limit
        for step in trajectory["steps"]:
            assert set(step) == {"rationale", "candidates", "chosen"}
            assert [set(c) for c in step["candidates"]] == [{"text", "score"}] * 2
            assert step["chosen"] in [c["text"] for c in step["candidates"]]
            # the rater's echoed "echo 0: Here is ... 0 (wrong or useless) to 3 ..." holds no single
            # 0-3 rating: no score (its first digit 0-3 was read as a rating of 0)
            assert all(c["score"] is None for c in step["candidates"])
    code, out, _ = run(capsys, "--library", str(library_path), "trajectories", "demo")
    assert code == 0 and out.count("step 2:") == 2 and out.count('   * [no rating in "echo 0: ') == 4
    assert "8 rater repl(ies) held no 0-3 rating" in out


def test_trajectories_of_a_collection_without_guided_cots(capsys, library_path):
    code, out, _ = run(capsys, "--library", str(library_path), "trajectories", "demo", "--json")
    assert code == 0 and json.loads(out) == {"trajectories": []}
    code, out, _ = run(capsys, "--library", str(library_path), "trajectories", "demo")
    assert "no guided CoTs" in out


def test_guide_options_that_cannot_work_are_refused_in_one_line(capsys, library_path):
    code, _, err = run(
        capsys, "--library", str(library_path), "generate", "demo", "--model", "openai:m", "--guide", "rationalyst"
    )
    assert code != 0 and "--guide rationalyst needs --rationale-model" in err and "Traceback" not in err
    code, _, err = run(
        capsys, "--library", str(library_path), "generate", "demo", "--model", "openai:m", "--rater-model", "openai:r"
    )
    assert code != 0 and "--rater-model needs --guide" in err
    _, out, _ = run(capsys, "--library", str(library_path), "runs", "--json")
    assert json.loads(out) == []  # nothing created


def test_generate_says_what_a_local_scorer_costs_before_loading_it(capsys, library_path, gguf_model):
    """Point 1 of issue 14: `generate --guide rationalyst` names the scoring copy's memory
    before anything loads (here with --plan-only: nothing loads or is sent at all)."""
    model = f"llamacpp:{gguf_model}"
    argv = ["--library", str(library_path), "generate", "demo", "--model", model, "--guide", "rationalyst"]
    code, _, err = run(capsys, *argv, "--rationale-model", model, "--limit", "1", "--plan-only")
    assert code == 0, err
    lines = err.splitlines()
    (scorer,) = [line for line in lines if line.startswith("thoughtdesk: scorer ")]
    assert "scores text exactly in-process" in scorer and "scoring needs about 2.7 GB more memory" in scorer
    assert lines.index(scorer) < next(i for i, line in enumerate(lines) if "guided CoT(s)" in line)


def test_generate_refuses_a_scorer_server_that_ignores_echo_before_writing_a_run(capsys, library_path, fake_server):
    from tests.ui.generation.test_guide_panel import _no_echo

    fake_server.responder = _no_echo
    code, _, err = run(
        capsys,
        "--library",
        str(library_path),
        "generate",
        "demo",
        "--model",
        "openai:agent",
        "--base-url",
        fake_server.base_url,
        "--guide",
        "rationalyst",
        "--rationale-model",
        "openai:rationale",
    )
    assert code != 0 and "cannot score text: the server answered without the prompt's log-probs" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 2  # the scorer line, then the refusal
    assert [r.json["echo"] for r in fake_server.requests] == [True]  # one probe
    _, out, _ = run(capsys, "--library", str(library_path), "runs", "--json")
    assert json.loads(out) == []  # no run written
