"""Model calls on direct connections (core/generation/backends/direct.py): ``post_json`` with the
clients ``new_client`` makes, against raw servers on 127.0.0.1 that keep, drop, stall, break
and garble connections, and a TLS server with its own certificate."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.raw_http import raw_server, read_request
from thoughtdesk.core.generation.backends.base import BadResponse, ConnectionLost, RateLimited, ServerDown, Timeout
from thoughtdesk.core.generation.backends.http import HttpResult, ProviderClient, new_client, post_json

ANSWER = b'{"choices": [{"message": {"content": "forty-two"}}]}'


def reply(conn: socket.socket, body: bytes = ANSWER, extra: bytes = b"") -> None:
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + extra
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


async def _calls(
    url: str, times: int, *, concurrent: bool = False, client: ProviderClient | None = None, **options: Any
) -> list[HttpResult]:
    """``times`` calls of ``post_json`` to ``url`` with ``client`` (default: a new client of
    ``connections`` connections, closed after)."""
    if client is None:
        async with new_client(options.get("connections", 8)) as own:
            return await _calls(url, times, concurrent=concurrent, client=own, **options)

    async def one(i: int) -> HttpResult:
        return await post_json(
            client,
            provider="openai",
            url=url,
            payload={"model": "m", "i": i},
            headers=options.get("headers", {"Authorization": "Bearer sk-test"}),
            timeout=options.get("timeout", 10),
            model="m",
            max_bytes=options.get("max_bytes", 1 << 20),
        )

    if concurrent:
        return list(await asyncio.gather(*(one(i) for i in range(times))))
    return [await one(i) for i in range(times)]


def calls(url: str, times: int = 1, **options: Any) -> list[HttpResult]:
    return asyncio.run(_calls(url, times, **options))


def test_model_calls_take_the_direct_path_and_keep_their_connection() -> None:
    seen: list[bytes] = []

    def handle(conn: socket.socket, number: int) -> None:
        while body := read_request(conn):
            seen.append(body)
            reply(conn, b'{"connection": %d}' % number)

    with raw_server(handle) as (url, accepted):

        async def go() -> list[HttpResult]:
            async with new_client(8) as client:
                assert client.direct_for(url) is client.direct  # loopback: never through a proxy
                return await _calls(url + "/v1/chat/completions", 4, client=client)

        results = asyncio.run(go())
    assert [r.data for r in results] == [{"connection": 1}] * 4
    assert accepted == [1]
    assert [json.loads(body) for body in seen] == [{"model": "m", "i": i} for i in range(4)]


def test_the_request_carries_the_headers_and_the_json_body() -> None:
    heads: list[bytes] = []

    def handle(conn: socket.socket, number: int) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        heads.append(head)
        length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))[15:])
        while len(body) < length:
            body += conn.recv(65536)
        reply(conn, body)  # echoed

    with raw_server(handle) as (url, _):
        payload = {"model": "m", "prompt": "naïve ✓ \u2028"}
        result = asyncio.run(_echo(url, payload))
    assert result.data == payload
    lines = heads[0].split(b"\r\n")
    assert lines[0] == b"POST /v1/chat/completions?x=1 HTTP/1.1"
    assert b"Authorization: Bearer sk-test" in lines and b"x-api-key: k" in lines
    assert any(line.startswith(b"Host: 127.0.0.1:") for line in lines)


async def _echo(url: str, payload: dict[str, Any]) -> HttpResult:
    async with new_client(2) as client:
        return await post_json(
            client,
            provider="openai",
            url=url + "/v1/chat/completions?x=1",
            payload=payload,
            headers={"Authorization": "Bearer sk-test", "x-api-key": "k"},
            timeout=10,
            model="m",
        )


def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        if read_request(conn):
            reply(conn, b'{"connection": %d}' % number)
        # then closed: the client sees the end while the connection is idle

    with raw_server(handle) as (url, accepted):

        async def go() -> list[Any]:
            async with new_client(4) as client:
                out = []
                for i in range(3):
                    if i:
                        await asyncio.sleep(0.1)
                    out.append((await _calls(url, 1, client=client))[0].data)
                return out

        assert asyncio.run(go()) == [{"connection": 1}, {"connection": 2}, {"connection": 3}]
    assert accepted == [1, 2, 3]


def test_a_request_on_a_connection_closed_as_it_went_out_is_sent_once_more_on_a_new_one() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        if number == 1:
            read_request(conn)
            reply(conn, b'{"answer": 1}')
            read_request(conn)  # the second request arrives on the kept connection...
            return  # ...which is closed without a byte of answer
        while read_request(conn):
            reply(conn, b'{"answer": %d}' % number)

    with raw_server(handle) as (url, accepted):
        assert [r.data for r in calls(url, 2)] == [{"answer": 1}, {"answer": 2}]
    assert accepted == [1, 2]


def test_a_new_connection_closed_without_an_answer_is_a_lost_connection_naming_the_address() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)

    with raw_server(handle) as (url, accepted), pytest.raises(ConnectionLost, match="127.0.0.1"):
        calls(url)
    assert accepted == [1]  # not sent twice: the connection was new


def test_an_answer_cut_off_midway_is_an_error_not_a_short_body() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10)
        conn.shutdown(socket.SHUT_RDWR)

    with raw_server(handle) as (url, _), pytest.raises(ConnectionLost, match="broke before the answer was complete"):
        calls(url)


def test_garbage_instead_of_http_is_a_clear_error() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)
        conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

    with raw_server(handle) as (url, _), pytest.raises(ConnectionLost) as caught:
        calls(url)
    assert url in str(caught.value) and "Traceback" not in str(caught.value)


def test_a_chunked_answer_arrives_whole() -> None:
    body = json.dumps({"text": "y" * 50_000}).encode()

    def handle(conn: socket.socket, number: int) -> None:
        while read_request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            for start in range(0, len(body), 7000):
                piece = body[start : start + 7000]
                conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                time.sleep(0.001)
            conn.sendall(b"0\r\n\r\n")

    with raw_server(handle) as (url, accepted):
        results = calls(url, 2)
    assert [r.data["text"] for r in results] == ["y" * 50_000] * 2
    assert accepted == [1]  # kept alive after a chunked answer too


def test_an_answer_larger_than_allowed_stops_at_the_limit() -> None:
    def announced(conn: socket.socket, number: int) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n" + b"{" * 1000)

    def endless(conn: socket.socket, number: int) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b"x" * 65536
        while True:
            conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))

    with raw_server(announced) as (url, _), pytest.raises(BadResponse, match="announces 999,999,999 bytes"):
        calls(url, max_bytes=100_000)
    with raw_server(endless) as (url, _), pytest.raises(BadResponse, match="went on past that") as caught:
        calls(url, max_bytes=300_000)
    assert caught.value.raw_body is not None and len(caught.value.raw_body) <= 2000


def test_a_server_that_never_answers_times_out_and_its_connection_is_not_reused() -> None:
    release = threading.Event()

    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)
        if number == 1:
            release.wait(10)
            return
        reply(conn, b'{"late": false}')

    with raw_server(handle) as (url, accepted):

        async def go() -> tuple[float, Any]:
            async with new_client(4) as client:
                started = time.monotonic()
                with pytest.raises(Timeout, match="within 0.3 s"):
                    await _calls(url, 1, client=client, timeout=0.3)
                took = time.monotonic() - started
                return took, (await _calls(url, 1, client=client))[0].data

        took, data = asyncio.run(go())
        release.set()
    assert took < 3 and data == {"late": False}
    assert accepted == [1, 2]


def test_nobody_listening_is_server_down_naming_the_address() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ServerDown, match=f"cannot connect to http://127.0.0.1:{port}"):
        calls(f"http://127.0.0.1:{port}")


def test_a_header_that_http_cannot_carry_is_refused_without_showing_its_value() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        while read_request(conn):
            reply(conn)

    with raw_server(handle) as (url, accepted):
        for bad in ("Bearer sk-secret\r\nX: y", "Bearer sk-sécret✓"):
            with pytest.raises(ServerDown) as caught:
                calls(url, headers={"Authorization": bad})
            assert "sk-s" not in str(caught.value) and "Authorization" in str(caught.value)
    assert accepted == []  # refused before connecting


def test_error_statuses_and_rate_limit_headers_are_read_as_on_the_httpx_path() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)
        body = b'{"error": {"message": "slow down"}}'
        conn.sendall(
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nx-ratelimit-remaining-requests: 0\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )

    with raw_server(handle) as (url, _), pytest.raises(RateLimited, match="slow down") as caught:
        calls(url)
    assert caught.value.retry_after == 2.0
    assert caught.value.rate_limits is not None and caught.value.rate_limits.remaining_requests == 0


def test_at_most_the_clients_connections_are_opened() -> None:
    open_now = [0]
    most = [0]
    lock = threading.Lock()

    def handle(conn: socket.socket, number: int) -> None:
        with lock:
            open_now[0] += 1
            most[0] = max(most[0], open_now[0])
        try:
            while read_request(conn):
                time.sleep(0.05)
                reply(conn)
        finally:
            with lock:
                open_now[0] -= 1

    with raw_server(handle) as (url, accepted):
        results = calls(url, 12, concurrent=True, connections=3)
    assert len(results) == 12 and len(accepted) == 3 and most[0] == 3


def test_at_the_cap_an_idle_connection_to_another_server_makes_room() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        while read_request(conn):
            reply(conn)

    with raw_server(handle) as (first, _), raw_server(handle) as (second, _):

        async def go() -> int:
            async with new_client(1) as client:
                await _calls(first, 1, client=client)  # its connection stays open, idle
                async with asyncio.timeout(5):  # before: waited for a free slot for ever
                    results = await _calls(second, 2, client=client)
                return len(results)

        assert asyncio.run(go()) == 2


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_https_on_a_direct_connection_verifies_the_certificate(tmp_path: Path, monkeypatch) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"]
        + ["-addext", "subjectAltName=DNS:localhost"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    def handle(conn: socket.socket, number: int) -> None:
        try:
            tls = context.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            return  # the client refused the certificate
        while read_request(tls):
            reply(tls)

    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    with raw_server(handle) as (url, _):
        https = url.replace("http://127.0.0.1", "https://localhost")
        with pytest.raises(ServerDown, match="(?i)certificate"):
            calls(https)  # a certificate nobody vouched for
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        assert calls(https, 2)[1].data == json.loads(ANSWER)
