"""Model calls honour the network's proxy and certificate settings; loopback always goes direct
(issue 16, point 14). Everything runs on 127.0.0.1: a small forward/CONNECT proxy, a TLS server
with its own certificate authority for a made-up host name, and the client under test."""

from __future__ import annotations

import asyncio
import json
import select
import shutil
import socket
import socketserver
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from thoughtdesk.core.generation.backends.http import new_client, post_json
from thoughtdesk.core.settings import transport

HOST = "api.example.test"  # never resolved: only the proxy on 127.0.0.1 is ever connected to
ANSWER = {"choices": [{"message": {"content": "via the proxy"}}]}


class Proxy(socketserver.ThreadingTCPServer):
    """A forward proxy (absolute-URI requests, answered itself) and a CONNECT proxy (tunnels
    ``HOST:443`` to ``upstream``), recording every request line it receives."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, upstream: tuple[str, int] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        self.upstream = upstream
        self.seen: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class ProxyHandler(socketserver.StreamRequestHandler):
    server: Proxy

    def handle(self) -> None:
        line = self.rfile.readline().decode("latin-1").strip()
        headers = {}
        while (header := self.rfile.readline().decode("latin-1").strip()) != "":
            name, _, value = header.partition(":")
            headers[name.lower()] = value.strip()
        self.server.seen.append(line)
        method, target, _ = line.split(" ", 2)
        if method == "CONNECT":
            if self.server.upstream is None or target != f"{HOST}:443":
                self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            upstream = socket.create_connection(self.server.upstream)
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            _pipe(self.connection, upstream)
            return
        self.rfile.read(int(headers.get("content-length", "0")))
        body = json.dumps(ANSWER).encode()
        self.wfile.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )


def _pipe(a: socket.socket, b: socket.socket) -> None:
    sockets = [a, b]
    try:
        while True:
            ready, _, _ = select.select(sockets, [], [], 5)
            if not ready:
                return
            for source in ready:
                data = source.recv(65536)
                if not data:
                    return
                (b if source is a else a).sendall(data)
    finally:
        b.close()


def serve(server: socketserver.BaseServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


class TlsServer(socketserver.ThreadingTCPServer):
    """An HTTPS server for ``HOST`` on 127.0.0.1 answering every POST with ``ANSWER``."""

    daemon_threads = True

    def __init__(self, cert: Path, key: Path) -> None:
        super().__init__(("127.0.0.1", 0), TlsHandler)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)

    def get_request(self):  # socketserver's hook: wrap each accepted connection in TLS
        sock, address = super().get_request()
        return self.context.wrap_socket(sock, server_side=True), address


class TlsHandler(ProxyHandler):
    server: TlsServer  # type: ignore[assignment]  # reuses ProxyHandler, whose server is a Proxy

    def handle(self) -> None:
        line = self.rfile.readline().decode("latin-1").strip()
        length = 0
        while (header := self.rfile.readline().decode("latin-1").strip()) != "":
            if header.lower().startswith("content-length:"):
                length = int(header.split(":", 1)[1])
        self.rfile.read(length)
        body = json.dumps({**ANSWER, "request": line}).encode()
        self.wfile.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )


@pytest.fixture
def proxy_env(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def call(url: str) -> dict:
    async def go() -> dict:
        async with new_client() as client:
            result = await post_json(
                client, provider="openai", url=url, payload={"model": "m"}, headers={}, timeout=10, model="m"
            )
            return result.data

    return asyncio.run(go())


def test_model_calls_go_through_the_environments_proxy(proxy_env):
    proxy = Proxy()
    for _ in serve(proxy):
        proxy_env.setenv("HTTP_PROXY", proxy.url)
        assert call(f"http://{HOST}/v1/chat/completions") == ANSWER
    assert proxy.seen == [f"POST http://{HOST}/v1/chat/completions HTTP/1.1"]


def test_loopback_goes_direct_whatever_the_proxy_settings(proxy_env):
    proxy, local = Proxy(), Proxy()  # `local` stands for a model server on this machine
    for _ in serve(proxy):
        for _ in serve(local):
            proxy_env.setenv("HTTP_PROXY", proxy.url)
            proxy_env.setenv("HTTPS_PROXY", proxy.url)
            proxy_env.setenv("ALL_PROXY", proxy.url)
            url = f"{local.url}/v1/chat/completions"
            assert call(url) == ANSWER
            assert call(url.replace("127.0.0.1", "localhost")) == ANSWER
    assert proxy.seen == []  # never asked
    assert len(local.seen) == 2


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_https_through_a_connect_proxy_trusts_ssl_cert_file(proxy_env, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            f"/CN={HOST}",
            "-addext",
            f"subjectAltName=DNS:{HOST}",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    tls = TlsServer(cert, key)
    proxy = Proxy(upstream=("127.0.0.1", tls.server_address[1]))
    for _ in serve(tls):
        for _ in serve(proxy):
            proxy_env.setenv("HTTPS_PROXY", proxy.url)
            # Without the network's certificate authority the made-up host is not trusted...
            with pytest.raises(Exception, match="(?i)certificate|ssl"):
                call(f"https://{HOST}/v1/chat/completions")
            # ...with SSL_CERT_FILE naming it (what IT hands out), the call goes through.
            proxy_env.setenv("SSL_CERT_FILE", str(cert))
            assert transport.trust_source() == f"SSL_CERT_FILE ({cert})"
            data = call(f"https://{HOST}/v1/chat/completions")
    assert data["choices"] == ANSWER["choices"] and data["request"] == "POST /v1/chat/completions HTTP/1.1"
    assert proxy.seen == [f"CONNECT {HOST}:443 HTTP/1.1"] * 2
