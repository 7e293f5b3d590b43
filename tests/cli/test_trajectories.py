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
            assert all(c["score"] == 0 for c in step["candidates"])  # the echoed "echo 0: ..." reads as 0
    code, out, _ = run(capsys, "--library", str(library_path), "trajectories", "demo")
    assert code == 0 and out.count("step 2:") == 2 and out.count("   * [0.000]") == 4


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
