"""Downloading a dataset's source files into a cache folder, only when asked.

Each file is streamed into ``<name>.part``; an interrupted download resumes from there with an
HTTP Range request; the size and SHA-256 are checked before the file is renamed into place, so a
file with its final name is always complete. A verified file already in the cache is reused
without any request.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from thoughtdesk.core.datasets.archives import unpack_zip
from thoughtdesk.core.datasets.catalogue import DatasetInfo, SourceFile
from thoughtdesk.core.errors import Cancelled, DataFileError, ThoughtDeskError
from thoughtdesk.core.settings.network import OfflineError, require_network

if TYPE_CHECKING:  # httpx is imported by a download, not by every user of the dataset package
    import httpx

_CHUNK = 1 << 16
_TIMEOUT_SECONDS, _CONNECT_SECONDS = 30.0, 15.0


def _by_hand(url: str, target: Path) -> str:
    return (
        f"To load the file by hand, download {url} in a browser, save it as {target} "
        "(or anywhere) and load that file or its folder"
    )


class DownloadError(ThoughtDeskError):
    """A source file could not be fetched or did not match its expected size/checksum."""

    def __init__(self, url: str, reason: str, target: Path) -> None:
        self.url = url
        self.reason = reason
        self.target = target
        super().__init__(f"download of {url} failed: {reason}. {_by_hand(url, target)}")


class OfflineDownloadError(OfflineError):
    """A download refused because offline mode is on; names the URL and how to load by hand."""

    def __init__(self, what: str, url: str, target: Path) -> None:
        super().__init__(what, url)
        self.url = url
        self.target = target
        self.args = (f"{self.args[0]}. {_by_hand(url, target)}",)


def dataset_cache_dir(info: DatasetInfo, cache_dir: str | Path) -> Path:
    """The folder a dataset's files are downloaded to (pass it to ``load_dataset``)."""
    return Path(cache_dir) / info.name


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(path: Path, source: SourceFile) -> bool:
    if not path.is_file():
        return False
    if source.size is not None and path.stat().st_size != source.size:
        return False
    return source.sha256 is None or _sha256(path) == source.sha256


def download_dataset(
    info: DatasetInfo,
    cache_dir: str | Path,
    *,
    progress: Callable[[int, int | None], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    client: httpx.Client | None = None,
) -> list[Path]:
    """Fetch every source file of ``info`` into ``cache_dir/<name>/`` and return their paths.

    ``progress(done_bytes, total_bytes)`` is called as bytes arrive (total is ``None`` when
    unknown), counted over all files of the dataset. ``cancel()`` returning True stops with
    :class:`Cancelled`, keeping the ``.part`` file for a later resume. Failures raise
    :class:`DownloadError` naming the URL and how to load the file by hand. A ``.zip`` source
    is unpacked beside itself (see :func:`unpack_zip`).
    """
    folder = dataset_cache_dir(info, cache_dir)
    sizes = [source.size for source in info.sources]
    known = [size for size in sizes if size is not None]
    total = sum(known) if len(known) == len(sizes) else None
    done = 0
    paths: list[Path] = []
    own_client = client is None
    if client is None:
        import httpx

        from thoughtdesk.core.settings.transport import sync_client

        timeout = httpx.Timeout(_TIMEOUT_SECONDS, connect=_CONNECT_SECONDS)
        http = sync_client(timeout=timeout, follow_redirects=True)  # the network's proxy and CAs
    else:
        http = client
    try:
        for source in info.sources:
            target = folder / source.path
            if _verified(target, source):
                done += target.stat().st_size
                if progress:
                    progress(done, total)
                paths.append(target)
                continue

            # Offline mode: cached, verified files above needed no network; the first file still
            # needed is named, with how to fetch it by hand.
            what = f"the download of dataset {info.name}"
            try:
                require_network(what, source.url)
            except OfflineError:
                raise OfflineDownloadError(what, source.url, target) from None

            def report(file_done: int, base: int = done) -> None:
                if progress:
                    progress(base + file_done, total)

            _download_file(http, source, target, report, cancel)
            done += target.stat().st_size
            paths.append(target)
    finally:
        if own_client:
            http.close()
    for source, path in zip(info.sources, paths, strict=False):
        if path.suffix.lower() == ".zip":
            # WorldTree comes as a zip: unpack it beside the archive so load_dataset finds
            # the files inside (unpack_zip checks member paths and is a no-op when done).
            # Its source publishes no size or checksum; unpacking checks every member's CRC-32
            # and a cut-short archive has no central directory, so this is the integrity check:
            # a corrupt archive is removed and reported, never kept as if complete.
            try:
                unpack_zip(path)
            except DataFileError as error:
                path.unlink(missing_ok=True)
                raise DownloadError(
                    source.url,
                    f"the archive is corrupt or incomplete ({error.message}); it was removed, download it again",
                    path,
                ) from None
    return paths


def _download_file(
    http: httpx.Client,
    source: SourceFile,
    target: Path,
    report: Callable[[int], None],
    cancel: Callable[[], bool] | None,
) -> None:
    import httpx

    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    if target.exists():
        target.unlink()  # present but not verified: never leave it looking complete
    # Two attempts: the second resumes after a cut connection.
    for attempt in range(2):
        offset = part.stat().st_size if part.exists() else 0
        if source.size is not None and offset > source.size:
            part.unlink()
            offset = 0
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        try:
            with http.stream("GET", source.url, headers=headers) as response:
                if response.status_code == 416 and offset:
                    part.unlink()  # our partial file is bigger than the server's: start over
                    continue
                if response.status_code >= 400:
                    raise DownloadError(source.url, f"HTTP {response.status_code}", target)
                resumed = offset and response.status_code == 206
                if not resumed:
                    offset = 0
                with open(part, "ab" if resumed else "wb") as handle:
                    written = offset
                    report(written)
                    for chunk in response.iter_bytes(_CHUNK):
                        if cancel is not None and cancel():
                            raise Cancelled(f"download of {source.url}")
                        handle.write(chunk)
                        written += len(chunk)
                        report(written)
        except (httpx.TransportError, httpx.StreamError) as error:
            if attempt == 0 and part.exists() and part.stat().st_size > 0:
                continue  # connection cut: resume once from what we have
            reason = (
                "no connection (offline?)"
                if isinstance(error, httpx.ConnectError)
                else f"connection error ({type(error).__name__}: {error})"
            )
            raise DownloadError(source.url, reason, target) from None
        break
    size = part.stat().st_size if part.exists() else 0
    if source.size is not None and size != source.size:
        raise DownloadError(source.url, f"got {size} bytes, expected {source.size}", target)
    if source.sha256 is not None:
        digest = _sha256(part)
        if digest != source.sha256:
            part.unlink()  # corrupt: a resume would only build on bad bytes
            raise DownloadError(source.url, f"checksum mismatch (sha256 {digest}, expected {source.sha256})", target)
    os.replace(part, target)
