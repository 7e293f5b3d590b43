"""The provider clients' sockets on asyncio directly (core/generation/backends/network.py):
against real servers on 127.0.0.1 that keep, drop, stall and break connections."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import httpx
import pytest

from tests.helpers.raw_http import answer, raw_server, read_request
from thoughtdesk.core.generation.backends.http import ShardedTransport, new_client
from thoughtdesk.core.generation.backends.network import AsyncioNetworkBackend


def post(
    url: str, content: bytes = b"{}", timeout: float | None = 10.0, times: int = 1, pause: float = 0.0
) -> list[bytes]:
    async def go() -> list[bytes]:
        bodies = []
        async with new_client(8) as client:
            for i in range(times):
                if i:
                    await asyncio.sleep(pause)
                response = await client.post(url, content=content, timeout=timeout)
                response.raise_for_status()
                bodies.append(response.content)
        return bodies

    return asyncio.run(go())


def test_provider_clients_open_their_connections_on_asyncio() -> None:
    # Set through a private attribute of httpx/httpcore: if a release renames it, the clients
    # silently fall back to anyio (slower at concurrency 64); this says so.
    client = new_client(40)
    transport = client._transport
    assert isinstance(transport, ShardedTransport) and len(transport._pools) == 5
    for pool in transport._pools:
        assert isinstance(pool._pool._network_backend, AsyncioNetworkBackend)
    asyncio.run(client.aclose())


def test_a_connection_is_kept_alive_and_one_the_server_closed_is_replaced() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        for _ in range(2):  # two answers on this connection, then it is closed by the server
            if not read_request(conn):
                return
            answer(conn, b"connection %d" % number)

    with raw_server(handle) as (url, accepted):
        bodies = post(url, times=5, pause=0.05)
    # 2 on the first connection, 2 on a second one once the first was seen closed, 1 on a third
    assert bodies == [b"connection 1", b"connection 1", b"connection 2", b"connection 2", b"connection 3"]
    assert accepted == [1, 2, 3]


def test_a_large_answer_and_a_large_request_arrive_whole() -> None:
    big = bytes(range(256)) * (24 * 1024)  # 6 MiB: beyond the read buffer's high-water mark

    def handle(conn: socket.socket, number: int) -> None:
        body = read_request(conn)
        time.sleep(0.2)  # the client's writes fill the socket's buffers meanwhile
        answer(conn, body[::-1])

    with raw_server(handle) as (url, _):
        assert post(url, content=big) == [big[::-1]]


def test_a_server_that_never_answers_times_out() -> None:
    release = threading.Event()

    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)
        release.wait(10)

    with raw_server(handle) as (url, _):
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            post(url, timeout=0.3)
        assert time.monotonic() - started < 3
        release.set()


def test_an_answer_cut_off_midway_is_an_error_not_a_short_body() -> None:
    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10)
        conn.shutdown(socket.SHUT_RDWR)

    with raw_server(handle) as (url, _), pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        post(url)


def test_nobody_listening_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(httpx.ConnectError):
        post(f"http://127.0.0.1:{port}")
