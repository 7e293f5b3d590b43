"""httpcore's sockets on asyncio directly, for the provider clients (docs/runs.md, "Throughput").

httpcore reaches the network through a pluggable backend; under asyncio its default goes
through anyio, whose per-call layers (cancel scopes on every read and write, a dictionary of
socket attributes built for each "is this idle connection readable?" check) cost about a
quarter of the client's CPU per request. At concurrency 64 that CPU, not the server, held the
throughput below twice that of concurrency 32. :class:`AsyncioNetworkBackend` implements the
same interface (``httpcore.AsyncNetworkBackend``) on an ``asyncio.Protocol``: reads wait on
one future, an idle connection is readable when its buffer holds bytes or the peer closed it.

:func:`use_asyncio_network` puts it into an ``httpx.AsyncHTTPTransport`` (proxies included).
httpx does not take a network backend as an argument, so this sets the connection pool's
backend attribute; if an httpx/httpcore release renames it, the transport keeps its default
backend (slower, same behaviour) and tests/core/generation/backends/test_network.py fails.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

#: Bytes buffered from a connection before reading from the socket pauses (answers are read
#: in chunks by h11 right away; this bounds memory if a reader falls behind).
_HIGH_WATER = 1024 * 1024
_LOW_WATER = 256 * 1024


class _Connection(asyncio.Protocol):
    """The bytes received, end of stream and error of one connection, and one waiter for each
    of reading and draining."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.read_waiter: asyncio.Future[None] | None = None
        self.drain_waiter: asyncio.Future[None] | None = None
        self.reading_paused = False
        self.writing_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _HIGH_WATER and not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake_reader()
        waiter, self.drain_waiter = self.drain_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        waiter, self.drain_waiter = self.drain_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake_reader(self) -> None:
        waiter, self.read_waiter = self.read_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def woken(self, *, reading: bool, timeout: float | None) -> None:
        """Wait until bytes or the end arrive (``reading``) or the send buffer drains;
        TimeoutError after ``timeout`` seconds."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if reading:
            self.read_waiter = waiter
        else:
            self.drain_waiter = waiter
        try:
            await _wait(waiter, timeout)
        finally:
            if self.read_waiter is waiter:
                self.read_waiter = None
            if self.drain_waiter is waiter:
                self.drain_waiter = None

    def take(self, max_bytes: int) -> bytes:
        data = bytes(self.buffer[:max_bytes])
        del self.buffer[:max_bytes]
        if self.reading_paused and len(self.buffer) < _LOW_WATER and self.transport is not None:
            self.reading_paused = False
            self.transport.resume_reading()
        return data


async def _wait(future: asyncio.Future[None], timeout: float | None) -> None:
    """Wait for ``future``; TimeoutError after ``timeout`` seconds (None: no limit). A timer
    on the loop, not ``asyncio.timeout``: this runs for every read of every answer."""
    if timeout is None:
        await future
        return
    loop = asyncio.get_running_loop()
    timer = loop.call_later(timeout, _expire, future)
    try:
        await future
    finally:
        timer.cancel()


def _expire(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


class AsyncioNetworkStream(httpcore.AsyncNetworkStream):
    """One TCP (or TLS, or Unix socket) connection for httpcore."""

    def __init__(self, transport: asyncio.Transport, connection: _Connection) -> None:
        self._transport = transport
        self._connection = connection

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        connection = self._connection
        if not connection.buffer and not connection.eof:
            try:
                await connection.woken(reading=True, timeout=timeout)
            except TimeoutError:
                raise httpcore.ReadTimeout(f"no data within {timeout:g} s") from None
        if connection.buffer:
            return connection.take(max_bytes)
        if connection.error is not None:
            raise httpcore.ReadError(str(connection.error) or type(connection.error).__name__)
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        connection = self._connection
        if connection.error is not None or self._transport.is_closing():
            raise httpcore.WriteError(str(connection.error or "the connection is closed"))
        self._transport.write(buffer)
        if connection.writing_paused:
            try:
                await connection.woken(reading=False, timeout=timeout)
            except TimeoutError:
                raise httpcore.WriteTimeout(f"could not send within {timeout:g} s") from None
            if connection.error is not None:
                raise httpcore.WriteError(str(connection.error))

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            started = loop.start_tls(self._transport, self._connection, ssl_context, server_hostname=server_hostname)
            transport = await asyncio.wait_for(started, timeout)
        except TimeoutError:
            self._transport.close()
            raise httpcore.ConnectTimeout(f"TLS handshake not done within {timeout:g} s") from None
        except (OSError, ssl.SSLError, ConnectionError) as error:
            self._transport.close()
            raise httpcore.ConnectError(str(error)) from error
        assert isinstance(transport, asyncio.Transport)
        self._connection.transport = transport
        return AsyncioNetworkStream(transport, self._connection)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # an idle kept-alive connection with bytes waiting or closed by the peer: not reusable
            return bool(self._connection.buffer) or self._connection.eof
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


def _apply(transport: asyncio.BaseTransport, socket_options: Iterable[Any] | None) -> None:
    sock = transport.get_extra_info("socket")
    for option in socket_options or ():
        sock.setsockopt(*option)


class AsyncioNetworkBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend on asyncio's event loop (see the module docstring)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            opening = loop.create_connection(
                _Connection,
                host,
                port,
                local_addr=(local_address, 0) if local_address else None,
                happy_eyeballs_delay=0.25,  # IPv6 and IPv4 raced, as anyio does
            )
            transport, connection = await asyncio.wait_for(opening, timeout)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection to {host}:{port} within {timeout:g} s") from None
        except OSError as error:
            raise httpcore.ConnectError(str(error) or type(error).__name__) from error
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        _apply(transport, socket_options)
        assert isinstance(transport, asyncio.Transport)
        return AsyncioNetworkStream(transport, connection)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            transport, connection = await asyncio.wait_for(loop.create_unix_connection(_Connection, path), timeout)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection to {path} within {timeout:g} s") from None
        except OSError as error:
            raise httpcore.ConnectError(str(error) or type(error).__name__) from error
        _apply(transport, socket_options)
        assert isinstance(transport, asyncio.Transport)
        return AsyncioNetworkStream(transport, connection)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def use_asyncio_network(transport: httpx.AsyncHTTPTransport) -> bool:
    """Make ``transport``'s connection pool (direct or through a proxy) open its connections
    with :class:`AsyncioNetworkBackend`; False if this httpx/httpcore has no such attribute
    (the transport then keeps its default backend)."""
    pool = getattr(transport, "_pool", None)
    if pool is None or not hasattr(pool, "_network_backend"):
        return False
    pool._network_backend = AsyncioNetworkBackend()
    return True
