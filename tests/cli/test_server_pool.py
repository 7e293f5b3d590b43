"""``--base-url`` repeated or with commas: a server pool (issue 17, point 2)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.libraries import DEMO
from tests.helpers.servers import FakeModelServer
from thoughtdesk.cli.main import main
from thoughtdesk.core.library.store import Library


def test_generate_on_a_pool_spreads_the_run_and_stores_each_answer_once(library_path, capsys) -> None:
    with FakeModelServer() as first, FakeModelServer() as second, FakeModelServer() as third:
        code = main(
            [
                "--library",
                str(library_path),
                "generate",
                DEMO,
                "--model",
                "openai:m",
                "--base-url",
                f"{first.base_url},{second.base_url}",
                "--base-url",
                third.base_url,
                "--trigger",
                "kojima-01",
                "--one-step",
                "--concurrency",
                "1",
            ]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        counts = [len(server.requests) for server in (first, second, third)]
    assert all(counts), counts  # every server had its share
    with Library.open(library_path) as lib:
        spec = json.loads(lib.conn.execute("SELECT spec FROM run").fetchone()[0])["spec"]
        done, cots = lib.conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT result_cot_pk) FROM request WHERE status = 'done'"
        ).fetchone()
    assert spec["models"][0]["base_url"] == first.base_url
    assert spec["models"][0]["more_base_urls"] == [second.base_url, third.base_url]
    assert done == cots == sum(counts) == 16  # the demo's 16 samples, one CoT each


def test_a_bad_address_in_the_list_is_named(library_path, capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(
            ["--library", str(library_path), "generate", DEMO, "--model", "openai:m"]
            + ["--base-url", "http://127.0.0.1:9/v1,127.0.0.1:10/v1", "--plan-only"]
        )
    _out, err = capsys.readouterr()
    assert exited.value.code == 2
    assert "--base-url" in err and "'127.0.0.1:10/v1' is not an http:// or https:// address with a host" in err
    assert "Traceback" not in err


def test_offline_mode_says_a_pool_runs_on_its_local_servers_only(library_path, capsys) -> None:
    """Issue 23, point 13: with offline mode on, a pool with a server on another machine ran on
    its servers on this machine without a word (the other one's requests were refused)."""
    remote = "http://models.example.org/v1"
    with FakeModelServer() as local:
        code = main(
            ["--library", str(library_path), "--offline", "generate", DEMO, "--model", "openai:m"]
            + ["--base-url", f"{local.base_url},{remote}", "--trigger", "kojima-01", "--one-step"]
            + ["--dataset", "gsm8k"]
        )
        _out, err = capsys.readouterr()
        assert code == 0, err
        assert local.requests
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1, err
    assert "offline mode is on: the pool of m runs on its 1 server(s) on this machine only" in warnings[0]
    assert f"{remote} is on another machine and get no requests" in warnings[0]


def test_online_a_pool_gets_no_offline_warning(library_path, capsys) -> None:
    from thoughtdesk.core.generation.runs import ModelSpec, offline_pool_warnings

    pool = ModelSpec("openai", "m", base_url="http://127.0.0.1:9/v1", more_base_urls=("http://example.org/v1",))
    assert offline_pool_warnings([pool]) == []
