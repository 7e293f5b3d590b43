"""Offline mode end to end: import, a local generation run, evaluation with re-scoring, export, with no
connection attempted to anything but this machine; and remote actions refused up front."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading

import pytest

from thoughtdesk.core.datasets import get_dataset
from thoughtdesk.core.datasets.catalogue import DatasetInfo, SourceFile
from thoughtdesk.core.datasets.download import download_dataset
from thoughtdesk.core.generation.backends import AnthropicBackend, OpenAICompatBackend, Request
from thoughtdesk.core.importing.importer import export_thoughtsource, import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import resource_path
from thoughtdesk.core.settings import network
from thoughtdesk.core.settings.network import OfflineError

# A second, independent audit hook that records every socket event of the process while a test
# watches, allowed or not, so a test sees what the guard saw and also what it let through.
_SOCKET_EVENTS = (
    "socket.connect",
    "socket.getaddrinfo",
    "socket.sendto",
    "socket.sendmsg",
    "socket.gethostbyname",
    "socket.gethostbyname_ex",
)
_watch = threading.Event()
_seen: list[tuple[str, object]] = []


def _recorder(event: str, args: tuple) -> None:
    if _watch.is_set() and event in _SOCKET_EVENTS:
        target = args[1] if event in ("socket.connect", "socket.sendto") else args[0]
        _seen.append((event, target))


sys.addaudithook(_recorder)


@pytest.fixture
def socket_events():
    _seen.clear()
    _watch.set()
    yield _seen
    _watch.clear()


def _non_loopback(events) -> list:
    """The recorded events whose address is not this machine (AF_UNIX paths are local)."""
    found = []
    for event, target in events:
        if event == "socket.connect" and not isinstance(target, tuple):
            continue
        host = target[0] if isinstance(target, tuple) else target
        if not network.is_loopback_host(host):
            found.append((event, target))
    return found


def test_offline_workflow_touches_only_this_machine(gguf_model, tmp_path, socket_events):
    """Import, a generation run with the local model (the real run executor), evaluation with
    re-scoring, and export, all while offline: no non-loopback socket event at all."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra 'local')")
    from thoughtdesk.core.evaluation.evaluate import evaluate
    from thoughtdesk.core.generation.prompts import PromptMode
    from thoughtdesk.core.generation.runs import ModelSpec, RunSpec, SampleSelection, create_run, execute_run, plan_run

    network.set_offline(True)
    refused_before = len(network.refused_attempts)
    path = tmp_path / "offline.thoughtdesk"
    with Library.open(path) as lib:
        report = import_thoughtsource(lib, resource_path("demo_collection.json"), collection="Demo")
        assert report.inserted == 16
        model = ModelSpec.parse(f"llamacpp:{gguf_model}", max_tokens=8, n_ctx=512, seed=3)
        spec = RunSpec(
            samples=SampleSelection("Demo", datasets=("gsm8k",), limit=2),
            models=(model,),
            cot_triggers=("kojima-01",),
            mode=PromptMode.ONE_STEP,
        )
        run_id = create_run(lib, plan_run(lib, spec))
    final = execute_run(path, run_id)
    assert final.status == "done" and final.done == 2 and final.completion_tokens > 0
    with Library.open(path) as lib:
        generated = lib.conn.execute("SELECT count(*) FROM generated_cot WHERE api_service = 'llamacpp'").fetchone()[0]
        assert generated == 2
        result = evaluate(lib, "Demo", rescore=True, n_resamples=99)
        local_rows = [row for row in result.rows if "gemma" in str(row.key).lower()]
        assert sum(row.n for row in local_rows) == 2, result.rows
        exported = export_thoughtsource(lib, "Demo", tmp_path / "export.json")
        assert exported == 16 and (tmp_path / "export.json").stat().st_size > 0
    assert network.refused_attempts[refused_before:] == []
    assert _non_loopback(socket_events) == []
    # The recorder works: a lookup of a remote name is refused by the guard and recorded by both.
    with pytest.raises(OfflineError, match="offline mode is on: a connection to example.org needs the network"):
        socket.getaddrinfo("example.org", 443)
    assert _non_loopback(socket_events) == [("socket.getaddrinfo", "example.org")]
    assert network.refused_attempts[-1].host == "example.org"


def test_download_is_refused_before_any_connection(tmp_path, socket_events):
    network.set_offline(True)
    info = get_dataset("gsm8k")
    assert info.sources, "gsm8k has a source URL"
    with pytest.raises(OfflineError) as raised:
        download_dataset(info, tmp_path / "cache")
    assert str(raised.value).startswith(
        f"offline mode is on: the download of dataset gsm8k needs the network ({info.sources[0].url})"
    )
    assert socket_events == []
    assert not (tmp_path / "cache" / "gsm8k").exists()


def test_download_from_this_machine_still_works_offline(tmp_path, socket_events):
    import hashlib
    import http.server
    import threading as th

    payload = b'{"question": "1+1", "answer": "#### 2"}\n'
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "data.jsonl").write_bytes(payload)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(tmp_path / "srv"), **k)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    th.Thread(target=server.serve_forever, daemon=True).start()
    try:
        network.set_offline(True)
        url = f"http://127.0.0.1:{server.server_address[1]}/data.jsonl"
        info = DatasetInfo(
            "local_set",
            "Local",
            "",
            "",
            "MIT",
            "",
            "number",
            "jsonl",
            ("test",),
            (),
            sources=(SourceFile(url, "data.jsonl", len(payload), hashlib.sha256(payload).hexdigest()),),
        )
        [path] = download_dataset(info, tmp_path / "cache")
        assert path.read_bytes() == payload
    finally:
        server.shutdown()
        server.server_close()
    assert _non_loopback(socket_events) == []


@pytest.mark.parametrize(
    "make,provider",
    [
        (lambda: OpenAICompatBackend("https://api.openai.com/v1", "sk-offline-test"), "openai"),
        (lambda: AnthropicBackend("ak-offline-test"), "anthropic"),
    ],
)
def test_api_call_is_refused_before_any_connection(make, provider, socket_events):
    network.set_offline(True)
    refused_before = len(network.refused_attempts)

    async def call():
        backend = make()
        try:
            return await backend.complete(Request(model="m", prompt="hi", max_tokens=4))
        finally:
            await backend.aclose()

    with pytest.raises(OfflineError, match=f"^offline mode is on: the {provider} API needs the network \\(https://"):
        asyncio.run(call())
    assert socket_events == [] and network.refused_attempts[refused_before:] == []


def test_guard_blocks_raw_sockets_to_other_machines_and_allows_loopback():
    network.set_offline(True)
    with socket.socket() as raw, pytest.raises(OfflineError, match="a connection to 192.0.2.1"):
        raw.connect(("192.0.2.1", 80))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, pytest.raises(OfflineError):
        udp.sendto(b"x", ("198.51.100.7", 53))
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=5):
            pass
    network.set_offline(False)
    with socket.socket() as server:  # off again: nothing is blocked (loopback shown, no traffic out)
        server.bind(("127.0.0.1", 0))
        server.listen()
        socket.create_connection(server.getsockname(), timeout=5).close()


@pytest.mark.parametrize(
    "host,loopback",
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        (None, True),
        ("api.openai.com", False),
        ("10.0.0.1", False),
        ("0.0.0.0", False),
        ("localhost.evil.com", False),
        ("", False),
    ],
)
def test_loopback_detection(host, loopback):
    assert network.is_loopback_host(host) is loopback


def test_cli_offline_flag(tmp_path, capsys):
    from thoughtdesk.cli.main import main

    Library.open(tmp_path / "l.thoughtdesk").close()  # read commands need an existing library
    assert main(["--offline", "--library", str(tmp_path / "l.thoughtdesk"), "collections"]) == 0
    assert network.is_offline()
    network.clear_override()
    network.set_offline(False)


@pytest.mark.parametrize("name", ["ward.localhost", "LOCALHOST.", "Api.Lab.LocalHost", "localhost"])
def test_names_of_this_machine_are_answered_without_the_resolver(name, socket_events):
    """Issue 15: offline, ``*.localhost`` and ``LOCALHOST.`` reached the system resolver, which
    may ask the network's DNS server. Now they become loopback addresses before any lookup."""
    network.set_offline(True)
    try:
        found = socket.getaddrinfo(name, 8080, type=socket.SOCK_STREAM)
        assert found and all(info[4][0] in ("127.0.0.1", "::1") for info in found)
        assert found[0][4][0] == "127.0.0.1"
        assert socket.gethostbyname(name) == "127.0.0.1"
        lookups = [target for event, target in socket_events if event != "socket.connect"]
        assert lookups and all(target in ("127.0.0.1", "::1") for target in lookups), lookups
    finally:
        network.set_offline(False)


def test_a_name_lookup_that_bypasses_the_wrapper_is_refused_offline(socket_events):
    import _socket

    network.set_offline(True)
    try:
        for name in ("ward.localhost", "LOCALHOST.", "example.org"):
            with pytest.raises(OfflineError, match="a connection to"):
                _socket.getaddrinfo(name, 80)
        assert _socket.getaddrinfo("127.0.0.1", 80)  # a literal address asks no one
    finally:
        network.set_offline(False)


def test_a_server_named_by_a_localhost_name_is_reached_offline(fake_server, socket_events):
    """A model server at http://models.localhost:PORT works offline, through the local answer."""
    network.set_offline(True)
    try:
        backend = OpenAICompatBackend(base_url=f"http://models.localhost:{fake_server.port}/v1", api_key="k")

        async def call():
            try:
                return await backend.complete(Request(prompt="2+2?", model="m", max_tokens=5))
            finally:
                await backend.aclose()

        response = asyncio.run(call())
        assert response.texts
        names = [t for e, t in socket_events if e != "socket.connect" and t not in ("127.0.0.1", "::1")]
        assert names == []
    finally:
        network.set_offline(False)


def test_the_refusal_names_where_offline_mode_came_from(monkeypatch):
    """Audit of issue 16: with --offline on the command line the message still said "Turn offline
    mode off in Edit > Settings (or unset THOUGHTDESK_OFFLINE)"."""
    from thoughtdesk.core.settings.network import apply_offline_setting, clear_override, require_network, set_offline

    monkeypatch.delenv("THOUGHTDESK_OFFLINE", raising=False)
    try:
        apply_offline_setting(True, saved=False)  # --offline
        with pytest.raises(OfflineError) as refused:
            require_network("the openai API", "https://api.openai.com/v1")
        assert "turned on by --offline on the command line; run the command without --offline" in str(refused.value)
        assert "Edit > Settings" not in str(refused.value)
        clear_override()
        monkeypatch.setenv("THOUGHTDESK_OFFLINE", "1")
        apply_offline_setting(None, saved=False)
        with pytest.raises(OfflineError, match="turned on by THOUGHTDESK_OFFLINE=1 in the environment; unset"):
            require_network("the openai API", "https://api.openai.com/v1")
        monkeypatch.delenv("THOUGHTDESK_OFFLINE")
        apply_offline_setting(None, saved=True)
        with pytest.raises(OfflineError, match=r"Turn offline mode off in Edit > Settings") as refused:
            require_network("the openai API", "https://api.openai.com/v1")
        assert "--offline" not in str(refused.value) and "THOUGHTDESK_OFFLINE" not in str(refused.value)
    finally:
        clear_override()
        set_offline(False)
