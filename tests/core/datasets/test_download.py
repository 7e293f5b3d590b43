"""Downloads against a real HTTP server on 127.0.0.1 with Range support and fault injection."""

from __future__ import annotations

import hashlib
import http.server
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from thoughtdesk.core.datasets.catalogue import DatasetInfo, SourceFile
from thoughtdesk.core.datasets.download import DownloadError, download_dataset
from thoughtdesk.core.errors import Cancelled

PAYLOAD = bytes(range(256)) * 800  # 204,800 bytes


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.cut_once: set[str] = set()  # paths whose next full response stops half-way


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        range_header = self.headers.get("Range")
        self.server.requests.append((self.path, range_header))
        data = self.server.files.get(self.path)
        if data is None:
            self.send_error(404)
            return
        start = 0
        if range_header and range_header.startswith("bytes="):
            start = int(range_header[6:].split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path in self.server.cut_once and not range_header:
            self.server.cut_once.discard(self.path)
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(2)  # connection cut half-way
            return
        self.wfile.write(body)


@pytest.fixture
def server():
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _info(
    server: _Server, path: str = "/data/test.jsonl", sha: str | None = None, size: int | None = len(PAYLOAD)
) -> DatasetInfo:
    url = f"http://127.0.0.1:{server.server_address[1]}{path}"
    return DatasetInfo(
        name="demo",
        title="Demo",
        description="",
        citation="",
        licence="",
        homepage="",
        answer_type="text",
        file_format="bytes",
        splits=("test",),
        file_patterns=(),
        sources=(SourceFile(url, "sub/test.jsonl", size, sha or hashlib.sha256(PAYLOAD).hexdigest(), "test"),),
    )


def _no_complete_file(cache: Path) -> bool:
    return not (cache / "demo" / "sub" / "test.jsonl").exists()


def test_download_success_progress_and_cache_reuse(server, tmp_path):
    server.files["/data/test.jsonl"] = PAYLOAD
    seen: list[tuple[int, int | None]] = []
    paths = download_dataset(_info(server), tmp_path, progress=lambda d, t: seen.append((d, t)))
    assert paths == [tmp_path / "demo" / "sub" / "test.jsonl"]
    assert paths[0].read_bytes() == PAYLOAD
    assert seen[-1] == (len(PAYLOAD), len(PAYLOAD))
    assert all(b[0] >= a[0] for a, b in zip(seen, seen[1:], strict=False))
    requests_before = len(server.requests)
    assert download_dataset(_info(server), tmp_path) == paths
    assert len(server.requests) == requests_before  # verified file reused, no request


def test_404_names_url_and_leaves_nothing(server, tmp_path):
    with pytest.raises(DownloadError) as caught:
        download_dataset(_info(server, "/missing.jsonl"), tmp_path)
    message = str(caught.value)
    assert "/missing.jsonl" in message and "HTTP 404" in message and "by hand" in message
    assert _no_complete_file(tmp_path)


def test_connection_cut_then_resume_with_range(server, tmp_path):
    server.files["/data/test.jsonl"] = PAYLOAD
    server.cut_once.add("/data/test.jsonl")
    paths = download_dataset(_info(server), tmp_path)
    assert paths[0].read_bytes() == PAYLOAD
    ranges = [r for p, r in server.requests if p == "/data/test.jsonl"]
    assert ranges[0] is None and ranges[1] is not None and ranges[1].startswith("bytes=")
    assert int(ranges[1][6:].split("-")[0]) > 0
    assert not list((tmp_path / "demo" / "sub").glob("*.part"))


def test_resume_from_existing_part_file(server, tmp_path):
    server.files["/data/test.jsonl"] = PAYLOAD
    part = tmp_path / "demo" / "sub" / "test.jsonl.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PAYLOAD[:1000])
    download_dataset(_info(server), tmp_path)
    assert server.requests[0][1] == "bytes=1000-"
    assert (tmp_path / "demo" / "sub" / "test.jsonl").read_bytes() == PAYLOAD


def test_wrong_checksum_leaves_no_complete_file(server, tmp_path):
    server.files["/data/test.jsonl"] = PAYLOAD
    with pytest.raises(DownloadError, match="checksum mismatch") as caught:
        download_dataset(_info(server, sha="0" * 64), tmp_path)
    assert "/data/test.jsonl" in str(caught.value)
    assert _no_complete_file(tmp_path)
    assert not list((tmp_path / "demo" / "sub").glob("*"))  # the bad bytes are gone too


def test_wrong_size_is_an_error(server, tmp_path):
    server.files["/data/test.jsonl"] = PAYLOAD
    with pytest.raises(DownloadError, match="expected 10"):
        download_dataset(_info(server, size=10, sha=None), tmp_path)
    assert _no_complete_file(tmp_path)


def test_cancel_keeps_only_part_file(server, tmp_path):
    server.files["/data/test.jsonl"] = PAYLOAD
    with pytest.raises(Cancelled):
        download_dataset(_info(server), tmp_path, cancel=lambda: True)
    assert _no_complete_file(tmp_path)


def test_offline_names_url(tmp_path):
    # A port nobody listens on: connection refused, reported as offline with the URL.
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    info = DatasetInfo(
        name="demo",
        title="Demo",
        description="",
        citation="",
        licence="",
        homepage="",
        answer_type="text",
        file_format="bytes",
        splits=("test",),
        file_patterns=(),
        sources=(SourceFile(f"http://127.0.0.1:{port}/x.jsonl", "x.jsonl", 3, None),),
    )
    with pytest.raises(DownloadError, match=f"127.0.0.1:{port}/x.jsonl.*no connection"):
        download_dataset(info, tmp_path)
    assert not (tmp_path / "demo" / "x.jsonl").exists()


def test_stale_unverified_file_is_replaced(server, tmp_path):
    server.files["/data/test.jsonl"] = PAYLOAD
    target = tmp_path / "demo" / "sub" / "test.jsonl"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"truncated")
    download_dataset(_info(server), tmp_path)
    assert target.read_bytes() == PAYLOAD


def test_catalogue_sources_match_shared_files(shared):
    # The catalogue's sizes/checksums are those of the (byte-identical) shared copies.
    from thoughtdesk.core.datasets import get_dataset

    gsm8k = get_dataset("gsm8k")
    for source in gsm8k.sources:
        data = shared("gsm8k", source.path).read_bytes()
        assert len(data) == source.size and hashlib.sha256(data).hexdigest() == source.sha256
    assert replace(gsm8k.sources[0], size=1).size == 1


def test_all_catalogue_checksums_match_shared_files(shared):
    from thoughtdesk.core.datasets import catalogue

    root = shared("gsm8k").parent
    by_name: dict[str, list[Path]] = {}
    for file in root.rglob("*"):
        if file.is_file():
            by_name.setdefault(file.name, []).append(file)
    checked = 0
    for info in catalogue():
        for source in info.sources:
            if source.sha256 is None:
                continue
            candidates = [f for f in by_name.get(Path(source.path).name, []) if f.stat().st_size == source.size]
            assert candidates, f"{info.name}: {source.path} not in shared"
            assert any(hashlib.sha256(f.read_bytes()).hexdigest() == source.sha256 for f in candidates), (
                f"{info.name}: {source.path} checksum"
            )
            assert source.url.startswith("https://")
            checked += 1
    assert checked >= 30


@pytest.fixture
def offline_mode():
    from thoughtdesk.core.settings import network

    network.set_offline(True)
    yield
    network.set_offline(False)


def test_offline_mode_names_the_missing_url_and_how_to_load_by_hand(tmp_path, offline_mode):
    from thoughtdesk.core.settings.network import OfflineError

    first = SourceFile("https://example.org/data/a.jsonl", "a.jsonl", 3, hashlib.sha256(b"abc").hexdigest())
    second = SourceFile("https://example.org/data/b.jsonl", "b.jsonl", 3, None)
    info = DatasetInfo(
        name="demo",
        title="Demo",
        description="",
        citation="",
        licence="",
        homepage="",
        answer_type="text",
        file_format="bytes",
        splits=("test",),
        file_patterns=(),
        sources=(first, second),
    )
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "a.jsonl").write_bytes(b"abc")  # cached and verified: not needed
    with pytest.raises(OfflineError) as caught:
        download_dataset(info, tmp_path)
    message = str(caught.value)
    assert message.startswith("offline mode is on")
    assert second.url in message and first.url not in message
    assert "by hand" in message and str(tmp_path / "demo" / "b.jsonl") in message
    assert not (tmp_path / "demo" / "b.jsonl").exists()


def _zip_bytes() -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("tables/facts.tsv", "fact\tvalue\n" * 2000)
    return buffer.getvalue()


def _zip_info(server: _Server) -> DatasetInfo:
    """A zip source with no published size or checksum (as WorldTree's)."""
    url = f"http://127.0.0.1:{server.server_address[1]}/data/bundle.zip"
    return DatasetInfo(
        name="demo",
        title="Demo",
        description="",
        citation="",
        licence="",
        homepage="",
        answer_type="text",
        file_format="bytes",
        splits=("test",),
        file_patterns=(),
        sources=(SourceFile(url, "bundle.zip", None, None, "test"),),
    )


def test_an_unverifiable_zip_is_checked_by_unpacking(server, tmp_path):
    good = _zip_bytes()
    server.files["/data/bundle.zip"] = good
    paths = download_dataset(_zip_info(server), tmp_path)
    assert (tmp_path / "demo" / "bundle" / "tables" / "facts.tsv").read_text().count("fact") == 2000
    assert paths == [tmp_path / "demo" / "bundle.zip"]


@pytest.mark.parametrize("damage", ["truncated", "flipped byte"])
def test_a_corrupt_zip_without_checksum_is_removed_and_named(server, tmp_path, damage):
    good = _zip_bytes()
    if damage == "truncated":  # a server that ends the body early but says it is complete
        bad = good[: len(good) // 2]
    else:  # a byte changed inside the compressed member: only its CRC-32 can tell
        middle = len(good) // 3
        bad = good[:middle] + bytes([good[middle] ^ 0xFF]) + good[middle + 1 :]
    server.files["/data/bundle.zip"] = bad
    with pytest.raises(DownloadError) as caught:
        download_dataset(_zip_info(server), tmp_path)
    message = str(caught.value)
    assert "/data/bundle.zip" in message and "corrupt or incomplete" in message
    assert not (tmp_path / "demo" / "bundle.zip").exists()  # nothing kept as if complete
    assert not (tmp_path / "demo" / "bundle").exists()
    server.files["/data/bundle.zip"] = good  # the next attempt starts afresh and succeeds
    download_dataset(_zip_info(server), tmp_path)
    assert (tmp_path / "demo" / "bundle" / "tables" / "facts.tsv").exists()
