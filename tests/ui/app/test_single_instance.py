"""A second launch hands its library to the running instance (issue 16, point 15): a real
second process (``thoughtdesk gui FILE``) against the real window's local server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.app.single_instance import InstanceServer, server_name


def second_launch(qtbot, *args: str) -> subprocess.CompletedProcess[str]:
    """``thoughtdesk gui ARGS`` in another process with this test's user folders; the GUI thread
    keeps serving while it runs (the server answers on it)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), QT_QPA_PLATFORM="offscreen", THOUGHTDESK_NO_WIZARD="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "thoughtdesk", "gui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        qtbot.waitUntil(lambda: process.poll() is not None, timeout=60000)
    finally:
        if process.poll() is None:  # it opened a window of its own: the hand-off failed
            process.kill()
    out, err = process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def serving(window) -> InstanceServer:
    """The window's instance server, wired as ``run_gui`` wires it."""
    server = InstanceServer(parent=window)
    assert server.listen()
    server.open_requested.connect(window.open_handed_over)
    return server


#: The offscreen platform cannot raise a window; the window asks, as it does on a desktop.
offscreen_raise = pytest.mark.qt_log_ignore("This plugin does not support raise")


@offscreen_raise
def test_a_second_launch_hands_its_library_to_the_running_window(window, qtbot, tmp_path):
    serving(window)
    other = tmp_path / "ward 7.thoughtdesk"
    Library.open(other).close()
    done = second_launch(qtbot, str(other))
    assert done.returncode == 0, done.stderr
    assert "already running" in done.stdout and str(other) in done.stdout
    qtbot.waitUntil(lambda: window.library.path.resolve() == other.resolve(), timeout=5000)
    assert window.windowTitle().endswith("ward 7.thoughtdesk")


@offscreen_raise
def test_the_same_library_is_not_opened_twice(window, qtbot):
    server = serving(window)
    handed: list[object] = []
    server.open_requested.connect(handed.append)  # after the window's own slot: it has run
    shown = window.library
    done = second_launch(qtbot, str(window.library.path))
    assert done.returncode == 0 and "already running" in done.stdout, done.stderr
    qtbot.waitUntil(lambda: bool(handed), timeout=10000)
    assert window.library is shown  # not closed and reopened


def test_a_socket_left_by_a_crash_is_taken_over(qapp, tmp_path):
    server = InstanceServer(name=server_name())
    assert server.listen()
    path = Path(server.server.fullServerName())
    server.server.close()  # closes and removes; leave a stale file where the socket was
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    assert path.exists()
    again = InstanceServer(name=server_name())
    assert again.listen()
    again.close()


def test_a_message_that_is_not_thoughtdesks_is_ignored(qapp, qtbot):
    server = InstanceServer()
    assert server.listen()
    asked: list[object] = []
    server.open_requested.connect(asked.append)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(server.server.fullServerName())
    client.sendall(b"GET / HTTP/1.0\n")
    client.setblocking(False)

    def hung_up() -> bool:  # the server read the line and dropped the connection
        try:
            return client.recv(64) == b""
        except BlockingIOError:
            return False
        except ConnectionResetError:
            return True

    qtbot.waitUntil(hung_up, timeout=10000)
    client.close()
    assert asked == []
    server.close()
