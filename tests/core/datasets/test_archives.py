"""Zip archives: WorldTree's download is unpacked safely so the loader reads it."""

from __future__ import annotations

import functools
import hashlib
import http.server
import stat
import threading
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers.paths import FIXTURES
from thoughtdesk.core.datasets import (
    SourceFile,
    dataset_cache_dir,
    download_dataset,
    get_dataset,
    load_dataset,
)
from thoughtdesk.core.datasets.archives import UNPACKED_MARKER, unpack_zip
from thoughtdesk.core.errors import DataFileError

WORLDTREE = FIXTURES / "datasets" / "worldtree"
ZIP_NAME = "WorldtreeExplanationCorpusV2.1_Feb2020.zip"


def _worldtree_zip(target: Path) -> Path:
    """A zip laid out like the real one: a top folder holding questions/ and tablestore/."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bundle:
        for file in sorted(WORLDTREE.rglob("*")):
            if file.is_file():
                bundle.write(file, "WorldtreeExplanationCorpusV2.1_Feb2020/" + file.relative_to(WORLDTREE).as_posix())
    return target


@pytest.fixture
def file_server(tmp_path):
    """A real HTTP server on 127.0.0.1 serving ``tmp_path / "served"``."""
    root = tmp_path / "served"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_worldtree_zip_downloaded_unpacked_and_loaded(file_server, tmp_path):
    root, base = file_server
    archive = _worldtree_zip(root / ZIP_NAME)
    data = archive.read_bytes()
    info = replace(
        get_dataset("worldtree"),
        sources=(SourceFile(f"{base}/{ZIP_NAME}", ZIP_NAME, len(data), hashlib.sha256(data).hexdigest()),),
    )
    cache = tmp_path / "cache"
    download_dataset(info, cache)
    folder = dataset_cache_dir(info, cache)
    assert (folder / ZIP_NAME).read_bytes() == data
    unpacked = folder / "WorldtreeExplanationCorpusV2.1_Feb2020"
    assert (unpacked / UNPACKED_MARKER).is_file()
    from_download = [(split, s.id, s.answer, s.cot) for split, s in load_dataset("worldtree", folder)]
    from_fixture = [(split, s.id, s.answer, s.cot) for split, s in load_dataset("worldtree", WORLDTREE)]
    assert from_download == from_fixture and len(from_download) >= 2
    assert all(cot for *_, cot in from_download)  # facts resolved from the unpacked tablestore


@pytest.mark.parametrize("name", ["../evil.txt", "/abs/evil.txt", "a/../../evil.txt", "C:/evil.txt", "..\\evil.txt"])
def test_path_traversal_is_refused_and_nothing_written(tmp_path, name):
    archive = tmp_path / "x" / "bad.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("ok.txt", "fine")
        bundle.writestr(name, "escaped")
    with pytest.raises(DataFileError, match="unsafe path in the archive"):
        unpack_zip(archive)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["bad.zip", "x"]


def test_symlink_member_is_refused(tmp_path):
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        member = zipfile.ZipInfo("link")
        member.external_attr = (stat.S_IFLNK | 0o777) << 16
        bundle.writestr(member, "/etc/passwd")
    with pytest.raises(DataFileError, match="symbolic link"):
        unpack_zip(archive)
    assert not (tmp_path / "link").exists()


def test_not_a_zip_names_the_file(tmp_path):
    archive = tmp_path / "fake.zip"
    archive.write_text("<html>an error page</html>")
    with pytest.raises(DataFileError, match="fake.zip: not a readable zip"):
        unpack_zip(archive)


def test_unpack_is_done_once(tmp_path):
    archive = _worldtree_zip(tmp_path / ZIP_NAME)
    folder = unpack_zip(archive)
    marker = folder / UNPACKED_MARKER
    stamp = marker.stat().st_mtime_ns
    assert unpack_zip(archive) == folder and marker.stat().st_mtime_ns == stamp
