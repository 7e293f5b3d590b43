"""Edit > Settings… (Ctrl+,), Help > Open log folder, the About dialog and the window icon.

``install(window)`` is listed in ``INSTALLERS`` (``ui/main_window.py``). The Settings dialog
shows the first-run wizard's forms as tabs; OK saves them (keys to the keyring) and applies
offline mode at once; the library path takes effect at the next start.
"""

from __future__ import annotations

from thoughtdesk.core.settings import network
from thoughtdesk.core.settings.logs import log_dir
from thoughtdesk.ui.app.about import AboutDialog, app_icon
from thoughtdesk.ui.qt import (
    QDesktopServices,
    QLabel,
    QUrl,
)
from thoughtdesk.ui.settings.dialog import SettingsDialog


class SettingsMenu:
    """What ``install`` added to the window (kept for tests and for the status indicator)."""

    def __init__(self, window) -> None:
        self.window = window
        self.dialog: SettingsDialog | None = None
        self.about: AboutDialog | None = None
        edit = window.menu("&Edit")
        bar = window.menuBar()
        first, *rest = bar.actions()
        if rest and rest[0] is not edit.menuAction():  # Edit goes right after File, as usual
            bar.removeAction(edit.menuAction())
            bar.insertAction(rest[0], edit.menuAction())
        self.action_settings = window.add_action(edit, "&Settings…", "Ctrl+,", self.open_settings)
        self.action_settings.setObjectName("actionSettings")
        self.action_logs = window.add_action(window.help_menu, "Open &log folder", None, self.open_log_folder)
        self.action_logs.setObjectName("actionOpenLogFolder")
        # The scrollable About dialog (with every licence) replaces the short message box.
        window.action_about.triggered.disconnect()
        window.action_about.triggered.connect(self.show_about)
        window.setWindowIcon(app_icon())
        self.offline_label = QLabel(objectName="offlineIndicator")
        self.offline_label.setToolTip("Offline mode: no connection leaves this computer (Edit > Settings)")
        window.statusBar().addPermanentWidget(self.offline_label)
        self.refresh_offline_indicator()

    def refresh_offline_indicator(self) -> None:
        self.offline_label.setText("Offline" if network.is_offline() else "")

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(parent=self.window)
        dialog.finished.connect(lambda _: self.refresh_offline_indicator())
        dialog.accepted.connect(lambda: self.settings_saved(dialog))
        self.dialog = dialog
        dialog.open()
        return dialog

    def settings_saved(self, dialog: SettingsDialog) -> None:
        """Tell the views (an installed object's ``settings_changed()``, e.g. the Review tab's
        author) and the user what saving did; a key that was not stored is shown as an error."""
        for installed in self.window.installed.values():
            changed = getattr(installed, "settings_changed", None)
            if callable(changed) and installed is not self:
                changed()
        self.window.statusBar().showMessage("; ".join(["Settings saved", *dialog.saved_messages]), 10000)
        if dialog.failed_messages():
            self.window.show_error("Settings", "\n".join(dialog.failed_messages()))

    def open_log_folder(self) -> bool:
        folder = log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def show_about(self) -> AboutDialog:
        self.about = AboutDialog(self.window)
        self.window.last_message = self.about  # where the window keeps its last message
        self.about.open()
        return self.about


def install(window) -> SettingsMenu:
    return SettingsMenu(window)
