"""Provider calls on direct connections: h11 on an ``asyncio.Protocol``, without httpx's layers.

A model call is one JSON POST on a kept-alive HTTP/1.1 connection. Through httpx the client
spent about 1.2 ms of CPU per call (URL and header objects, the client's auth, redirect and
cookie steps, httpcore's pool with its locks and cancel scopes), which at concurrency 64 was
about half the CPU of a whole run: with one event-loop thread, that CPU, not the server, held
a run at concurrency 64 below twice the throughput of 32. :class:`DirectPool` sends the same
POST with h11 (the HTTP/1.1 engine httpcore itself uses) on asyncio's transports, at about a
quarter of that CPU (docs/runs.md, "Throughput").

It is used by :func:`~.http.post_json` for the clients :func:`~.http.new_client` makes, on
connections without a proxy (loopback always; other hosts when the environment names no proxy).
Everything else (proxies, the batch endpoints' uploads, any other client) goes through httpx.
Failures are raised as httpx's exceptions, so that :func:`~.http.post_json` words them the same
whichever path carried the call.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import ssl
from dataclasses import dataclass

import h11
import httpx

#: The default ports, left out of the Host header as browsers and httpx do.
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: Bytes received and not yet read above which a connection stops reading (as network.py).
_HIGH_WATER = 1024 * 1024
#: Headers every call sends unless the caller gives its own (names compared case-insensitively).
_DEFAULT_HEADERS = (
    (b"User-Agent", b"ThoughtDesk"),
    (b"Accept", b"application/json"),
    (b"Content-Type", b"application/json"),
)
#: Headers that frame the message: always ours.
_FRAMING = frozenset({"host", "content-length", "transfer-encoding"})


class BodyTooLarge(Exception):
    """The answer is longer than the caller allows: ``declared`` (its Content-Length) or, when
    it went on past the limit, ``head`` (its first bytes)."""

    def __init__(self, declared: int | None, head: bytes = b"") -> None:
        super().__init__("the answer is larger than allowed")
        self.declared = declared
        self.head = head


class CredentialsInAddress(httpx.UnsupportedProtocol):
    """The address carries a user name or password (``user:pass@``): not sent (see
    :func:`~.http.post_json`, which refuses such an address on every path)."""


@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str
    host: str  # ASCII (an IDN host in its xn-- form), as connected to and sent as SNI
    port: int
    host_header: bytes
    target: bytes  # path and query, percent-encoded as httpx sends them
    credentials: bool  # user:pass@ in the address


@functools.lru_cache(maxsize=256)
def parse_origin(url: str) -> Origin:
    """Where ``url`` goes, parsed as httpx parses it (IDN hosts in their ASCII form, a path
    with spaces or non-ASCII characters percent-encoded as UTF-8)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        raise httpx.UnsupportedProtocol(f"the address is not a valid URL ({error})") from None
    scheme = parsed.scheme
    if scheme not in _DEFAULT_PORTS:
        raise httpx.UnsupportedProtocol("the address is not http:// or https://")
    host = parsed.raw_host.decode("ascii")
    port = parsed.port or _DEFAULT_PORTS[scheme]
    if not host:
        raise httpx.UnsupportedProtocol("the address names no host")
    if not 0 < port < 65536:
        raise httpx.UnsupportedProtocol(f"the address has an invalid port ({port})")
    shown = f"[{host}]" if ":" in host else host
    host_header = shown if port == _DEFAULT_PORTS[scheme] else f"{shown}:{port}"
    return Origin(scheme, host, port, host_header.encode("ascii"), parsed.raw_path, bool(parsed.userinfo))


class _Connection(asyncio.Protocol):
    """One kept-alive connection. Bytes received wait in ``pending`` until the call reading
    the answer hands them to h11 (reading pauses above :data:`_HIGH_WATER` of them, so a server
    sending faster than the answer is read fills no memory); one waiter at a time is woken when
    bytes, the end or room to write arrive. Bytes arriving while no call is under way close the
    connection (a server may not send them; kept, they would grow without bound)."""

    def __init__(self) -> None:
        self.h11 = h11.Connection(h11.CLIENT)
        self.transport: asyncio.Transport | None = None
        self.closed = False  # the server closed it, or we did
        self.eof_given = False  # h11 was told of the end
        self.error: BaseException | None = None
        self.busy = False  # a call is under way on it
        self.received = 0  # bytes received for the request under way
        self.pending = bytearray()
        self.reading_paused = False
        self.waiter: asyncio.Future[None] | None = None
        self.writing_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if not self.busy:
            self.close()
            return
        self.received += len(data)
        self.pending += data
        if len(self.pending) > _HIGH_WATER and not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.error = exc
        self._wake()

    def feed(self) -> bool:
        """Hand what was received (then the end, once) to h11; False when there was nothing."""
        if self.pending:
            data = bytes(self.pending)
            self.pending.clear()
            if self.reading_paused and self.transport is not None and not self.closed:
                self.reading_paused = False
                self.transport.resume_reading()
            self.h11.receive_data(data)
            return True
        if self.closed and not self.eof_given:
            self.eof_given = True
            self.h11.receive_data(b"")
            return True
        return False

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._wake()

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        self.waiter = asyncio.get_running_loop().create_future()
        await self.waiter

    def reusable(self) -> bool:
        """Idle and still open: nothing was received since its last answer."""
        return (
            not self.closed
            and not self.pending
            and self.transport is not None
            and not self.transport.is_closing()
            and self.h11.our_state is h11.IDLE
            and self.h11.their_state is h11.IDLE
            and self.h11.trailing_data == (b"", False)
        )

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class DirectPool:
    """Kept-alive HTTP/1.1 connections per origin, at most ``max_connections`` open in all;
    TLS verified with ``ssl_context``."""

    def __init__(self, max_connections: int, ssl_context: ssl.SSLContext) -> None:
        self._max = max(1, max_connections)
        self._ssl = ssl_context
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._open = 0
        self._slot_waiters: list[asyncio.Future[None]] = []
        self._closed = False

    async def post(
        self, url: str, body: bytes, headers: dict[str, str], max_bytes: int
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """POST ``body`` to ``url``: (status, headers, body) of the answer, its body at most
        ``max_bytes`` (else :class:`BodyTooLarge`). Connection failures raise httpx's errors.
        ``headers`` replace the defaults of the same name (case-insensitively); Host and
        Content-Length are always ours. A kept-alive connection the server closed as the
        request went out is replaced once. After :meth:`close`, RuntimeError (as httpx's
        closed client)."""
        if self._closed:
            raise RuntimeError("the connection pool is closed")
        origin = parse_origin(url)
        if origin.credentials:
            raise CredentialsInAddress("the address carries a user name or password (user:pass@), which is not sent")
        head = self._head(origin, headers, len(body))
        key = (origin.scheme, origin.host, origin.port)
        connection, reused = await self._acquire(key)
        try:
            return await self._exchange(connection, head, origin.target, body, max_bytes)
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
            if not reused or connection.received:
                raise
        finally:
            self._release(key, connection)
        # The server closed the kept-alive connection as the request went out: another one.
        connection, _ = await self._acquire(key)
        try:
            return await self._exchange(connection, head, origin.target, body, max_bytes)
        finally:
            self._release(key, connection)

    @staticmethod
    def _head(origin: Origin, headers: dict[str, str], length: int) -> list[tuple[bytes, bytes]]:
        """The request's headers: ours, the caller's in place of defaults of the same name."""
        chosen: dict[bytes, tuple[bytes, bytes]] = {name.lower(): (name, value) for name, value in _DEFAULT_HEADERS}
        for name, value in headers.items():
            try:
                if "\r" in value or "\n" in value or "\0" in value:
                    raise UnicodeEncodeError("latin-1", value, 0, 1, "a line break")
                encoded = (name.encode("ascii"), value.encode("latin-1"))
            except UnicodeEncodeError:
                # the value is not shown: it may be an API key
                raise httpx.LocalProtocolError(f"the {name} header has characters HTTP cannot carry") from None
            if name.lower() not in _FRAMING:
                chosen[encoded[0].lower()] = encoded
        return [(b"Host", origin.host_header), *chosen.values(), (b"Content-Length", str(length).encode())]

    async def _acquire(self, key: tuple[str, str, int]) -> tuple[_Connection, bool]:
        """A kept-alive connection to ``key`` (and True), else a new one (and False) once the
        cap allows: an idle connection to another origin is closed to make room."""
        while True:
            if self._closed:
                raise RuntimeError("the connection pool is closed")
            idle = self._idle.get(key)
            while idle:
                connection = idle.pop()
                if connection.reusable():
                    return connection, True
                connection.close()
                self._open -= 1
            if self._open < self._max or self._evict_idle():
                return await self._connect(key), False
            waiter = asyncio.get_running_loop().create_future()
            self._slot_waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._wake_slot()  # woken for a free slot, then cancelled: the next one gets it
                raise
            finally:
                if waiter in self._slot_waiters:
                    self._slot_waiters.remove(waiter)

    def _evict_idle(self) -> bool:
        """Close one idle connection (of any origin); False if there is none."""
        for connections in self._idle.values():
            if connections:
                connections.pop(0).close()  # the longest idle
                self._open -= 1
                return True
        return False

    async def _connect(self, key: tuple[str, str, int]) -> _Connection:
        scheme, host, port = key
        self._open += 1
        loop = asyncio.get_running_loop()
        try:
            _, connection = await loop.create_connection(
                _Connection,
                host,
                port,
                ssl=self._ssl if scheme == "https" else None,
                server_hostname=host if scheme == "https" else None,
                happy_eyeballs_delay=0.25,  # IPv6 and IPv4 raced, as httpx does
            )
        except (OSError, ssl.SSLError) as error:
            self._open -= 1
            self._wake_slot()
            raise httpx.ConnectError(str(error) or type(error).__name__) from None
        except BaseException:
            self._open -= 1
            self._wake_slot()
            raise
        sock = connection.transport.get_extra_info("socket") if connection.transport else None
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection

    def _release(self, key: tuple[str, str, int], connection: _Connection) -> None:
        if connection.reusable() and not self._closed:
            self._idle.setdefault(key, []).append(connection)
        else:
            connection.close()
            self._open -= 1
        self._wake_slot()

    def _wake_slot(self) -> None:
        for waiter in self._slot_waiters:
            if not waiter.done():
                waiter.set_result(None)
                return

    async def _exchange(
        self, connection: _Connection, head: list[tuple[bytes, bytes]], target: bytes, body: bytes, max_bytes: int
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        state = connection.h11
        transport = connection.transport
        if transport is None or connection.closed or transport.is_closing():
            raise httpx.WriteError("the connection is closed")
        connection.received = 0
        connection.busy = True
        finished = False
        try:
            try:
                data = state.send(h11.Request(method=b"POST", target=target, headers=head))
                data += state.send(h11.Data(data=body)) or b""
                data += state.send(h11.EndOfMessage()) or b""
            except h11.LocalProtocolError:
                # h11's message quotes the value it refused, which may be an API key: not shown
                raise httpx.LocalProtocolError(
                    "the request could not be written as HTTP/1.1 (a header or the address has characters "
                    "HTTP cannot carry)"
                ) from None
            transport.write(data)
            while connection.writing_paused and not connection.closed:
                await connection.wait()
            status = 0
            headers: list[tuple[bytes, bytes]] = []
            chunks: list[bytes] = []
            size = 0
            while True:
                try:
                    event = state.next_event()
                except h11.RemoteProtocolError as error:
                    raise self._broken(connection, str(error)) from None
                if event is h11.NEED_DATA:
                    if connection.feed():
                        continue
                    if connection.closed:
                        raise self._broken(connection, "the server closed the connection mid-answer")
                    await connection.wait()
                    continue
                kind = type(event)
                if kind is h11.Response:
                    status = event.status_code  # type: ignore[union-attr]
                    headers = list(event.headers)  # type: ignore[union-attr]
                    declared = _content_length(headers)
                    if declared is not None and declared > max_bytes:
                        raise BodyTooLarge(declared)
                elif kind is h11.Data:
                    piece = bytes(event.data)  # type: ignore[union-attr]
                    size += len(piece)
                    if size > max_bytes:
                        raise BodyTooLarge(None, (b"".join(chunks) + piece)[:2000])
                    chunks.append(piece)
                elif kind is h11.EndOfMessage:
                    break
                elif kind is h11.ConnectionClosed:
                    raise self._broken(connection, "the server closed the connection without answering")
                # h11.InformationalResponse (1xx): the answer follows
            if state.our_state is h11.DONE and state.their_state is h11.DONE:
                state.start_next_cycle()
            else:
                connection.close()
            finished = True
            return status, headers, b"".join(chunks)
        finally:
            connection.busy = False
            if not finished:
                connection.close()  # cancelled, timed out or failed: never reused half-read

    @staticmethod
    def _broken(connection: _Connection, message: str) -> httpx.TransportError:
        if connection.error is not None:
            return httpx.ReadError(str(connection.error) or type(connection.error).__name__)
        return httpx.RemoteProtocolError(message)

    def close(self) -> None:
        """Close every idle connection; those in use close when their call ends, and calls
        made from now on are refused (RuntimeError, as httpx's closed client)."""
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
                self._open -= 1
        self._idle.clear()
        for waiter in self._slot_waiters:  # calls waiting for a slot: refused
            if not waiter.done():
                waiter.set_result(None)


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


__all__ = ["BodyTooLarge", "CredentialsInAddress", "DirectPool", "Origin", "parse_origin"]
