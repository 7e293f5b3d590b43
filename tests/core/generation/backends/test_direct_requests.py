"""What a model call on a direct connection (core/generation/backends/direct.py) puts on the
wire, captured raw by a server on 127.0.0.1: each header once (the caller's replacing ours), a
non-ASCII path percent-encoded and an IDN host in its ASCII form as httpx sends them, no
credentials from the address, redirects reported and not followed; and a pool that is closed
closes the connections still in use when they come back and takes no more calls."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable

import httpx
import pytest

from tests.helpers.raw_http import raw_server, read_request
from thoughtdesk.core.generation.backends import AnthropicBackend, Backend, OpenAICompatBackend, Request
from thoughtdesk.core.generation.backends.base import BadRequest
from thoughtdesk.core.generation.backends.direct import CredentialsInAddress, parse_origin
from thoughtdesk.core.generation.backends.http import new_client, post_json
from thoughtdesk.core.generation.runs import ModelSpec, check_models_ready

CHAT = b'{"choices": [{"message": {"content": "forty-two"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}'
MESSAGE = b'{"content": [{"type": "text", "text": "forty-two"}], "usage": {"input_tokens": 1, "output_tokens": 1}}'


def _capturing(heads: list[bytes], body: bytes = CHAT):
    """A handler keeping each request's head (request line and headers) and answering ``body``."""

    def handle(conn: socket.socket, number: int) -> None:
        while True:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, rest = data.partition(b"\r\n\r\n")
            heads.append(head)
            length = next(int(line[15:]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
            while len(rest) < length:
                rest += conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
            )

    return handle


def _header_lines(head: bytes, name: bytes) -> list[bytes]:
    return [line for line in head.split(b"\r\n")[1:] if line.split(b":", 1)[0].strip().lower() == name.lower()]


async def _post(url: str, headers: dict[str, str]) -> None:
    async with new_client(2) as client:
        await post_json(
            client, provider="openai", url=url, payload={"model": "m"}, headers=headers, timeout=10, model="m"
        )


def test_every_header_goes_once_and_the_callers_replace_ours_whatever_their_case() -> None:
    """Before: Content-Type was sent twice (ours, then the backend's own)."""
    heads: list[bytes] = []
    with raw_server(_capturing(heads)) as (url, _):
        asyncio.run(_post(url + "/v1/chat/completions", {"content-type": "application/json; charset=utf-8"}))
        asyncio.run(_post(url + "/v1/chat/completions", {"ACCEPT": "text/plain", "Content-Length": "1"}))
    first, second = heads
    assert _header_lines(first, b"content-type") == [b"content-type: application/json; charset=utf-8"]
    assert _header_lines(second, b"accept") == [b"ACCEPT: text/plain"]
    assert _header_lines(second, b"content-type") == [b"Content-Type: application/json"]
    assert _header_lines(second, b"content-length") == [b"Content-Length: 13"]  # ours: the body's length
    for head in heads:
        names = [line.split(b":", 1)[0].lower() for line in head.split(b"\r\n")[1:]]
        assert len(names) == len(set(names)), head


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_backends_calls_carry_one_content_type(provider: str) -> None:
    heads: list[bytes] = []
    with raw_server(_capturing(heads, CHAT if provider == "openai" else MESSAGE)) as (url, _):

        async def go() -> str:
            backend: Backend
            if provider == "openai":
                backend = OpenAICompatBackend(url + "/v1", api_key="sk-test-header")
            else:
                backend = AnthropicBackend(api_key="sk-ant-test-header", base_url=url)
            try:
                response = await backend.complete(Request(prompt="Why?", model="m", max_tokens=5))
            finally:
                await backend.aclose()
            return response.texts[0]

        assert asyncio.run(go()) == "forty-two"
    assert len(_header_lines(heads[0], b"content-type")) == 1


def test_a_non_ascii_path_is_percent_encoded_as_httpx_sends_it() -> None:
    """Before: every non-ASCII character of the path became "?"."""
    heads: list[bytes] = []
    with raw_server(_capturing(heads)) as (url, _):
        asyncio.run(_post(url + "/v1/modèle ü/chat?q=é", {}))
        expected = httpx.URL(url + "/v1/modèle ü/chat?q=é").raw_path
    assert heads[0].split(b"\r\n")[0] == b"POST " + expected + b" HTTP/1.1"
    assert expected == b"/v1/mod%C3%A8le%20%C3%BC/chat?q=%C3%A9"


def test_an_idn_host_is_connected_to_and_named_in_its_ascii_form() -> None:
    """Before: the Host header of ``bücher.example`` was ``b?cher.example``. No name outside
    127.0.0.1 is looked up here: the address is parsed as a call would parse it."""
    origin = parse_origin("https://Bücher.example/v1/chat/completions")
    assert (origin.host, origin.port, origin.host_header) == ("xn--bcher-kva.example", 443, b"xn--bcher-kva.example")
    assert parse_origin("http://bücher.example:8080/").host_header == b"xn--bcher-kva.example:8080"
    assert parse_origin("http://[::1]:8080/v1").host_header == b"[::1]:8080"


def test_credentials_in_the_base_url_are_refused_in_one_line_and_never_sent() -> None:
    """Before: ``user:pass@`` was silently dropped on the direct path (httpx sends it as Basic
    auth); base URLs are stored with every run, so the password would be stored too."""
    heads: list[bytes] = []
    with raw_server(_capturing(heads)) as (url, accepted):
        with_password = url.replace("http://", "http://alice:s3cret-pw@") + "/v1/chat/completions"
        with pytest.raises(BadRequest) as caught:
            asyncio.run(_post(with_password, {}))
        assert accepted == []

        async def direct() -> None:
            async with new_client(2) as client:
                await client.direct.post(with_password, b"{}", {}, 1000)

        with pytest.raises(CredentialsInAddress):
            asyncio.run(direct())
        assert accepted == []
    message = str(caught.value)
    assert "user name or password" in message and "s3cret-pw" not in message and "\n" not in message
    assert url in message  # the address without its credentials
    # A run with such a base URL is refused before it is written.
    with pytest.raises(BadRequest, match="user name or password"):
        check_models_ready([ModelSpec("openai", "m", base_url=with_password.removesuffix("/chat/completions"))])


def test_a_redirect_is_reported_and_not_followed() -> None:
    requests: list[bytes] = []

    def handle(conn: socket.socket, number: int) -> None:
        while body := read_request(conn):
            requests.append(body)
            conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:9/elsewhere\r\nContent-Length: 0\r\n\r\n")

    with raw_server(handle) as (url, accepted), pytest.raises(BadRequest) as caught:
        asyncio.run(_post(url + "/v1/chat/completions", {"Authorization": "Bearer sk-redirect-test"}))
    assert "redirected the request (HTTP 302) to http://127.0.0.1:9/elsewhere" in str(caught.value)
    assert len(requests) == 1 and accepted == [1]


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll ``condition`` (set by the server's thread or the pool) without blocking the loop."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


def test_a_closed_pool_closes_the_connections_in_use_when_they_return_and_takes_no_more_calls() -> None:
    """Before: a connection in use when close() ran went back to the idle list and stayed
    open, and the pool went on accepting calls."""
    release = threading.Event()
    received = threading.Event()
    closed_by_client = threading.Event()

    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)
        received.set()
        release.wait(10)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(CHAT) + CHAT)
        conn.settimeout(5)
        if conn.recv(1) == b"":  # the client closed its end
            closed_by_client.set()

    with raw_server(handle) as (url, _):

        async def go() -> None:
            async with new_client(2) as client:
                pool = client.direct
                call = asyncio.create_task(pool.post(url + "/v1/chat/completions", b"{}", {}, 10_000))
                await until(received.is_set)  # the call is under way: the server has its request
                pool.close()
                release.set()
                status, _, body = await call  # the call in flight still gets its answer
                assert (status, body) == (200, CHAT)
                with pytest.raises(RuntimeError, match="closed"):
                    await pool.post(url + "/v1/chat/completions", b"{}", {}, 10_000)

        asyncio.run(go())
        assert closed_by_client.wait(5)


def test_a_call_waiting_for_a_connection_when_the_pool_closes_is_refused() -> None:
    release = threading.Event()
    received = threading.Event()

    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)
        received.set()
        release.wait(10)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(CHAT) + CHAT)

    with raw_server(handle) as (url, accepted):

        async def go() -> None:
            async with new_client(1) as client:
                pool = client.direct
                first = asyncio.create_task(pool.post(url + "/a", b"{}", {}, 10_000))
                second = asyncio.create_task(pool.post(url + "/b", b"{}", {}, 10_000))
                await until(
                    lambda: received.is_set() and len(pool._slot_waiters) == 1
                )  # the second waits for the only slot
                pool.close()
                with pytest.raises(RuntimeError, match="closed"):
                    await asyncio.wait_for(second, 5)
                release.set()
                assert (await first)[0] == 200

        asyncio.run(go())
    assert accepted == [1]


def test_bytes_a_server_sends_on_an_idle_connection_close_it() -> None:
    """A kept-alive connection that receives bytes while no call is under way is closed at
    once (before, h11 kept them, without bound, until the next call found the connection
    unusable)."""
    sent_junk = threading.Event()

    def handle(conn: socket.socket, number: int) -> None:
        while read_request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(CHAT) + CHAT)
            if number == 1:

                def junk() -> None:
                    conn.sendall(b"x" * 100_000)
                    sent_junk.set()

                threading.Timer(0.05, junk).start()

    with raw_server(handle) as (url, accepted):

        async def go() -> bool:
            async with new_client(2) as client:
                pool = client.direct
                await pool.post(url + "/a", b"{}", {}, 10_000)
                connection = next(iter(pool._idle.values()))[0]
                for _ in range(100):
                    await asyncio.sleep(0.02)
                    if sent_junk.is_set() and connection.closed:
                        break
                closed = connection.closed and not connection.pending
                assert (await pool.post(url + "/b", b"{}", {}, 10_000))[0] == 200
                return closed

        assert asyncio.run(go())
    assert accepted == [1, 2]


def test_an_answer_far_above_the_read_buffer_arrives_whole() -> None:
    """Reading pauses above 1 MB received and not yet read, and resumes as it is read."""
    body = b'{"text": "' + b"y" * 6_000_000 + b'"}'

    def handle(conn: socket.socket, number: int) -> None:
        while read_request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    with raw_server(handle) as (url, _):

        async def go() -> bytes:
            async with new_client(1) as client:
                return (await client.direct.post(url + "/a", b"{}", {}, 10_000_000))[2]

        assert asyncio.run(go()) == body
