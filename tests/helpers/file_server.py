"""A file server on 127.0.0.1 with HTTP Range support and faults: a first transfer cut half-way,
a web page instead of a file, a transfer held after some bytes until the test lets it go on. Serves files from disk in chunks (a 250 MB model is not read into
memory)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Served:
    path: Path | None = None
    body: bytes = b""
    content_type: str = "application/octet-stream"
    cut_after: int | None = None  # the next full (non-Range) transfer stops after this many bytes
    cut_every: int | None = None  # every transfer (Range or not) stops after this many bytes
    hold_after: int | None = None  # the next transfer waits after this many bytes until ``release`` is set
    release: threading.Event = field(default_factory=threading.Event)

    def size(self) -> int:
        return self.path.stat().st_size if self.path else len(self.body)

    def read(self, start: int, count: int) -> bytes:
        if self.path is None:
            return self.body[start : start + count]
        with open(self.path, "rb") as handle:
            handle.seek(start)
            return handle.read(count)


@dataclass
class FileServer:
    files: dict[str, Served] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    port: int = 0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


class _Handler(http.server.BaseHTTPRequestHandler):
    state: FileServer

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # http.server's naming
        state = self.server.state  # type: ignore[attr-defined]
        range_header = self.headers.get("Range")
        state.requests.append((self.path, range_header))
        served = state.files.get(self.path)
        if served is None:
            self.send_error(404)
            return
        size = served.size()
        start = 0
        if range_header and range_header.startswith("bytes="):
            start = int(range_header[6:].split("-")[0])
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", served.content_type)
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        limit = size
        if served.cut_after is not None and not range_header:
            limit, served.cut_after = served.cut_after, None
        if served.cut_every is not None:
            limit = min(size, start + served.cut_every)
        position = start
        hold, served.hold_after = served.hold_after, None
        while position < limit:
            step = min(1 << 20, limit - position)
            if hold is not None and position < hold:
                step = min(step, hold - position)
            block = served.read(position, step)
            self.wfile.write(block)
            position += len(block)
            if hold is not None and position == hold:
                self.wfile.flush()
                served.release.wait(60)  # the test checks what arrived, then lets the rest go
        if limit < size:
            self.wfile.flush()
            self.connection.shutdown(2)  # the connection cut half-way


@contextmanager
def file_server() -> Iterator[FileServer]:
    state = FileServer()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.state = state  # type: ignore[attr-defined]
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
