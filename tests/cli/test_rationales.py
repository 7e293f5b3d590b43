"""``thoughtdesk logprobs`` and ``thoughtdesk rationales extract|filter|export`` end to end,
against a local fake server (and the small model for ``logprobs --json``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.rationales.test_mining import rewriting
from tests.helpers.libraries import DEMO
from tests.helpers.servers import FakeModelServer
from thoughtdesk.cli.main import main
from thoughtdesk.core.paths import CONFIG_DIR_ENV


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv(CONFIG_DIR_ENV, str(folder))
    return folder


def _run(library_path, *args: str) -> int:
    return main(["--library", str(library_path), *args])


def test_logprobs_json_from_an_echo_server(library_path, fake_server: FakeModelServer, capsys) -> None:
    code = _run(
        library_path,
        "logprobs",
        "--model",
        "openai:m",
        "--base-url",
        fake_server.base_url,
        "--prompt",
        "Apples are red.",
        "--continuation",
        " Apples are sweet.",
        "--json",
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out) == {"tokens": [" Apples", " are", " sweet."], "logprobs": [-0.5, -0.5, -3.0]}
    assert fake_server.requests[0].path == "/v1/completions"  # scoring asks /completions by default
    code = _run(
        library_path,
        "logprobs",
        "--model",
        "openai:m",
        "--base-url",
        fake_server.base_url,
        "--prompt",
        "Apples are red.",
        "--continuation",
        " Apples",
    )
    out, _ = capsys.readouterr()
    assert code == 0 and '-0.5000  " Apples"' in out and "1 tokens: sum -0.5000, mean -0.5000" in out


def test_logprobs_that_cannot_be_had_are_one_line(library_path, fake_server: FakeModelServer, capsys) -> None:
    code = _run(
        library_path,
        "logprobs",
        "--model",
        "openai:m",
        "--base-url",
        fake_server.base_url,
        "--endpoint",
        "chat",
        "--prompt",
        "a",
        "--continuation",
        "b",
    )
    _, err = capsys.readouterr()
    assert code == 1
    assert err.strip().count("\n") == 0 and "openai cannot score text: the chat endpoint" in err
    assert "Traceback" not in err and fake_server.requests == []
    code = _run(
        library_path,
        "logprobs",
        "--model",
        "anthropic:claude-x",
        "--base-url",
        fake_server.root_url,
        "--prompt",
        "a",
        "--continuation",
        "b",
    )
    _, err = capsys.readouterr()
    assert code == 1 and "anthropic cannot score text: Anthropic's Messages API returns no token log-probs" in err


@pytest.mark.slow
def test_logprobs_json_with_the_local_model(library_path, gguf_model: Path, capsys) -> None:
    code = _run(
        library_path,
        "logprobs",
        "--model",
        f"llamacpp:{gguf_model}",
        "--n-ctx",
        "256",
        "--prompt",
        "Question: What is 2 + 3?\nAnswer:",
        "--continuation",
        " 5",
        "--json",
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert set(result) == {"tokens", "logprobs"} and len(result["tokens"]) == len(result["logprobs"]) >= 1
    assert "".join(result["tokens"]) == " 5" and all(v <= 0 for v in result["logprobs"])
    assert "scoring needs about" in err and "256 positions" in err  # the memory cost, said first


def test_rationales_extract_filter_export(library_path, fake_server: FakeModelServer, tmp_path, capsys) -> None:
    fake_server.responder = rewriting
    base = ("--base-url", fake_server.base_url)
    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", *base) == 0
    out, _ = capsys.readouterr()
    assert "16 done now, 0 done before, 0 failed of 16; 16 of 16 rewrites valid, 16 rationales stored" in out
    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", *base) == 0
    assert "0 done now, 16 done before" in capsys.readouterr().out

    fake_server.responder = None
    assert _run(library_path, "rationales", "filter", DEMO, "--scorer", "openai:m", "--preset", "web", *base) == 0
    out, _ = capsys.readouterr()
    assert "16 rationales, 16 scored by openai:m; kept at tau 0: 16 (100.0 %), dropped 0" in out
    assert "loss reduction" in out and "count" in out

    target = tmp_path / "kept.jsonl"
    assert _run(library_path, "rationales", "export", DEMO, str(target), "--tau", "0") == 0
    out, _ = capsys.readouterr()
    assert "16 rationales (kept at tau 0 by openai:m) written" in out
    first = json.loads(target.read_text(encoding="utf-8").splitlines()[0])
    assert [m["role"] for m in first["messages"]] == ["user", "assistant"]


def test_rationales_commands_print_json_for_scripts(
    library_path, fake_server: FakeModelServer, tmp_path, capsys
) -> None:
    """Issue 16, point 12: every write command has --json output."""
    fake_server.responder = rewriting
    base = ("--base-url", fake_server.base_url)
    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", "--json", *base) == 0
    done = json.loads(capsys.readouterr().out)
    assert done == {
        "collection": DEMO,
        "done": 16,
        "skipped": 0,
        "failed": 0,
        "total": 16,
        "valid": 16,
        "records": 16,
    }
    fake_server.responder = None
    assert _run(library_path, "rationales", "filter", DEMO, "--scorer", "openai:m", "--tau", "0", "--json", *base) == 0
    scored = json.loads(capsys.readouterr().out)
    assert (scored["scorer"], scored["done"], scored["scored"], scored["kept"], scored["tau"]) == (
        "openai:m",
        16,
        16,
        16,
        0,
    )
    target = tmp_path / "kept.jsonl"
    assert _run(library_path, "rationales", "export", DEMO, str(target), "--tau", "0", "--json") == 0
    written = json.loads(capsys.readouterr().out)
    assert written["records"] == 16 and written["path"] == str(target)


def test_rationales_bad_input(library_path, fake_server: FakeModelServer, tmp_path, capsys) -> None:
    base = ("--base-url", fake_server.base_url)
    cases = [
        (("extract", "nope", "--model", "openai:m", *base), "nope"),
        (("extract", DEMO, "--model", "openai:m", "--markers", "<BOT>", *base), "three dots"),
        (
            ("extract", DEMO, "--model", "openai:m", "--prompt", "missing", *base),
            "no rationale extraction fragment with key 'missing'",
        ),
        (("extract", DEMO, "--model", "openai:m", "--source", str(tmp_path / "x.txt"), *base), "no such file"),
        (("export", DEMO, str(tmp_path / "o.jsonl")), "run `thoughtdesk rationales filter` first"),
    ]
    for args, words in cases:
        assert _run(library_path, "rationales", *args) == 1
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (args, err)
    assert fake_server.requests == []


def test_rationales_extract_sends_prompts_as_generate_does(
    library_path, config_dir, tmp_path, monkeypatch, capsys
) -> None:
    """`rationales extract` sent a local model raw completions unless --chat was given, while
    `generate` uses the GGUF's chat template (core/generation/defaults.py): both now take the
    same defaults, the local model set in Settings included; a scorer stays a raw completion."""
    from thoughtdesk.cli.main import build_parser
    from thoughtdesk.cli.models import generation_models
    from thoughtdesk.core.errors import ThoughtDeskError
    from thoughtdesk.core.paths import settings_file
    from thoughtdesk.core.rationales import setup as mining_setup

    built = []

    def recorded(spec):  # the model the command would call, and no call
        built.append(spec)
        raise ThoughtDeskError("stopped by the test")

    monkeypatch.setattr(mining_setup, "build_backend", recorded)  # the one setup builds the backend
    gguf = tmp_path / "local.gguf"
    settings_file().parent.mkdir(parents=True, exist_ok=True)
    settings_file().write_text(f"[local]\nmodel_path={gguf}\n", encoding="utf-8")
    parser = build_parser()
    cases = [
        ["--model", "llamacpp:/m/a.gguf"],
        ["--model", "llamacpp"],  # the local model set in Settings
        ["--model", "llamacpp:/m/a.gguf", "--completion"],
        ["--model", "llamacpp:/m/a.gguf", "--completion-template", "Q: {prompt}\\nA:"],
        ["--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1"],
        ["--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--endpoint", "completions"],
    ]
    for options in cases:
        assert _run(library_path, "rationales", "extract", DEMO, *options) != 0
        assert capsys.readouterr().err.strip().endswith("stopped by the test")
        (generated,) = generation_models(parser.parse_args(["generate", DEMO, *options]))
        assert (built[-1].model, built[-1].chat) == (generated.model, generated.chat), options
    assert [spec.chat for spec in built] == [True, True, False, False, True, False]
    assert built[1].model == str(gguf)


def test_rationales_filter_in_the_papers_layout(library_path, fake_server: FakeModelServer, tmp_path, capsys) -> None:
    """Issue 23, point 18: --layout paper sends RATIONALYST's chat prompts and keeps its scores
    apart from the default layout's (tests/core/rationales/test_filtering.py checks the figures)."""
    fake_server.responder = rewriting
    base = ("--base-url", fake_server.base_url)
    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", *base) == 0
    capsys.readouterr()
    fake_server.responder = None
    sent = len(fake_server.requests)
    args = ("rationales", "filter", DEMO, "--scorer", "openai:m", "--tau", "-100", "--json", *base)
    assert _run(library_path, *args, "--layout", "paper") == 0
    scored = json.loads(capsys.readouterr().out)
    assert (scored["scorer"], scored["layout"], scored["done"], scored["scored"]) == (
        "openai:m [paper layout]",
        "paper",
        16,
        16,
    )
    probe, *prompts = [str(r.json["prompt"]) for r in fake_server.requests[sent:]]
    assert probe.startswith("Scoring check")  # the scorer is probed once first, as in the dialog
    assert len(prompts) == 32 and all(p.startswith("<|begin_of_text|><|start_header_id|>system") for p in prompts)
    assert not any("<BOT>" in p for p in prompts)
    # the default layout is a scorer of its own: everything is scored again
    assert _run(library_path, *args) == 0
    assert json.loads(capsys.readouterr().out)["done"] == 16
    target = tmp_path / "kept.jsonl"
    export = ("rationales", "export", DEMO, str(target), "--tau", "-100", "--scorer", "openai:m")
    assert _run(library_path, *export, "--layout", "paper") == 0
    assert "kept at tau -100 by openai:m [paper layout]" in capsys.readouterr().out
    assert _run(library_path, *export) == 0
    assert "kept at tau -100 by openai:m)" in capsys.readouterr().out


def test_rationales_filter_probes_a_server_once_and_stops_if_it_ignores_echo(
    library_path: Path, fake_server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28, point 11: only the dialog probed the scorer; `rationales filter` sent every
    rationale to a server that ignores echo and failed each. Now the one setup probes for both:
    one request, one line, nothing scored."""
    from tests.ui.generation.test_guide_panel import _no_echo

    fake_server.responder = rewriting
    base = ("--base-url", fake_server.base_url)
    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", *base) == 0
    capsys.readouterr()
    before = len(fake_server.requests)
    fake_server.responder = _no_echo
    assert _run(library_path, "rationales", "filter", DEMO, "--scorer", "openai:m", *base) != 0
    err = capsys.readouterr().err.strip()
    assert "cannot score text: the server answered without the prompt's log-probs (echo ignored)" in err
    assert err.count("\n") == 0
    assert len(fake_server.requests) == before + 1  # one probe, not a failed call per rationale
