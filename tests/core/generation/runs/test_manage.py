"""Runs checked before they are written, renamed and deleted (issue 16, point 8)."""

from __future__ import annotations

import time

import pytest

from tests.helpers.libraries import DEMO
from thoughtdesk.core.generation.backends.base import ModelFileError
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunInUseError,
    RunNotFound,
    RunSpec,
    SampleSelection,
    check_models_exist,
    check_models_ready,
    create_run,
    delete_run,
    list_runs,
    plan_run,
    rename_run,
)
from thoughtdesk.core.generation.runs.lease import this_holder
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings import network
from thoughtdesk.core.settings.network import OfflineError

LOCAL = ModelSpec("openai", "local-model", base_url="http://127.0.0.1:1/v1")


@pytest.fixture
def offline():
    network.set_offline(True)
    yield
    network.set_offline(False)
    network.clear_override()


def make_run(lib: Library, name: str = "") -> int:
    spec = RunSpec(samples=SampleSelection(DEMO, datasets=("gsm8k",)), models=(LOCAL,), name=name)
    return create_run(lib, plan_run(lib, spec))


def test_offline_refuses_a_remote_model_but_not_a_local_server(offline):
    with pytest.raises(OfflineError, match=r"the openai API \(model gpt-4o-mini\) needs the network"):
        check_models_ready([LOCAL, ModelSpec("openai", "gpt-4o-mini")])
    with pytest.raises(OfflineError, match="anthropic"):
        check_models_ready([ModelSpec("anthropic", "claude-3-5-haiku-latest")])
    check_models_ready([LOCAL])  # 127.0.0.1 is this machine


def test_a_missing_or_wrong_model_file_is_refused(tmp_path):
    with pytest.raises(ModelFileError, match="does not exist"):
        check_models_ready([ModelSpec.parse(f"llamacpp:{tmp_path / 'gema-typo.gguf'}")])
    text = tmp_path / "notes.gguf"
    text.write_text("not a model", encoding="utf-8")
    with pytest.raises(ModelFileError, match="is not a GGUF model file"):
        check_models_ready([ModelSpec.parse(f"llamacpp:{text}")])


def test_rename_and_delete_keep_what_the_run_produced(library_path):
    with Library.open(library_path) as lib:
        run_id = make_run(lib, "first")
        other = make_run(lib, "second")
        assert rename_run(lib, "first", "  baseline  ") == run_id
        assert {r.id: r.name for r in list_runs(lib)}[run_id] == "baseline"
        with pytest.raises(Exception, match="cannot be empty"):
            rename_run(lib, run_id, " ")
        # A CoT this run produced: deleting the run must keep it.
        cot = lib.conn.execute("SELECT id FROM generated_cot LIMIT 1").fetchone()[0]
        with lib.transaction() as conn:
            conn.execute(
                "UPDATE request SET status = 'done', result_cot_pk = ? WHERE id = "
                "(SELECT min(id) FROM request WHERE run_id = ?)",
                (cot, run_id),
            )
        requests = lib.conn.execute("SELECT count(*) FROM request WHERE run_id = ?", (run_id,)).fetchone()[0]
        assert delete_run(lib, "baseline") == (run_id, requests)
        assert [r.id for r in list_runs(lib)] == [other]
        assert lib.conn.execute("SELECT count(*) FROM request WHERE run_id = ?", (run_id,)).fetchone()[0] == 0
        assert lib.conn.execute("SELECT count(*) FROM generated_cot WHERE id = ?", (cot,)).fetchone()[0] == 1
        with pytest.raises(RunNotFound):
            delete_run(lib, run_id)


def test_a_run_being_executed_is_not_deleted(library_path):
    with Library.open(library_path) as lib:
        run_id = make_run(lib)
        with lib.transaction() as conn:
            conn.execute(
                "UPDATE run SET status = 'running', holder = ?, lease_expires = ? WHERE id = ?",
                (this_holder(), time.time() + 60, run_id),
            )
        with pytest.raises(RunInUseError, match="cancel it there first"):
            delete_run(lib, run_id)
        assert [r.id for r in list_runs(lib)] == [run_id]
        with lib.transaction() as conn:  # the holder died: its lease ran out
            conn.execute("UPDATE run SET lease_expires = ? WHERE id = ?", (time.time() - 1, run_id))
        delete_run(lib, run_id)
        assert list_runs(lib) == []


# --- a model the server does not have (audit of issue 16, point 8) ---------------------------


def test_a_misspelled_model_is_refused_where_the_server_lists_its_models():
    from tests.helpers.servers import FakeModelServer
    from thoughtdesk.core.generation.backends import ModelNotFound

    with FakeModelServer(models=("gpt-4o-mini", "gpt-4o", "o3-mini")) as server:
        with pytest.raises(ModelNotFound, match=r"has no model 'gpt-4o-mnii'; did you mean 'gpt-4o-mini'") as refused:
            check_models_exist([ModelSpec("openai", "gpt-4o-mnii", base_url=server.base_url)])
        assert "nothing was written" in str(refused.value)
        check_models_exist([ModelSpec("openai", "gpt-4o", base_url=server.base_url)])  # listed: fine
        assert server.gets == ["/v1/models", "/v1/models"] and not server.requests  # nothing generated


def test_a_server_that_cannot_tell_lets_the_run_be_written():
    from tests.helpers.servers import FakeModelServer

    # No /models route (404), a llama.cpp server listing its one model under another name, no server.
    with FakeModelServer(models=("qwen",), list_models=False) as bare:
        check_models_exist([ModelSpec("openai", "anything", base_url=bare.base_url)])
        assert bare.gets == ["/v1/models"]
    with FakeModelServer(models=("/models/qwen2.5-0.5b.gguf",)) as single:
        check_models_exist([ModelSpec("openai", "qwen", base_url=single.base_url)])
    check_models_exist([ModelSpec("openai", "m", base_url="http://127.0.0.1:1/v1")])  # nothing answers


def test_anthropic_is_asked_for_the_model_itself(monkeypatch):
    from tests.helpers.servers import FakeModelServer
    from thoughtdesk.core.generation.backends import ModelNotFound

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    with FakeModelServer(models=("claude-3-5-haiku-latest",)) as server:
        check_models_exist([ModelSpec("anthropic", "claude-3-5-haiku-latest", base_url=server.root_url)])
        with pytest.raises(ModelNotFound, match="has no model 'claude-3-5-haiku-lates'"):
            check_models_exist([ModelSpec("anthropic", "claude-3-5-haiku-lates", base_url=server.root_url)])
        assert server.gets == ["/v1/models/claude-3-5-haiku-latest", "/v1/models/claude-3-5-haiku-lates"]
