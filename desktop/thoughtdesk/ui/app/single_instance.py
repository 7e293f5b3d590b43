"""One ThoughtDesk per user: a second launch hands its library file to the running one.

Double-clicking a library in the file manager (``Exec=thoughtdesk gui %f``) while ThoughtDesk
runs would otherwise open the same SQLite file in two processes, each with its own undo stack
and views that do not see the other's writes. :func:`hand_off` (the second launch) connects to
the running instance's :class:`InstanceServer` through a local socket named for the user (and
their config folder, so separate test or portable set-ups do not meet), sends the file, and
waits for "ok"; the running window then opens that library (or just comes to the front).

The message is one line of JSON, ``{"open": PATH}`` (``null``: no file), answered ``ok\\n``.
The socket is restricted to the user (``UserAccessOption``); a stale socket left by a crash is
removed when no one answers on it.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
from pathlib import Path

from thoughtdesk.core.paths import user_config_dir
from thoughtdesk.ui.qt import QLocalServer, QLocalSocket, QObject, Signal

log = logging.getLogger("thoughtdesk.instance")

#: Milliseconds a second launch waits for the running instance to connect and answer.
HANDOFF_TIMEOUT_MS = 3000
#: Longest message accepted (a path, in JSON): anything longer is not from ThoughtDesk.
MAX_MESSAGE = 64 * 1024


def server_name() -> str:
    """The local socket's name: per user and per config folder (``THOUGHTDESK_CONFIG_DIR``)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "user"
    folder = hashlib.sha256(str(user_config_dir()).encode("utf-8")).hexdigest()[:12]
    safe_user = "".join(c for c in user if c.isalnum() or c in "-_")[:32] or "user"
    return f"thoughtdesk-{safe_user}-{folder}"


def hand_off(path: Path | None, name: str | None = None, timeout_ms: int = HANDOFF_TIMEOUT_MS) -> bool:
    """Give ``path`` (None: just show the window) to a running instance; True when one took it."""
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(timeout_ms):
        return False
    message = json.dumps({"open": str(path.resolve()) if path is not None else None}) + "\n"
    socket.write(message.encode("utf-8"))
    socket.flush()
    answered = socket.waitForReadyRead(timeout_ms) and bytes(socket.readLine().data()).strip() == b"ok"
    socket.disconnectFromServer()
    return answered


class InstanceServer(QObject):
    """Listens for later launches; ``open_requested(Path | None)`` for each one that handed off."""

    open_requested = Signal(object)

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._connection)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self) -> bool:
        """Start listening; a socket left by a crashed instance (no one answered) is removed
        first. False (and logged) when the name cannot be taken: the app then runs without."""
        if self.server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)  # call only after hand_off found no one listening
        if self.server.listen(self.name):
            return True
        log.warning("second launches cannot reach this instance: %s", self.server.errorString())
        return False

    def close(self) -> None:
        self.server.close()

    def _connection(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._forget(s))

    def _forget(self, socket: QLocalSocket) -> None:
        self._buffers.pop(socket, None)
        socket.deleteLater()

    def _read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        if len(data) > MAX_MESSAGE:
            log.warning("a second launch sent more than %d bytes; ignored", MAX_MESSAGE)
            socket.abort()
            return
        if b"\n" not in data:
            self._buffers[socket] = data
            return
        line = data.split(b"\n", 1)[0]
        try:
            message = json.loads(line.decode("utf-8"))
            wanted = message["open"] if isinstance(message, dict) else None
            path = Path(wanted) if isinstance(wanted, str) and wanted else None
        except (ValueError, KeyError, UnicodeDecodeError):
            log.warning("a second launch sent a message that is not ThoughtDesk's; ignored")
            socket.abort()
            return
        socket.write(b"ok\n")
        socket.flush()
        self.open_requested.emit(path)
