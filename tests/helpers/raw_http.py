"""A raw TCP server on 127.0.0.1 for the HTTP client tests: each connection handled by a
function in its own thread, which reads requests and writes whatever bytes it likes (kept
alive, dropped, stalled, broken, not HTTP at all)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Handler = Callable[[socket.socket, int], None]


@contextmanager
def raw_server(handle: Handler) -> Iterator[tuple[str, list[int]]]:
    """A TCP server on 127.0.0.1 calling ``handle(connection, number)`` in a thread per
    connection; yields its base URL and the list of connection numbers accepted."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[int] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(len(accepted) + 1)
            threading.Thread(target=_run, args=(handle, conn, len(accepted)), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{port}", accepted
    finally:
        listener.close()


def _run(handle: Handler, conn: socket.socket, number: int) -> None:
    try:
        handle(conn, number)
    except OSError:
        pass
    finally:
        conn.close()


def read_request(conn: socket.socket) -> bytes:
    """One HTTP/1.1 request (head and Content-Length body); b"" when the client closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")), 0
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return body


def answer(conn: socket.socket, body: bytes) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
