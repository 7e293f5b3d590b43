"""A server that quotes the API key in its error never gets it stored, logged or shown (issue 15,
point 2; the audit found a 401 body "invalid header Authorization: Bearer sk-..." stored as it
was in ``request.error`` and shown in the Runs tab)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers.cli import run_cli
from tests.helpers.libraries import DEMO
from tests.helpers.servers import FakeModelServer, Recorded, Reply
from thoughtdesk.core.library.store import Library

#: Shaped like an OpenAI key, and one shaped like nothing (only the known-key list catches it).
KEYS = ("sk-proj-Q7xW2mZ9kL4vB8nR3tY6", "lab9f8e7d6c5b4a3918273645")


def echo_the_key(record: Recorded) -> Reply:
    auth = record.headers.get("authorization", "")
    bare = auth.removeprefix("Bearer ")
    message = f"invalid header Authorization: {auth}; the key {bare} is not known here"
    return Reply(401, {"error": {"message": message, "type": "invalid_request_error", "key": bare}})


def test_a_key_the_server_echoes_is_redacted_everywhere(library_path, tmp_path):
    logs = tmp_path / "logs"
    for key in KEYS:
        with FakeModelServer() as server:
            server.responder = echo_the_key
            env = {
                **os.environ,
                "OPENAI_API_KEY": key,
                "THOUGHTDESK_LOG_DIR": str(logs),
                "THOUGHTDESK_CONFIG_DIR": str(tmp_path / "config"),
                "XDG_DATA_HOME": str(tmp_path / "data"),
            }
            command = ["-v", "generate", DEMO, "--model", "openai:m", "--base-url", server.base_url]
            command += ["--dataset", "gsm8k", "--limit", "2", "--one-step"]
            result = run_cli(*command, library=library_path, env=env)
        assert server.requests and all(r.headers["authorization"] == f"Bearer {key}" for r in server.requests)
        assert result.returncode != 0 and "key was refused (HTTP 401)" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        with Library.open(library_path) as lib:
            errors = [row[0] for row in lib.conn.execute("SELECT error FROM request WHERE error IS NOT NULL")]
            raw = [
                row[0] for row in lib.conn.execute("SELECT raw_response FROM request WHERE raw_response IS NOT NULL")
            ]
            last = [row[0] for row in lib.conn.execute("SELECT last_error FROM run WHERE last_error IS NOT NULL")]
        assert errors and last and raw
        assert any("[redacted]" in text for text in errors)
        for text in [*errors, *raw, *last, result.stdout, result.stderr, (logs / "thoughtdesk.log").read_text()]:
            assert key not in text and key[6:20] not in text, text


def test_errors_are_redacted_where_made_stored_and_shown(library_path):
    """Each layer on its own: the error as made, a run's last error stored,
    and a last error an older version stored unredacted, shown redacted."""
    from thoughtdesk.core.generation.backends import AuthError
    from thoughtdesk.core.generation.runs import list_runs
    from thoughtdesk.core.generation.runs.tally import set_run_status

    key = "sk-proj-Z1y2X3w4V5u6T7s8"
    error = AuthError("openai", f"refused: Bearer {key}", hint=f"api_key={key}", raw_body=f'{{"k": "{key}"}}')
    assert key not in str(error) and key not in (error.raw_body or "")
    with Library.open(library_path) as lib:
        with lib.transaction() as conn:
            conn.execute(
                "INSERT INTO run (name, created, status, collection, spec) VALUES ('r', '', 'failed', ?, '{}')", (DEMO,)
            )
            run_id = conn.execute("SELECT max(id) FROM run").fetchone()[0]
        set_run_status(lib, run_id, "failed", f"the server said: invalid key {key}")
        assert key not in lib.conn.execute("SELECT last_error FROM run WHERE id = ?", (run_id,)).fetchone()[0]
        with lib.transaction() as conn:  # as an older version stored it
            conn.execute("UPDATE run SET last_error = ? WHERE id = ?", (f"Authorization: Bearer {key}", run_id))
        (shown,) = [run.last_error for run in list_runs(lib) if run.id == run_id]
        assert shown is not None and key not in shown and "[redacted]" in shown


def echo_the_key_in_a_good_answer(record: Recorded) -> Reply:
    """A 200 answer that echoes the key in every field it has: id, model, system_fingerprint,
    the text (long enough to be stored once and referenced from the raw body), and extras."""
    key = record.headers.get("authorization", "").removeprefix("Bearer ")
    payload = record.json if isinstance(record.json, dict) else {}
    chat = record.path.endswith("/chat/completions")
    text = f"Your key {key} was used. " + "Thinking step by step. " * 60 + "So the answer is (A)."
    choice: dict = {"index": 0, "finish_reason": "stop", "logprobs": None}
    choice.update({"message": {"role": "assistant", "content": text}} if chat else {"text": text})
    return Reply(
        200,
        {
            "id": f"chatcmpl-{key}",
            "object": "chat.completion",
            "model": f"{payload.get('model', 'm')}-{key}",
            "system_fingerprint": key,
            "choices": [choice],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            "debug": {"authorization": f"Bearer {key}", "api_key": key},
        },
    )


def test_a_key_echoed_in_a_successful_answer_is_stored_and_exported_nowhere(library_path, tmp_path):
    """Issue 23, point 2: a server that echoes the key in a 200 answer (``id``,
    ``system_fingerprint``, the model name, the text) got it stored unredacted in the CoT, the
    answer, the critique, their provenance and the request rows, and from there written into
    the ThoughtSource export. The library's bytes (with its -wal), every export and the log are
    searched for it."""
    import sqlite3

    logs = tmp_path / "logs"
    key = KEYS[1]  # shaped like nothing: only the list of keys in use can catch it
    env = {
        **os.environ,
        "OPENAI_API_KEY": key,
        "THOUGHTDESK_LOG_DIR": str(logs),
        "THOUGHTDESK_CONFIG_DIR": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    base = [sys.executable, "-m", "thoughtdesk", "--library", str(library_path), "-v"]
    # A connection held open keeps the -wal file (the last one to close would checkpoint and delete it).
    keeper = sqlite3.connect(library_path)
    keeper.execute("SELECT count(*) FROM sample").fetchone()
    outputs: list[str] = []
    with FakeModelServer() as server:
        server.responder = echo_the_key_in_a_good_answer
        for command in (
            [
                "generate",
                DEMO,
                "--model",
                "openai:m",
                "--base-url",
                server.base_url,
                "--dataset",
                "gsm8k",
                "--limit",
                "3",
            ],
            ["critique", DEMO, "--model", "openai:judge", "--base-url", server.base_url, "--dataset", "gsm8k"],
        ):
            result = subprocess.run(base + command, capture_output=True, text=True, timeout=300, env=env)
            assert result.returncode == 0, result.stderr
            outputs += [result.stdout, result.stderr]
        assert server.requests and all(r.headers["authorization"] == f"Bearer {key}" for r in server.requests)
    exports = tmp_path / "exports"
    exports.mkdir()
    for form in ("thoughtsource", "dscb", "samples-jsonl", "samples-csv", "answers-csv", "chat-jsonl"):
        target = exports / f"out.{form}"
        result = subprocess.run(
            base + ["export", DEMO, str(target), "--format", form], capture_output=True, text=True, timeout=300, env=env
        )
        assert result.returncode == 0, result.stderr
        outputs += [result.stdout, result.stderr, target.read_text(encoding="utf-8")]
    with Library.open(library_path) as lib:
        cots = [row[0] for row in lib.conn.execute("SELECT cot FROM generated_cot WHERE cot_id LIKE 'td-%'")]
        critiques = lib.conn.execute("SELECT count(*) FROM critique WHERE run_id IS NOT NULL").fetchone()[0]
    assert len(cots) == 3 and critiques > 0
    assert all(cot.startswith("Your key [redacted] was used.") for cot in cots)  # the rest of the text kept
    wal = library_path.with_name(library_path.name + "-wal")
    assert wal.exists()
    stored = library_path.read_bytes() + wal.read_bytes()
    keeper.close()
    assert key.encode() not in stored
    assert key.encode("utf-16-le") not in stored
    log_text = "".join(path.read_text(encoding="utf-8") for path in logs.glob("thoughtdesk.log*"))
    for text in [*outputs, log_text]:
        assert key not in text, text[:2000]
