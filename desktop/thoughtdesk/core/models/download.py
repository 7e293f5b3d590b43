"""Downloading a GGUF model into the models folder, only when asked, surviving cut connections.

The file is streamed into ``<file>.part`` in the models folder; a cut connection is resumed with
an HTTP Range request (a few times within one call, and by running the same download again
later: the ``.part`` file is kept). A web page instead of a model (``text/html``, or a body
that does not start with ``GGUF``) is refused at once. When the last byte is in, the SHA-256 is
checked (when given) and the header read; only then is the file renamed into place and
registered, so a wrong checksum or a bad file registers nothing. A failed or cancelled download
keeps its ``.part`` file for a resume, or removes it (``keep_partial=False``) as the user
chooses; either way nothing is registered. Offline mode refuses the
download before any connection (:func:`~thoughtdesk.core.settings.network.require_network`);
proxies and certificates are the environment's (:mod:`~thoughtdesk.core.settings.transport`).
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx

from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.files import is_full_disk_error
from thoughtdesk.core.models.gguf import MAGIC, GgufError, read_model_facts
from thoughtdesk.core.models.registry import ModelEntry, ModelRegistry, check_name, sha256_of
from thoughtdesk.core.settings.network import require_network
from thoughtdesk.core.settings.transport import sync_client

_CHUNK = 1 << 20
_TIMEOUT = httpx.Timeout(60.0, connect=20.0)
#: Attempts within one call: each after a cut connection resumes from the bytes kept.
ATTEMPTS = 5


class ModelDownloadError(ThoughtDeskError):
    """A model download that failed: names the URL, what happened and what is kept."""


def file_name_for(url: str, name: str | None = None) -> str:
    """The file name a download is saved as: the URL's last path segment (a Hugging Face
    ``/resolve/main/X.gguf?download=true`` gives ``X.gguf``), else ``NAME.gguf``."""
    segment = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    segment = re.sub(r"[^\w.+-]", "_", segment).lstrip(".")
    if segment.lower().endswith(".gguf"):
        return segment
    return f"{name or segment or 'model'}.gguf"


def partial_path(url: str, name: str | None = None, registry: ModelRegistry | None = None) -> Path:
    """Where a download of ``url`` keeps its bytes until it is complete (``<file>.part``)."""
    folder = (registry or ModelRegistry()).models_dir
    return folder / (file_name_for(url, name) + ".part")


class TransferRate:
    """Speed and time left of a transfer from its progress reports: the bytes of the last
    ``window`` seconds (a resumed download's first report, the bytes already there, counts as
    the start, not as speed)."""

    def __init__(self, window: float = 5.0) -> None:
        self.window = window
        self.samples: deque[tuple[float, int]] = deque()
        self.first: tuple[float, int] | None = None
        self.last: tuple[float, int] | None = None

    def update(self, done: int, total: int | None, now: float | None = None) -> tuple[float | None, float | None]:
        """(bytes a second, seconds left), each None while not known."""
        now = time.monotonic() if now is None else now
        self.first = self.first or (now, done)
        self.last = (now, done)
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.popleft()
        first_time, first_done = self.samples[0]
        elapsed = now - first_time
        if elapsed <= 0 or done <= first_done:
            return None, None
        speed = (done - first_done) / elapsed
        left = (total - done) / speed if total is not None and total >= done else None
        return speed, left

    def summary(self) -> str:
        """E.g. ``253.1 MB in 4 s (63.3 MB/s on average)``: the bytes this transfer moved; "" before any."""
        if self.first is None or self.last is None or self.last[1] <= self.first[1]:
            return ""
        moved, seconds = self.last[1] - self.first[1], self.last[0] - self.first[0]
        average = f" ({moved / seconds / 1e6:.1f} MB/s on average)" if seconds > 0 else ""
        return f"{moved / 1e6:.1f} MB in {_duration(seconds)}{average}"


def describe_progress(done: int, total: int | None, speed: float | None, left: float | None) -> str:
    """E.g. ``120.4 MB of 253.1 MB · 31.2 MB/s · 5 s left``."""
    parts = [f"{done / 1e6:.1f} MB" + (f" of {total / 1e6:.1f} MB" if total else "")]
    if speed is not None:
        parts.append(f"{speed / 1e6:.1f} MB/s")
    if left is not None:
        parts.append(_duration(left) + " left" if left >= 0.5 else "finishing")
    return " · ".join(parts)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def download_model(
    url: str,
    *,
    name: str | None = None,
    sha256: str | None = None,
    registry: ModelRegistry | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    client: httpx.Client | None = None,
    keep_partial: bool = True,
    checking: Callable[[], None] | None = None,
) -> ModelEntry:
    """Download ``url`` into the models folder, check it, register it; return its entry.

    ``progress(done_bytes, total_bytes or None)`` as bytes arrive; ``cancel()`` returning True
    stops with :class:`Cancelled` (also while the checksum is computed). A failure or a cancel
    keeps the ``.part`` file for a later resume, or removes it when ``keep_partial`` is False.
    ``checking()`` is called when the body is complete and its checksum is being computed."""
    registry = registry or ModelRegistry()
    expected = sha256.strip().lower() if sha256 else None
    if expected is not None and not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise ModelDownloadError(f"--sha256 {sha256!r} is not a SHA-256 (64 hexadecimal digits)")
    if name is not None:
        check_name(name)
        if registry.find(name) is not None:
            raise ModelDownloadError(f"the name {name!r} is taken; choose another with --name")
    if expected is not None:
        known = next((e for e in registry.entries() if e.sha256 == expected and e.status() == "ok"), None)
        if known is not None:
            return known  # registered already: nothing to download
    require_network(f"the download of model {name or file_name_for(url)}", url)
    folder = registry.models_dir
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / file_name_for(url, name)
    part = target.with_name(target.name + ".part")
    own_client = client is None
    http = client or sync_client(timeout=_TIMEOUT, follow_redirects=True)
    try:
        _fetch(http, url, part, progress, cancel, keep_partial)
    except BaseException:
        if not keep_partial:
            part.unlink(missing_ok=True)
        raise
    finally:
        if own_client:
            http.close()
    if checking:
        checking()

    def hashed(_done: int) -> None:
        if cancel is not None and cancel():
            raise Cancelled(f"download of {url} (complete in {part}; download again to check and register it)")

    digest = sha256_of(part, hashed)
    if expected is not None and digest != expected:
        part.unlink()
        raise ModelDownloadError(
            f"download of {url}: checksum mismatch (sha256 {digest}, expected {expected}); the file was removed "
            "and nothing was registered: check the checksum and the address"
        )
    try:
        read_model_facts(part)
    except GgufError as error:
        part.unlink()
        raise ModelDownloadError(
            f"download of {url}: the file is not a usable GGUF model ({error.message}); it was removed and nothing "
            "was registered"
        ) from None
    stem = Path(target.name).stem
    counter = 2
    while target.exists():
        if sha256_of(target) == digest:  # the same model is there already: keep that file
            part.unlink()
            return registry.register_verified(target, digest, name=name)
        target = folder / f"{stem}-{counter}.gguf"
        counter += 1
    os.replace(part, target)
    return registry.register_verified(target, digest, name=name)


def _fetch(
    http: httpx.Client,
    url: str,
    part: Path,
    progress: Callable[[int, int | None], None] | None,
    cancel: Callable[[], bool] | None,
    keep_partial: bool = True,
) -> None:
    """Stream ``url`` into ``part``, resuming from its bytes; return when the body is complete."""
    for attempt in range(ATTEMPTS):
        offset = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        try:
            with http.stream("GET", url, headers=headers) as response:
                if response.status_code == 416 and offset:
                    if _complete(response, offset):
                        return  # the part file already holds all of it
                    part.unlink()  # bigger than the server's file: start again
                    continue
                if response.status_code >= 400:
                    raise ModelDownloadError(f"download of {url} failed: HTTP {response.status_code}")
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind in ("text/html", "application/xhtml+xml"):
                    raise ModelDownloadError(
                        f"download of {url}: the address answered with a web page ({kind}), not a model file; "
                        "for Hugging Face use the file's /resolve/ address (not /blob/), and check that the model "
                        "needs no log-in"
                    )
                resumed = bool(offset) and response.status_code == 206
                length = response.headers.get("content-length")
                total = (offset if resumed else 0) + int(length) if length and length.isdigit() else None
                _write(response, part, offset if resumed else 0, total, url, progress, cancel, keep_partial)
                if total is not None and part.stat().st_size < total:
                    raise httpx.ReadError("the body ended early")  # resumed below
                return
        except (httpx.TransportError, httpx.StreamError) as error:
            if attempt + 1 < ATTEMPTS and part.exists() and part.stat().st_size > offset:
                continue  # connection cut after some progress: resume from what arrived
            kept = part.stat().st_size if part.exists() else 0
            reason = (
                "no connection (offline, or a proxy is needed?)"
                if isinstance(error, httpx.ConnectError)
                else f"the connection broke ({type(error).__name__}: {error})"
            )
            raise ModelDownloadError(f"download of {url} failed: {reason}{_kept(part, kept, keep_partial)}") from None
    kept = part.stat().st_size if part.exists() else 0
    raise ModelDownloadError(
        f"download of {url} failed: the connection broke {ATTEMPTS} times{_kept(part, kept, keep_partial)}"
    )


def _kept(part: Path, count: int, keep: bool) -> str:
    """What became of the bytes so far, for the end of a failure's line."""
    if not count:
        return ""
    if not keep:
        return f"; the {count:,} bytes downloaded were removed"
    return f"; the {count:,} bytes so far are kept in {part}: download it again to resume, or delete that file"


def _complete(response: httpx.Response, offset: int) -> bool:
    # 416's Content-Range is "bytes */TOTAL".
    match = re.fullmatch(r"bytes \*/(\d+)", response.headers.get("content-range", ""))
    return match is not None and int(match.group(1)) == offset


def _write(
    response: httpx.Response,
    part: Path,
    offset: int,
    total: int | None,
    url: str,
    progress: Callable[[int, int | None], None] | None,
    cancel: Callable[[], bool] | None,
    keep_partial: bool = True,
) -> None:
    written = offset
    first = offset == 0
    head = b""  # the body's first bytes: a model starts with GGUF
    try:
        with open(part, "ab" if offset else "wb") as handle:
            if progress:
                progress(written, total)
            for chunk in response.iter_bytes():  # as they arrive: a cut keeps every byte received
                if cancel is not None and cancel():
                    what = (
                        f"the {written:,} bytes so far are kept in {part} for a resume" if keep_partial else "removed"
                    )
                    raise Cancelled(f"download of {url} ({what})")
                if first and len(head) < len(MAGIC):
                    head = (head + chunk)[:16]
                    if len(head) >= len(MAGIC) and not head.startswith(MAGIC):
                        handle.close()
                        part.unlink()
                        raise ModelDownloadError(
                            f"download of {url}: the answer is not a GGUF model (it starts with {head!r}); "
                            "nothing was kept or registered"
                        )
                handle.write(chunk)
                written += len(chunk)
                if progress:
                    progress(written, total)
    except OSError as error:
        if is_full_disk_error(error, part.parent):
            what = f"the disk is full ({part.parent}): free some space"
        else:
            what = f"cannot write {part} ({error.strerror or error})"
        kept = part.stat().st_size if part.exists() else 0
        raise ModelDownloadError(
            f"download of {url}: {what}; nothing was registered{_kept(part, kept, keep_partial)}"
        ) from None
