"""Who is executing a run: a lease in the library, so two processes never execute one run.

Two ``thoughtdesk resume N`` at once used to send every request twice and store everything
twice. Now the process that executes a run holds its lease (``run.holder``: host, process id
and a token; ``run.lease_expires``: Unix seconds) and renews it while it works; a second process
is refused with who holds it. A holder that died (killed, crashed, the laptop lid closed for
good) loses the lease when it expires, at once when it was a process of this machine that no
longer exists; the next execution takes over. A run whose status says it is running but whose
holder is gone is *interrupted* (:func:`is_interrupted`): the CLI and the Runs tab say so and
offer to resume it.

The lease in the library is renewed by the run's writes' own event loop, so it cannot be renewed
while the run waits for another process that holds the library's write lock (an import, for up
to an hour). A heartbeat file beside the library (``<library>-run<N>.alive``, naming the holder)
is touched by a thread of the holder every RENEW_SECONDS, whatever the library's lock: a lease
that expired while its heartbeat is fresh is still held, so a run waiting to write is shown as
running, and a second process is refused rather than resending its requests.
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.library.store import Library

#: How long a lease lasts without renewal, in seconds; the holder renews it every RENEW_SECONDS.
LEASE_SECONDS = 30.0
RENEW_SECONDS = 10.0

_TOKEN = secrets.token_hex(4)  # tells this process from an earlier one that had the same pid


class RunBusyError(ThoughtDeskError):
    """Another live process executes the run."""


def this_holder() -> str:
    """This process as a lease holder: ``host:pid:token``."""
    return f"{socket.gethostname()}:{os.getpid()}:{_TOKEN}"


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, as another user's
    except OSError:
        return True
    return True


def heartbeat_path(library: Path, run_id: int) -> Path:
    """The file whose freshness says that run ``run_id``'s holder lives (see the module docstring)."""
    library = Path(library)
    return library.with_name(f"{library.name}-run{run_id}.alive")


def _heartbeat_fresh(library: Path, run_id: int, holder: str, now: float) -> bool:
    path = heartbeat_path(library, run_id)
    try:
        fresh = now - path.stat().st_mtime <= LEASE_SECONDS
        return fresh and path.read_text(encoding="utf-8").strip() == holder
    except (OSError, ValueError):
        return False


def holder_alive(
    holder: str | None,
    lease_expires: float | None,
    now: float | None = None,
    *,
    library: Path | None = None,
    run_id: int | None = None,
) -> bool:
    """Whether ``holder`` still holds its lease: not expired (or, given the ``library`` and
    ``run_id``, its heartbeat file fresh: a holder waiting for the library's write lock cannot
    renew the lease but still holds the run), and (for a process of this machine) still running."""
    if not holder or lease_expires is None:
        return False
    now = time.time() if now is None else now
    if lease_expires < now and not (
        library is not None and run_id is not None and _heartbeat_fresh(library, run_id, holder, now)
    ):
        return False
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host == socket.gethostname() and pid_text.isdigit() and holder != this_holder():
        return _process_exists(int(pid_text))
    return True


def is_interrupted(
    status: str,
    holder: str | None,
    lease_expires: float | None,
    *,
    library: Path | None = None,
    run_id: int | None = None,
) -> bool:
    """A run stored as running or paused whose executing process is gone."""
    return status in ("running", "paused") and not holder_alive(holder, lease_expires, library=library, run_id=run_id)


def describe_holder(holder: str) -> str:
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    return f"process {pid} on {host}" if pid else holder


@dataclass
class Lease:
    """This process's hold on run ``run_id`` (see the module docstring)."""

    lib: Library
    run_id: int
    holder: str
    renewed: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _beating: threading.Thread | None = field(default=None, repr=False)

    def renew(self, *, force: bool = False) -> bool:
        """Extend the lease (at most every RENEW_SECONDS unless ``force``); False when this
        process no longer holds it (another one took the run over while this one was stopped)."""
        now = time.time()
        if not force and now - self.renewed < RENEW_SECONDS:
            return True
        with self.lib.transaction() as conn:
            held = conn.execute(
                "UPDATE run SET lease_expires = ? WHERE id = ? AND holder = ?",
                (now + LEASE_SECONDS, self.run_id, self.holder),
            ).rowcount
        self.renewed = now
        return held == 1

    def start_heartbeat(self) -> None:
        """Touch the heartbeat file every RENEW_SECONDS from a thread of its own, until
        :meth:`release`: no library lock needed, so it beats while the run waits to write."""
        path = heartbeat_path(self.lib.path, self.run_id)
        try:
            path.write_text(self.holder, encoding="utf-8")
        except OSError:
            return  # a folder we cannot write to: the lease in the library is all there is

        def beat() -> None:
            while not self._stop.wait(RENEW_SECONDS):
                try:
                    os.utime(path)
                except FileNotFoundError:
                    try:
                        path.write_text(self.holder, encoding="utf-8")
                    except OSError:
                        pass
                except OSError:
                    pass

        self._beating = threading.Thread(target=beat, name=f"run-{self.run_id}-heartbeat", daemon=True)
        self._beating.start()

    def _stop_heartbeat(self) -> None:
        self._stop.set()
        if self._beating is not None:
            self._beating.join(timeout=2)
        path = heartbeat_path(self.lib.path, self.run_id)
        try:
            if path.read_text(encoding="utf-8").strip() == self.holder:
                path.unlink()
        except (OSError, ValueError):
            pass

    def release(self) -> None:
        """Give the run up (when the execution ends, however it ends)."""
        self._stop_heartbeat()
        with self.lib.transaction() as conn:
            conn.execute(
                "UPDATE run SET holder = NULL, lease_expires = NULL WHERE id = ? AND holder = ?",
                (self.run_id, self.holder),
            )


class StaleClaim(ThoughtDeskError):
    """A result whose request is no longer claimed as its sender claimed it (another process
    took the run over while this one was suspended, and sent or stored it): not stored."""


@dataclass(frozen=True, slots=True)
class Claim:
    """What a request's row must still say for a result to be stored (checked in the storing
    transaction, so a result is stored once whatever other processes do): ``status`` and, for a
    direct call, the ``token`` its claim wrote (``request.claim``), for a batch's item its
    ``batch_pk``."""

    status: str
    token: str | None = None
    batch_pk: int | None = None

    @classmethod
    def sent(cls, token: str) -> Claim:
        return cls("sent", token=token)

    @classmethod
    def batched(cls, batch_pk: int) -> Claim:
        return cls("batched", batch_pk=batch_pk)

    def check(self, conn: sqlite3.Connection, request_id: int) -> None:
        """Raise StaleClaim unless request ``request_id`` is still held this way."""
        row = conn.execute("SELECT status, claim, batch_pk FROM request WHERE id = ?", (request_id,)).fetchone()
        if (
            row is None
            or row[0] != self.status
            or (self.token is not None and row[1] != self.token)
            or (self.batch_pk is not None and row[2] != self.batch_pk)
        ):
            now = "gone" if row is None else f"now {row[0]}"
            raise StaleClaim(f"request {request_id} is no longer {self.status} by this process ({now})")


#: A request answered from the store must still be pending when its answer is written.
PENDING = Claim("pending")


def claim_run(lib: Library, run_id: int) -> Lease:
    """Take run ``run_id``'s lease for this process, or raise :class:`RunBusyError` naming the
    live process that holds it. Atomic: two processes claiming at once cannot both win."""
    holder = this_holder()
    now = time.time()
    with lib.transaction() as conn:
        row = conn.execute("SELECT holder, lease_expires FROM run WHERE id = ?", (run_id,)).fetchone()
        alive = row is not None and holder_alive(row[0], row[1], now, library=lib.path, run_id=run_id)
        if row is not None and row[0] and row[0] != holder and alive:
            raise RunBusyError(
                f"run {run_id} is being executed by {describe_holder(row[0])}; wait for it to finish, or pause or "
                "cancel it there (a process that was killed loses the run within "
                f"{LEASE_SECONDS:g} seconds, then resume it here)"
            )
        conn.execute("UPDATE run SET holder = ?, lease_expires = ? WHERE id = ?", (holder, now + LEASE_SECONDS, run_id))
    lease = Lease(lib, run_id, holder, now)
    lease.start_heartbeat()
    return lease
