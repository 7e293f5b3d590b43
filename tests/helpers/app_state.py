"""Isolation for the app tests: settings, config, logs, keyring and offline mode per test."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from thoughtdesk.cli.common import stop_verbose_logging
from thoughtdesk.core.generation.backends import response_cap
from thoughtdesk.core.settings import logs, network, secrets
from thoughtdesk.ui.qt import QCoreApplication, QSettings
from thoughtdesk.ui.settings.options import APPLICATION, ORGANIZATION, use_settings_file


@pytest.fixture(autouse=True)
def isolated_app_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """QSettings, core.json, the log folder and the keyring point into this test's folder.

    Qt caches the settings folder after its first use, so changing XDG_CONFIG_HOME (as the
    suite's conftest does) is not enough: ``QSettings.setPath`` redirects it for real, for the
    user's settings and the machine-wide ones alike. The application's names are set as the app
    sets them at start-up (``make_application``): without an organisation name ``QSettings()``
    can neither read nor write (its status is AccessError), and with pytest-qt's application
    name it would be another file than ``open_settings()``.
    """
    for scope, folder in ((QSettings.Scope.UserScope, "qsettings"), (QSettings.Scope.SystemScope, "qsettings-system")):
        for settings_format in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
            QSettings.setPath(settings_format, scope, str(tmp_path / folder))
    QCoreApplication.setOrganizationName(ORGANIZATION)
    QCoreApplication.setApplicationName(APPLICATION)
    monkeypatch.setenv("THOUGHTDESK_CONFIG_DIR", str(tmp_path / "config"))
    use_settings_file()  # as make_application does: QSettings() is the settings file in that folder
    monkeypatch.setenv("THOUGHTDESK_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.delenv("THOUGHTDESK_OFFLINE", raising=False)
    monkeypatch.setenv("THOUGHTDESK_NO_WIZARD", "1")
    secrets.use_keyring(secrets.MemoryKeyring())
    response_cap.reset_response_cap()  # the settings file is this test's: read again when needed
    yield tmp_path
    response_cap.reset_response_cap()
    network.set_offline(False)
    network.clear_override()
    secrets.use_keyring(None)
    logs.stop_logging()
    # A command run in this process (tests/helpers/cli.run_cli) watched the keyring and may have
    # put -v's stderr handler on: each test starts without them, as each command's process did.
    logs.unwatch_keyring()
    stop_verbose_logging()


class ModelListHandler(http.server.BaseHTTPRequestHandler):
    """``GET /v1/models`` (OpenAI style, Bearer key) and ``GET /v1/models`` with x-api-key."""

    api_key = "sk-local-test-key-123"

    #: (path, key header sent) of every request, to check where keys went.
    seen: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:  # http.server's name
        self.seen.append((self.path, self.headers.get("x-api-key") or self.headers.get("Authorization")))
        if self.path.startswith("/moved/"):  # an address that redirects elsewhere
            self.send_response(307)
            self.send_header("Location", self.path.removeprefix("/moved"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        given = self.headers.get("Authorization", "").removeprefix("Bearer ") or self.headers.get("x-api-key")
        if given != self.api_key:
            self._send(401, {"error": {"message": "Incorrect API key provided"}})
            return
        self._send(200, {"object": "list", "data": [{"id": "local-model-a"}, {"id": "local-model-b"}]})

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # keep test output quiet
        pass


@pytest.fixture
def models_server() -> Iterator[str]:
    """A model-listing server on 127.0.0.1; yields its base URL ending in /v1."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ModelListHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def refused_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then closed)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
