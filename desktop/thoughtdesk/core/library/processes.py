"""Which process wrote something into a library: a tag that tells a process apart from a later
one given the same number (:func:`process_tag`), and whether the process a tag names still runs
(:func:`process_alive`). The library's writer note and its staged imports record these tags, so
that an import or a note left behind by a process that died can be told and cleared.
"""

from __future__ import annotations

import os


def process_start_mark(pid: int) -> str | None:
    """What tells process ``pid`` apart from a later process given the same number: this boot's
    id and the process's start time in clock ticks since boot (``/proc``), or None where the
    system does not say (then a process is told by its number alone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stream:
            fields = stream.read().rsplit(b")", 1)[1].split()
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as stream:
            boot = stream.read().strip().replace("-", "")[:12]
        return f"{boot}.{int(fields[19])}"  # field 22 of stat; the command name (field 2) cut off
    except (OSError, IndexError, ValueError):
        return None


def process_tag() -> str:
    """This process as :func:`process_alive` reads it: ``<pid>`` or ``<pid>@<start mark>``."""
    mark = _own_mark()
    return f"{os.getpid()}@{mark}" if mark else str(os.getpid())


def _own_mark() -> str | None:
    global _OWN_MARK
    if _OWN_MARK is None or _OWN_MARK[0] != os.getpid():  # after a fork, the child's own
        _OWN_MARK = (os.getpid(), process_start_mark(os.getpid()))
    return _OWN_MARK[1]


_OWN_MARK: tuple[int, str | None] | None = None


def process_alive(tag: str) -> bool:
    """Whether the process ``tag`` names (see :func:`process_tag`; an older library recorded
    the number alone) runs on this machine; an unreadable tag counts as alive. A live process
    whose start mark differs from the recorded one is another process that was given the same
    number (after a reboot, or many processes later): the recorded one is gone (issue 23,
    point 13)."""
    pid_text, _, mark = tag.partition("@")
    try:
        pid = int(pid_text)
    except ValueError:
        return True
    if pid != os.getpid():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            pass  # it exists but is not ours (PermissionError)
    if mark:
        now = process_start_mark(pid)
        if now is not None and now != mark:
            return False
    return True
