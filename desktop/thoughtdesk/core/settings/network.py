"""Offline mode: while it is on, this process opens no connection to a non-loopback address.

Two layers make that a guarantee rather than a convention:

1. Every action that needs the network (a dataset download, a call to a provider's API) calls
   :func:`require_network` first, so the user reads *which* action was refused and why, and no
   connection is even attempted.
2. A process-wide audit hook (:func:`install_guard`, :pep:`578`) sees every ``socket.connect``,
   ``socket.getaddrinfo`` (a DNS lookup is already a packet leaving the machine),
   ``socket.sendto``/``sendmsg`` and ``socket.gethostbyname`` in every thread, including those
   made by libraries we did not write, and raises :class:`OfflineError` for a non-loopback
   address while offline mode is on. Attempts it refused are kept in :data:`refused_attempts`
   so tests (and the log) can show that something tried.

Audit hooks cannot be removed, so the hook is installed once and consults a module flag; when
offline mode is off it returns after one attribute read.

Names of this machine (``localhost``, ``*.localhost``, in any case, with or without the final
dot: RFC 6761) are answered by ThoughtDesk itself once the guard is installed: ``getaddrinfo`` and
``gethostbyname`` are wrapped so such a name becomes a literal loopback address before the
system resolver sees it, because a resolver may well ask the network's DNS server about
``ward.localhost``. The hook therefore lets a name lookup through only for a literal loopback
address (or plain ``localhost``, which the hosts file answers); any other name is a DNS query and
is refused while offline.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import sys
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from thoughtdesk.core.errors import ThoughtDeskError

log = logging.getLogger(__name__)

#: Environment variable that forces offline mode on ("1") or off ("0") for this process.
OFFLINE_ENV = "THOUGHTDESK_OFFLINE"

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_GUARDED_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.getaddrinfo",
        "socket.sendto",
        "socket.sendmsg",
        "socket.gethostbyname",
        "socket.gethostbyname_ex",
        "socket.gethostbyaddr",
    }
)
_NAME_EVENTS = frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex"})


class OfflineError(ThoughtDeskError):
    """An action needed the network while offline mode is on; nothing was sent."""

    def __init__(self, what: str, address: str | None = None) -> None:
        self.what = what
        self.address = address
        where = f" ({address})" if address else ""
        super().__init__(f"offline mode is on: {what} needs the network{where}; nothing was sent. {how_to_go_online()}")


@dataclass(frozen=True, slots=True)
class RefusedAttempt:
    """A connection or lookup the guard refused: the audit event, the host and the thread."""

    event: str
    host: str
    thread: str


class _State:
    offline = False
    installed = False
    forced: bool | None = None  # --offline for this process; wins over settings


_state = _State()
_lock = threading.Lock()
#: Every attempt refused by the audit hook since the process started (newest last).
refused_attempts: list[RefusedAttempt] = []


def is_offline() -> bool:
    """True while offline mode is on in this process."""
    return _state.offline


def set_offline(offline: bool) -> None:
    """Turn offline mode on or off for the whole process (installs the guard when turning on)."""
    if offline:
        install_guard()
    if offline != _state.offline:
        log.info("offline mode %s", "on" if offline else "off")
    _state.offline = bool(offline)


def offline_from_environment() -> bool | None:
    """``THOUGHTDESK_OFFLINE`` as a bool (1/true/yes/on or 0/false/no/off), None when unset."""
    value = os.environ.get(OFFLINE_ENV, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return None


def is_loopback_host(host: object) -> bool:
    """True for ``localhost``, 127.0.0.0/8, ``::1`` (and IPv4-mapped loopback); False otherwise.

    ``None`` (a lookup of the local wildcard, used to bind a server) counts as loopback.
    """
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip().strip("[]").rstrip(".").lower()
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    name = name.split("%", 1)[0]  # an IPv6 zone id
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def is_loopback_name(host: object) -> bool:
    """True for a *name* of this machine (``localhost``, ``*.localhost``, any case, final dot
    allowed), which ThoughtDesk resolves itself; False for addresses and other names."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip().rstrip(".").lower()
    return name in _LOOPBACK_NAMES or name.endswith(".localhost")


def _is_literal_loopback(host: object) -> bool:
    """``host`` is None, a loopback IP address written out, or exactly ``localhost`` (answered by
    the hosts file, never by DNS): a lookup of it sends nothing to the network."""
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    return not is_loopback_name(host) and is_loopback_host(host)


def host_of_url(url: str) -> str:
    """The host part of ``url`` ("" when it has none)."""
    return urlsplit(url).hostname or ""


def require_network(what: str, url: str | None = None) -> None:
    """Raise :class:`OfflineError` when offline mode is on and ``url`` is not on this machine.

    Call it at the start of any action that would use the network; ``what`` names the action
    for the user ("the download of gsm8k", "the openai API"). A loopback ``url`` (a model server
    on 127.0.0.1) is allowed, as the guard allows it.
    """
    if not _state.offline:
        return
    if url is not None and is_loopback_host(host_of_url(url)):
        return
    raise OfflineError(what, url)


def _host_of(event: str, args: tuple) -> object:
    """The host an audited socket event is about, or a marker that it is local."""
    if event in ("socket.connect", "socket.sendto"):
        address = args[1]
    elif event == "socket.sendmsg":
        address = args[1] if len(args) > 1 else None
        if address is None:
            return None  # a connected socket: its connect() was checked
    else:  # getaddrinfo / gethostbyname*: the host is the first argument
        address = args[0]
        return address
    if isinstance(address, tuple) and address:
        return address[0]
    return None  # AF_UNIX path or an abstract socket: local by definition


def _audit(event: str, args: tuple) -> None:
    # Runs for every audited event in the process: the offline check comes first and is cheap.
    if not _state.offline or event not in _GUARDED_EVENTS:
        return
    host = _host_of(event, args)
    if event in _NAME_EVENTS:
        if _is_literal_loopback(host):
            return
    elif is_loopback_host(host):
        return
    shown = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
    refused_attempts.append(RefusedAttempt(event, shown, threading.current_thread().name))
    raise OfflineError(f"a connection to {shown}", f"blocked {event}")


def install_guard() -> None:
    """Install the audit hook once per process (it is inert while offline mode is off), and the
    local answers for this machine's names (see the module docstring)."""
    with _lock:
        if _state.installed:
            return
        _install_local_names()
        sys.addaudithook(_audit)
        _state.installed = True


def _install_local_names() -> None:
    """Wrap ``socket.getaddrinfo``/``gethostbyname``/``gethostbyname_ex`` so that this machine's
    names resolve to loopback addresses without the system resolver (the wrappers look the
    module attribute up, as asyncio and ``socket.create_connection`` do, so every caller uses them)."""
    system_getaddrinfo = socket.getaddrinfo
    system_gethostbyname = socket.gethostbyname
    system_gethostbyname_ex = socket.gethostbyname_ex

    def getaddrinfo(host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0) -> Any:
        if not is_loopback_name(host):
            return system_getaddrinfo(host, port, family, type, proto, flags)
        found: list[Any] = []
        # IPv4 first: local model servers listen on 127.0.0.1 far more often than on ::1.
        for address, wanted in (("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)):
            if family in (0, wanted):
                try:
                    found.extend(system_getaddrinfo(address, port, family, type, proto, flags))
                except OSError:
                    pass  # no IPv6 on this machine: the IPv4 answer is enough
        if not found:
            raise socket.gaierror(socket.EAI_NONAME, f"no loopback address for {host!r}")
        return found

    def gethostbyname(host: Any) -> str:
        return "127.0.0.1" if is_loopback_name(host) else system_gethostbyname(host)

    def gethostbyname_ex(host: Any) -> tuple[str, list[str], list[str]]:
        if is_loopback_name(host):
            return str(host), [], ["127.0.0.1"]
        return system_gethostbyname_ex(host)

    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex


def offline_override() -> bool | None:
    """Offline mode forced for this process (``--offline``, else ``THOUGHTDESK_OFFLINE``), or
    None when the saved settings decide."""
    if _state.forced is not None:
        return _state.forced
    return offline_from_environment()


def offline_source() -> str:
    """Where offline mode comes from: ``command line`` (``--offline``), ``environment``
    (``THOUGHTDESK_OFFLINE``) or ``settings`` (the saved setting, Edit > Settings)."""
    if _state.forced is not None:
        return "command line"
    if offline_from_environment() is not None:
        return "environment"
    return "settings"


def how_to_go_online() -> str:
    """How to turn offline mode off, for the source that turned it on (said by every refusal)."""
    source = offline_source()
    if source == "command line":
        return "It was turned on by --offline on the command line; run the command without --offline to allow it"
    if source == "environment":
        return (
            f"It was turned on by {OFFLINE_ENV}={os.environ.get(OFFLINE_ENV, '').strip()} in the environment; "
            f"unset {OFFLINE_ENV} (or set it to 0) to allow it"
        )
    return "Turn offline mode off in Edit > Settings (it is saved there, for the app and the command line) to allow it"


def clear_override() -> None:
    """Forget ``--offline`` (for tests that run several command lines in one process)."""
    _state.forced = None


def apply_offline_setting(explicit: bool | None, saved: bool) -> bool:
    """Set offline mode from ``explicit``, else ``THOUGHTDESK_OFFLINE``, else ``saved`` (the
    saved config's value, read by the caller: this module does not read settings files).

    Returns the mode now in effect. An explicit value (``--offline``) is remembered for the
    process and wins over the environment, which wins over the config file (so that IT can
    force it for one machine's launcher).
    """
    if explicit is not None:
        _state.forced = bool(explicit)
    offline = offline_override()
    if offline is None:
        offline = saved
    set_offline(bool(offline))
    return bool(offline)
