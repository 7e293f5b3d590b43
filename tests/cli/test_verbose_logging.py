"""``-v/--verbose`` and the log file (issue 16, point 12; audit): core logged three messages, so
``-v`` printed nothing for import, stats or generate, and start-up ran before logging was set up,
so even ``--offline -v`` logged nothing. Each command now says what it does, on stderr with ``-v``
(debugging detail such as retries with ``-vv``) and always in the log file, keys redacted."""

from __future__ import annotations

import json

import pytest

from tests.helpers.paths import FIXTURES
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.cli.main import main

EDGE = FIXTURES / "thoughtsource" / "edge_cases.json"
KEY = "sk-verbose-test-0123456789abcdef"


@pytest.fixture
def logs(tmp_path, monkeypatch):
    folder = tmp_path / "logs"
    monkeypatch.setenv("THOUGHTDESK_LOG_DIR", str(folder))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return folder / "thoughtdesk.log"


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("thoughtdesk: INFO") or "DEBUG" in line]


def test_verbose_says_what_each_command_does_and_the_log_file_has_it(tmp_path, capsys, logs):
    library = ["--library", str(tmp_path / "lib.thoughtdesk")]
    assert main([*library, "import", str(EDGE), "--collection", "edge", "-v"]) == 0
    err = capsys.readouterr().err
    assert any("created" in line and "lib.thoughtdesk" in line for line in lines(err)), err
    assert any("import of edge_cases.json into the new collection 'edge' started" in line for line in lines(err))
    assert any("finished: 4 record(s) read, 4 inserted, 0 replaced, 0 skipped in" in line for line in lines(err)), err

    assert main([*library, "stats", "edge", "-v"]) == 0
    err = capsys.readouterr().err
    assert any("statistics of 'edge': 4 sample(s)" in line for line in lines(err)), err

    with FakeModelServer() as server:
        server.script(Reply(500, {"error": {"message": "try again"}}))  # one retry, said with -vv
        code = main(
            [
                *library,
                "generate",
                "edge",
                "--model",
                "openai:m",
                "--base-url",
                server.base_url,
                "--limit",
                "1",
                "--one-step",
                "--retry-wait",
                "0",
                "-vv",
            ]
        )
    err = capsys.readouterr().err
    assert code == 0, err
    assert any("run 1 created in" in line and "openai:m" in line for line in lines(err)), err
    assert any("run 1: " in line and "request(s) to send of" in line for line in lines(err)), err
    assert any("run 1 done:" in line and "0 failed" in line for line in lines(err)), err
    assert any("DEBUG" in line and "attempt 1 failed (ServerError" in line for line in lines(err)), err

    out = tmp_path / "rows.csv"
    assert main([*library, "export", "edge", str(out), "--format", "samples-csv", "-v"]) == 0
    err = capsys.readouterr().err
    assert any("exported" in line and str(out) in line for line in lines(err)), err

    logged = logs.read_text(encoding="utf-8")
    for expected in ("import of edge_cases.json", "statistics of 'edge'", "run 1 created", "run 1 done", "exported"):
        assert expected in logged, expected
    assert KEY not in logged and KEY not in err  # the key the run sent is in neither


def test_without_verbose_stderr_stays_quiet_but_the_log_file_has_it(tmp_path, capsys, logs):
    library = ["--library", str(tmp_path / "lib.thoughtdesk")]
    assert main([*library, "import", str(EDGE), "--collection", "edge", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["inserted"] == 4 and not lines(err)
    assert "import of edge_cases.json into 'edge' finished: 4 record(s) read" in logs.read_text(encoding="utf-8")


def test_offline_mode_of_the_command_line_is_logged(tmp_path, capsys, logs):
    """Start-up (offline mode, the key file) ran before logging was set up: nothing was logged."""
    library = ["--library", str(tmp_path / "lib.thoughtdesk")]
    assert main([*library, "import", str(EDGE), "--collection", "edge"]) == 0
    capsys.readouterr()
    assert main([*library, "--offline", "-v", "collections"]) == 0
    err = capsys.readouterr().err
    assert any("offline mode on" in line for line in lines(err)), err
    assert "offline mode on" in logs.read_text(encoding="utf-8")
