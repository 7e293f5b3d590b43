"""Kill-and-resume with the real CLI, CLI errors, and API keys that must never be stored."""

from __future__ import annotations

import logging
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.core.generation.runs.conftest import DEMO
from tests.helpers.cli import cli_process, run_cli
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.importing.importer import export_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.config import store_api_key
from thoughtdesk.core.settings.secrets import MemoryKeyring, use_keyring


def _cli(library: Path, *args: str, **popen) -> subprocess.Popen:
    """A real ``thoughtdesk`` child process (to be killed, or to run beside another)."""
    return cli_process(*args, library=library, **popen)


def _count(library: Path, sql: str) -> int:
    conn = sqlite3.connect(f"file:{library}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def test_sigkill_mid_run_then_resume_completes_exactly_the_missing(library_path):
    with FakeModelServer() as server:
        server.script(*[Reply(delay=0.3) for _ in range(400)])
        process = _cli(
            library_path,
            "generate",
            DEMO,
            "--model",
            "openai:slow-model",
            "--base-url",
            server.base_url,
            "--instruction",
            "qa-01",
            "--trigger",
            "kojima-01",
            "--extraction",
            "kojima-A-D",
            "--n",
            "3",
            "--concurrency",
            "2",
        )
        deadline = time.monotonic() + 60
        done = 0
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
            try:
                done = _count(library_path, "SELECT count(*) FROM request WHERE status = 'done'")
            except sqlite3.OperationalError:
                continue  # the run tables are not created yet
            if done >= 20:
                break
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGKILL)
        process.wait()
        total = _count(library_path, "SELECT count(*) FROM request")
        done_at_kill = _count(library_path, "SELECT count(*) FROM request WHERE status = 'done'")
        assert total == 16 * 3 * 2 and 20 <= done_at_kill < total
        server.replies.clear()
        sent_before = len(server.requests)
        resumed = _cli(library_path, "resume", "1", "--concurrency", "8")
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        assert "run 1: done" in out
        assert len(server.requests) - sent_before == total - done_at_kill
    checks = {
        "requests without a result": "SELECT count(*) FROM request WHERE status != 'done' OR "
        "(step = 'cot' AND result_cot_pk IS NULL) OR "
        "(step = 'extraction' AND result_answer_pk IS NULL)",
        "CoTs stored twice": "SELECT count(*) - count(DISTINCT cot_id) FROM generated_cot",
        "results shared by two requests": "SELECT count(*) - count(DISTINCT result_cot_pk) "
        "FROM request WHERE step = 'cot'",
        "CoTs without a request": "SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%' AND "
        "id NOT IN (SELECT result_cot_pk FROM request)",
        "answers per CoT not 1": "SELECT count(*) FROM (SELECT c.id FROM generated_cot c LEFT JOIN answer a "
        "ON a.cot_pk = c.id WHERE c.cot_id LIKE 'td-%' GROUP BY c.id HAVING count(a.id) != 1)",
        "counters off": "SELECT count(*) FROM sample s WHERE n_cots != (SELECT count(*) FROM generated_cot c "
        "WHERE c.sample_pk = s.id)",
    }
    for what, sql in checks.items():
        assert _count(library_path, sql) == 0, what
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'") == 48


def test_cli_errors_name_the_provider_and_keep_the_run(library_path, tmp_path):
    """A model that cannot work is refused before a run is written (issue 16, point 8); a
    failure only a request can show (no server) keeps the run, with how to resume it."""
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 not a model")
    cases = [
        (["--model", f"llamacpp:{tmp_path / 'missing.gguf'}"], "llamacpp: model file", None),
        (["--model", f"llamacpp:{not_gguf}"], "is not a GGUF model file", None),
        (
            ["--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--max-attempts", "1"],
            "openai: cannot connect to http://127.0.0.1:9/v1",
            "thoughtdesk resume 1",
        ),
    ]
    for args, message, resume in cases:
        result = run_cli("generate", DEMO, "--dataset", "gsm8k", "--trigger", "kojima-01", *args, library=library_path)
        assert result.returncode == 1
        last = result.stderr.strip().splitlines()[-1]
        assert message in last
        assert (resume in last) if resume else ("resume" not in last.split(";")[0])
    out = run_cli("runs", "--json", library=library_path).stdout
    assert out.count('"status": "failed"') == 1
    assert out.count('"id":') == 1


def test_api_key_never_reaches_the_library_logs_or_exports(library_path, tmp_path, caplog):
    secret = "sk-DISTINCTIVE-7f3a9c1e5b2d-SECRET"
    use_keyring(MemoryKeyring())
    try:
        caplog.set_level(logging.DEBUG)
        with FakeModelServer(api_key=secret) as server:
            store_api_key("openai", secret, server.base_url)
            spec = RunSpec(
                samples=SampleSelection(DEMO, datasets=("gsm8k",)),
                models=(ModelSpec("openai", "m", base_url=server.base_url),),
                cot_triggers=("kojima-01",),
                answer_extractions=("kojima-numerals",),
            )
            with Library.open(library_path) as lib:
                run_id = create_run(lib, plan_run(lib, spec))
            final = execute_run(library_path, run_id, limits=RunLimits(concurrency=2))
            assert final.done == 10
            # The key really was sent (the server checks it), so the test can fail.
            assert server.requests[0].headers["authorization"] == f"Bearer {secret}"
        with Library.open(library_path) as lib:
            export = tmp_path / "export.json"
            export_thoughtsource(lib, DEMO, export)
            wal = Path(str(library_path) + "-wal")
            blobs = {
                "library": library_path.read_bytes(),
                "wal": wal.read_bytes() if wal.exists() else b"",
                "export": export.read_bytes(),
                "logs": caplog.text.encode(),
            }
        assert b"td-" in blobs["export"]  # the generated CoTs were exported
        for where, data in blobs.items():
            assert secret.encode() not in data, where
            assert secret[3:20].encode() not in data, where
    finally:
        use_keyring(None)
