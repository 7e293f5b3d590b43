"""The Settings dialog, its menu items, the About dialog and the window icon."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.screenshots import save_screenshot
from tests.helpers.window import last_message
from thoughtdesk.core.settings import network, secrets
from thoughtdesk.ui.app.about import AboutDialog
from thoughtdesk.ui.qt import QDesktopServices, QKeySequence, QMenu, QObject, QUrl, Slot
from thoughtdesk.ui.settings.dialog import SettingsDialog
from thoughtdesk.ui.settings.options import AppSettings, load_settings, save_settings


def test_settings_round_trip(qtbot, tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF....")
    save_settings(
        AppSettings(
            user_name="Grace",
            library_path=str(tmp_path / "a.thoughtdesk"),
            local_model_path=str(model),
            openai_enabled=True,
            openai_base_url="http://127.0.0.1:9/v1",
        )
    )
    dialog = SettingsDialog()
    qtbot.addWidget(dialog)
    assert dialog.forms.identity.name.text() == "Grace"
    assert dialog.forms.model.file.isChecked() and dialog.forms.model.path.text() == str(model)
    assert dialog.forms.providers.openai.enabled.isChecked()
    dialog.forms.identity.name.setText("Grace Hopper")
    dialog.forms.offline.offline.setChecked(True)
    dialog.forms.model.none.setChecked(True)
    qtbot.keyClicks(dialog.forms.providers.anthropic.key, "  anthropic-secret-42  ")
    dialog.accept()
    assert dialog.result() == 1
    saved = load_settings()
    assert (saved.user_name, saved.offline, saved.local_model_path) == ("Grace Hopper", True, "")
    assert saved.anthropic_enabled and secrets.get_api_key("anthropic") == "anthropic-secret-42"
    assert network.is_offline()
    again = SettingsDialog()
    qtbot.addWidget(again)
    assert again.forms.identity.name.text() == "Grace Hopper" and again.forms.offline.offline.isChecked()
    assert again.forms.providers.anthropic.key.text() == ""  # keys are never shown again
    assert again.forms.providers.anthropic.key.placeholderText() == "stored: ••••t-42"


def test_invalid_model_keeps_the_dialog_open(qtbot, tmp_path):
    dialog = SettingsDialog()
    qtbot.addWidget(dialog)
    dialog.forms.model.file.setChecked(True)
    dialog.forms.model.path.setText(str(tmp_path / "missing.gguf"))
    dialog.accept()
    assert dialog.result() == 0 and dialog.tabs.currentWidget() is dialog.forms.model
    assert "does not exist" in dialog.forms.model.status.text()


def test_menu_items_icon_and_offline_indicator(qtbot, window):
    settings_menu = window.settings
    edit = window.menuBar().findChild(QMenu, "menu_Edit")
    assert edit is not None and settings_menu.action_settings in edit.actions()
    assert settings_menu.action_settings.shortcut() == QKeySequence("Ctrl+,")
    assert settings_menu.action_logs in window.help_menu.actions()
    assert not window.windowIcon().isNull()
    settings_menu.action_settings.trigger()
    dialog = settings_menu.dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.forms.offline.offline.setChecked(True)
    dialog.accept()
    assert settings_menu.offline_label.text() == "Offline"


class _UrlCatcher(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot("QUrl")
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_open_log_folder_opens_the_log_dir(window, tmp_path):
    catcher = _UrlCatcher()
    # PySide6 6.x takes the slot's name as a str; its stubs say bytes, which it refuses at run time.
    QDesktopServices.setUrlHandler("file", catcher, "open")  # type: ignore[arg-type]
    try:
        window.settings.action_logs.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [Path(u.toLocalFile()) for u in catcher.urls] == [tmp_path / "logs"]


def test_about_dialog_lists_versions_and_licences(qtbot, window, tmp_path):
    window.action_about.trigger()
    about = window.findChildren(AboutDialog)[-1]
    qtbot.waitUntil(about.isVisible)
    text = about.text()
    for expected in (
        "ThoughtDesk 0.1.0",
        "Qt 6.",
        "PySide6 6.",
        "Python 3.",
        "PySide6-Essentials",
        "LGPL-3.0",
        "llama-cpp-python",
        "pyqtgraph",
        "msgspec",
        "httpx",
        "BSD-3-Clause",
        "gsm8k",
        "CC BY-NC 4.0",
        "AI2 Mercury Dataset licence",
    ):
        assert expected in text, expected
    assert about.body.isReadOnly()
    about.resize(760, 560)
    save_screenshot(about, tmp_path, "about")


def test_edit_menu_comes_right_after_file(window):
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus[:2] == ["&File", "&Edit"] and menus[-1] == "&Help"


class _LockedKeyring(secrets.MemoryKeyring):
    """A keyring that exists but refuses to store (a locked GNOME Keyring, a denied Keychain)."""

    def set_password(self, service: str, username: str, password: str) -> None:
        import keyring.errors

        raise keyring.errors.KeyringLocked("the collection is locked")


def test_a_key_the_keyring_refuses_is_reported_not_a_crash(qtbot, window):
    secrets.use_keyring(_LockedKeyring())
    settings_menu = window.settings
    settings_menu.action_settings.trigger()
    dialog = settings_menu.dialog
    qtbot.keyClicks(dialog.forms.providers.openai.key, "sk-refused-by-keyring-5555")
    dialog.accept()  # raised SecretStoreError out of accept() before
    assert dialog.result() == 1
    assert dialog.failed_messages() == [
        "the openai key was NOT stored: cannot store the API key of openai in the system keyring "
        "(KeyringLocked); unlock the keyring, or install one (GNOME Keyring, KWallet, macOS Keychain, "
        "Windows Credential Manager)"
    ]
    box = last_message(window)
    assert box.objectName() == "errorBox" and "the openai key was NOT stored" in box.text()
    assert "sk-refused-by-keyring-5555" not in box.text()
    assert load_settings().openai_enabled  # the rest of the settings was saved


def test_the_largest_answer_is_set_in_the_network_tab(qtbot):
    """Issue 15, point 6: the ceiling on a server's answer is a setting the CLI shares."""
    from thoughtdesk.core.generation.backends import response_cap
    from thoughtdesk.core.settings.registry import MAX_RESPONSE_MB
    from thoughtdesk.core.settings.saved import saved

    dialog = SettingsDialog()
    qtbot.addWidget(dialog)
    spin = dialog.forms.offline.max_response
    assert spin.value() == 64 and (spin.minimum(), spin.maximum()) == (1, 4096)
    spin.setValue(3)
    dialog.accept()
    assert load_settings().max_response_mb == 3
    assert saved(MAX_RESPONSE_MB) == 3  # what the command line reads
    assert response_cap.response_cap_bytes() == 3 * response_cap.MB  # and this process uses now
