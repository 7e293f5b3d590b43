"""``thoughtdesk critique``, ``thoughtdesk fragments import|list`` and critique runs in ``runs``."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.core.generation.test_critique_runs import TIDY, CritiqueServer
from tests.helpers.libraries import DEMO
from tests.helpers.paths import ROOT
from thoughtdesk.cli.main import main
from thoughtdesk.core.critiques import critiques_for_cots
from thoughtdesk.core.generation.fragment_store import FragmentStore
from thoughtdesk.core.generation.runs import run_requests
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import CONFIG_DIR_ENV

DSCB = ROOT / "tests" / "fixtures" / "critiques" / "DSCB-prompts.json"


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv(CONFIG_DIR_ENV, str(folder))
    return folder


def _run(library_path, *args: str) -> int:
    return main(["--library", str(library_path), *args])


def test_plan_only_prints_counts_cost_and_the_exact_prompt_and_sends_nothing(library_path, capsys):
    with CritiqueServer() as server:
        code = _run(
            library_path,
            "critique",
            DEMO,
            "--model",
            "openai:tidy-judge",
            "--model",
            "openai:untidy-judge",
            "--base-url",
            server.base_url,
            "--only",
            "incorrect",
            "--plan-only",
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert server.requests == []
    assert "20 critique request(s) for 10 CoT(s)" in err and "0 correct, 10 incorrect" in err
    assert "cost at most $0.0000" in err
    assert "--- critique |" in out and "td-critique-v1 (chat)" in out
    assert "Explanation to review:" in out and "Correct answer:" in out
    with Library.open(library_path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM run").fetchone()[0] == 0


def test_critique_runs_stores_critiques_and_lists_as_a_critique_run(library_path, capsys):
    with CritiqueServer() as server:
        code = _run(
            library_path,
            "critique",
            DEMO,
            "--model",
            "openai:tidy-judge",
            "--base-url",
            server.base_url,
            "--dataset",
            "gsm8k",
            "--limit",
            "2",
            "--preset",
            "ds",
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert all(r.path.endswith("/v1/completions") for r in server.requests) and len(server.requests) == 2
        assert all(r.json["max_tokens"] == 512 and r.json["temperature"] == 0 for r in server.requests)
    assert "run 1: done; 2 done (0 from the store), 0 failed of 2" in out
    assert "2 critique(s): 2 fully parsed\n" in out
    with Library.open(library_path) as lib:
        rows = run_requests(lib, 1)
        critiques = critiques_for_cots(lib, [r.target_cot_pk or 0 for r in rows])
    assert sum(len(c) for c in critiques.values()) == 2
    assert all(c.raw_text == TIDY and c.llm_options["wrapper"] == "ds" for cs in critiques.values() for c in cs)
    assert _run(library_path, "runs") == 0
    listed = capsys.readouterr().out
    assert listed.startswith("1\tcritique\tdone\t2/2 done")
    assert _run(library_path, "runs", "--json") == 0
    assert json.loads(capsys.readouterr().out)[0]["kind"] == "critique"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--template", "nope"], "no critique template 'nope' (known: processbench-critique, td-critique-v1)"),
        (["--dataset", "nope"], "has no dataset 'nope'"),
        (["--model", "anthropic:claude", "--preset", "ds"], "Anthropic's API takes chat messages only"),
        (["--model", "gpt"], "write PROVIDER:MODEL"),
    ],
)
def test_errors_are_one_line_and_create_no_run(library_path, capsys, args, message):
    model = [] if "--model" in args else ["--model", "openai:judge"]
    code = _run(library_path, "critique", DEMO, *model, *args, "--plan-only")
    err = capsys.readouterr().err
    assert code == 1 and message in err and err.count("\n") == 1 and err.startswith("thoughtdesk: ")
    with Library.open(library_path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM run").fetchone()[0] == 0


def test_dscb_prompts_import_adds_a_critique_template_usable_by_critique(library_path, tmp_path, capsys):
    assert _run(library_path, "fragments", "import", str(DSCB)) == 0
    out, err = capsys.readouterr()
    assert "critique\tdigital_socrates_v1" in out and "critique_system\tdigital_socrates_v1" in out
    assert "instruction\tQA_explanation1" in out and "cot_trigger\tQA_explanation1" in out
    assert "8 added" in err
    library = FragmentStore().load()  # saved where the app reads it
    assert library.get("instruction", "QA_zeroshot1").text == "Pick the correct option for this question.\n\nQuestion:"
    assert library.get("cot_trigger", "QA_zeroshot1").text == "Reply with the letter only, e.g. Answer: (X)"
    code = _run(
        library_path,
        "critique",
        DEMO,
        "--model",
        "openai:judge",
        "--template",
        "digital_socrates_v1",
        "--preset",
        "ds",
        "--dataset",
        "med_qa",
        "--limit",
        "1",
        "--plan-only",
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.split("\n", 1)[1].startswith(
        "[INST] <<SYS>>\nYou are a patient teacher who reads a student's explanation and points out its "
        "biggest flaw.\n<</SYS>Question: A 54-year-old man"
    )
    assert "(A) Insulin glargine (B) Metformin" in out and "Answer key: B\n" in out
    # Importing again changes nothing; the list shows them.
    assert _run(library_path, "fragments", "import", str(DSCB)) == 0
    assert "0 added, 0 replaced, 8 already present" in capsys.readouterr().err
    assert _run(library_path, "fragments", "list", "--kind", "critique") == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[1] for line in listed] == [
        "td-critique-v1",
        "processbench-critique",
        "digital_socrates_v1",
    ]


def test_a_bad_dscb_file_is_named_with_its_line_and_changes_nothing(tmp_path, capsys, library_path):
    bad = tmp_path / "DSCB-prompts.json"
    shutil.copy(DSCB, bad)
    bad.write_text(bad.read_text().replace("Question: [[QUESTION]]\\n\\nFirst", "Question:\\n\\nFirst"))
    code = _run(library_path, "fragments", "import", str(bad))
    err = capsys.readouterr().err
    assert code == 1 and f"{bad}" in err and "line 7" in err and "QA_explanation1" in err
    assert "[[QUESTION]]" in err and err.count("\n") == 1
    assert not FragmentStore().path.exists()  # nothing saved
    broken = tmp_path / "broken.json"
    broken.write_text('{"digital_socrates_v1": {"main": 3}}')
    assert _run(library_path, "fragments", "import", str(broken)) == 1
    assert "field 'main' must be a non-empty string" in capsys.readouterr().err
