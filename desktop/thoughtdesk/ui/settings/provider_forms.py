"""Provider settings: an OpenAI-compatible server and Anthropic, each with "Test connection".

The test runs in the thread pool (:class:`Task`): the dialog stays responsive, and the result
label says "Connected …" or the exact failure. Keys typed here go to the keyring when the
settings are saved (:func:`save_api_key`), never to QSettings.
"""

from __future__ import annotations

from collections.abc import Callable

from thoughtdesk.core.generation.backends.connection_check import (
    ConnectionResult,
    check_anthropic,
    check_openai_compatible,
)
from thoughtdesk.core.generation.backends.http import credentials_in
from thoughtdesk.core.generation.defaults import DEFAULT_BASE_URLS
from thoughtdesk.core.settings import config as core_config
from thoughtdesk.core.settings import secrets
from thoughtdesk.core.settings.logs import register_secret
from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.qt import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.settings.forms import KeySaveResult, effort_combo, keyring_warning, save_api_key, set_effort
from thoughtdesk.ui.settings.options import AppSettings
from thoughtdesk.ui.widgets.labels import plain_label


class ProviderPanel(QGroupBox):
    """One provider: enabled, base URL, key (masked), Test connection and its result."""

    tested = Signal(object)  # ConnectionResult, on the GUI thread

    def __init__(
        self,
        provider: str,
        title: str,
        check: Callable[[str, str | None], ConnectionResult],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(title, parent)
        self.provider = provider
        self._check = check
        self.task: Task[ConnectionResult] | None = None
        self.setObjectName(f"provider_{provider}")
        form = QFormLayout(self)
        self.enabled = QCheckBox("Use this provider", objectName=f"{provider}Enabled")
        form.addRow(self.enabled)
        self.base_url = QLineEdit(objectName=f"{provider}BaseUrl")
        form.addRow("Base URL:", self.base_url)
        # Why an address with user:pass@ will not work, under the field while it has them.
        self.address_note = plain_label(name=f"{provider}BaseUrlNote")
        self.address_note.setStyleSheet("color: #b3261e;")
        self.address_note.setVisible(False)
        form.addRow(self.address_note)
        self.base_url.textChanged.connect(self._check_address)
        self.effort = effort_combo(f"{provider}ReasoningEffort")
        form.addRow("Reasoning effort:", self.effort)
        self.key = QLineEdit(objectName=f"{provider}Key")
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.textEdited.connect(lambda _: self.enabled.setChecked(True))
        form.addRow("API key:", self.key)
        row = QHBoxLayout()
        self.test_button = QPushButton("Test connection", objectName=f"{provider}Test")
        self.test_button.clicked.connect(self.test_connection)
        row.addWidget(self.test_button)
        row.addStretch(1)
        form.addRow(row)
        self.result = plain_label(name=f"{provider}Result", selectable=True)
        form.addRow(self.result)

    def _check_address(self, text: str) -> None:
        has = credentials_in(text.strip())
        # One line: a wrapped label spanning a QFormLayout row got one line's height when it
        # appeared in a dialog already shown, and the rest was cut. The why is in the tooltip.
        self.address_note.setText(
            "Remove the user:pass@ part: it is never sent (a key goes in API key)." if has else ""
        )
        self.address_note.setToolTip(
            "This address carries a user name or password (user:pass@). ThoughtDesk does not send "
            "them, because base URLs are stored with every run and answer. A key goes in API key "
            "below (sent as a Bearer token)."
            if has
            else ""
        )
        self.address_note.setVisible(has)

    def stored_key(self) -> str | None:
        """The stored key if it was saved for the address in the form (never sent elsewhere)."""
        default = DEFAULT_BASE_URLS.get(self.provider, "")
        try:
            return core_config.stored_key_for(self.provider, self.base_url.text().strip() or default, default)
        except secrets.SecretStoreError:
            return None

    def load(self, enabled: bool, base_url: str, effort: str = "") -> None:
        self.enabled.setChecked(enabled)
        self.base_url.setText(base_url)
        set_effort(self.effort, effort)
        self.key.clear()
        stored = self.stored_key()
        self.key.setPlaceholderText(f"stored: {secrets.masked(stored)}" if stored else "paste the key")

    def key_for_use(self) -> str | None:
        """The key typed now, else the stored one."""
        typed = self.key.text().strip()
        return typed or self.stored_key()

    def test_connection(self) -> Task[ConnectionResult]:
        """Check the connection in the background; the result label and ``tested`` follow."""
        url, key = self.base_url.text().strip(), self.key_for_use()
        register_secret(key)
        self.test_button.setEnabled(False)
        self.result.setText("Testing…")
        check = self._check
        # Bound methods, not lambdas: Qt drops the connections if the panel is closed first.
        task = (
            Task(lambda ctx: check(url, key))
            .on_success(self._show_result)
            .on_failure(self._show_failure)
            .on_finished(self._finished)
        )
        self.task = task
        return task.start()

    def _show_failure(self, error: BaseException) -> None:
        self._show_result(ConnectionResult(False, f"{type(error).__name__}: {error}"))

    def _finished(self) -> None:
        self.test_button.setEnabled(True)

    def _show_result(self, result: ConnectionResult) -> None:
        self.result.setProperty("ok", result.ok)
        self.result.setStyleSheet("color: #1b7f3b;" if result.ok else "color: #b3261e;")
        # Success reads "Connected to … (HTTP 200); models: …", a failure "Failed: <why>".
        text = result.message[:1].upper() + result.message[1:] if result.ok else "Failed: " + result.message
        self.result.setText(text)
        self.tested.emit(result)

    def save_key(self, parent: QWidget | None) -> KeySaveResult | None:
        """Store a newly typed key; returns what happened, or None when no key was typed."""
        typed = self.key.text().strip()
        if not typed:
            return None
        try:
            return save_api_key(
                parent, self.provider, typed, self.base_url.text().strip() or DEFAULT_BASE_URLS.get(self.provider, "")
            )
        except secrets.SecretStoreError as error:  # a locked keyring: say so, do not crash
            return KeySaveResult(False, f"the {self.provider} key was NOT stored: {error}")


class ProvidersForm(QWidget):
    """Both providers, and the keyring warning when there is no keyring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.keyring_note = plain_label(name="keyringWarning")
        self.keyring_note.setStyleSheet("color: #8a5300;")
        layout.addWidget(self.keyring_note)
        self.openai = ProviderPanel(
            "openai",
            "OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio…)",
            lambda url, key: check_openai_compatible(url, key),
        )
        self.anthropic = ProviderPanel("anthropic", "Anthropic", lambda url, key: check_anthropic(key, base_url=url))
        layout.addWidget(self.openai)
        layout.addWidget(self.anthropic)
        self.keys_note = plain_label(name="keysNote")
        layout.addWidget(self.keys_note)
        layout.addStretch(1)
        self.refresh_keyring_note()

    def refresh_keyring_note(self) -> None:
        text = keyring_warning()
        self.keyring_note.setText(text)
        self.keyring_note.setVisible(bool(text))
        # Where keys go, in agreement with the warning above it (which says when it is not the
        # system keyring: it said "no keyring" right above "kept in the system keyring").
        where = "Keys are kept in the system keyring" if not text else "Keys are kept only where said above"
        self.keys_note.setText(f"{where}, never in the library, the settings file, logs or exports.")

    def load(self, settings: AppSettings) -> None:
        self.openai.load(settings.openai_enabled, settings.openai_base_url, settings.openai_reasoning_effort)
        self.anthropic.load(
            settings.anthropic_enabled, settings.anthropic_base_url, settings.anthropic_reasoning_effort
        )
        self.refresh_keyring_note()

    def store(self, settings: AppSettings) -> None:
        settings.openai_enabled = self.openai.enabled.isChecked()
        settings.openai_base_url = self.openai.base_url.text().strip()
        settings.anthropic_enabled = self.anthropic.enabled.isChecked()
        settings.anthropic_base_url = self.anthropic.base_url.text().strip()
        settings.openai_reasoning_effort = self.openai.effort.currentData() or ""
        settings.anthropic_reasoning_effort = self.anthropic.effort.currentData() or ""

    def save_keys(self, parent: QWidget | None) -> list[KeySaveResult]:
        """Store newly typed keys (asking first when there is no keyring); what happened to each."""
        results = [r for r in (self.openai.save_key(parent), self.anthropic.save_key(parent)) if r is not None]
        self.refresh_keyring_note()
        return results
