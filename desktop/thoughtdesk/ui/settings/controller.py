"""Edit ▸ Settings… (Ctrl+,), Help ▸ Open log folder and the offline indicator.

The Settings dialog shows the first-run wizard's forms as tabs; OK saves them (keys to the
keyring), applies offline mode at once and emits ``window.settings_changed``; the library path
takes effect at the next start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thoughtdesk.core.settings import network
from thoughtdesk.core.settings.logs import log_dir
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.qt import (
    QDesktopServices,
    QLabel,
    QObject,
    QUrl,
)

if TYPE_CHECKING:  # the dialog's forms reach the backends and httpx: imported when it is opened
    from thoughtdesk.ui.settings.dialog import SettingsDialog


class SettingsMenu(QObject):
    """Edit ▸ Settings…, Help ▸ Open log folder and the offline indicator (``window.settings``)."""

    def __init__(self, window: WindowApi) -> None:
        super().__init__(window.dialog_parent)
        self._window = window
        #: The Settings dialog opened last (open while the user edits).
        self.dialog: SettingsDialog | None = None
        self.action_settings = window.add_action(window.menu("&Edit"), "&Settings…", "Ctrl+,", self.open_settings)
        self.action_settings.setObjectName("actionSettings")
        self.action_logs = window.add_action(window.menu("&Help"), "Open &log folder", None, self.open_log_folder)
        self.action_logs.setObjectName("actionOpenLogFolder")
        self.offline_label = QLabel(objectName="offlineIndicator")
        self.offline_label.setToolTip("Offline mode: no connection leaves this computer (Edit > Settings)")
        window.add_status_widget(self.offline_label)
        self.refresh_offline_indicator()

    def refresh_offline_indicator(self) -> None:
        """ "Offline" in the status bar while offline mode is on."""
        self.offline_label.setText("Offline" if network.is_offline() else "")

    def open_settings(self) -> SettingsDialog:
        """Edit ▸ Settings…: the settings as tabs; OK saves them."""
        from thoughtdesk.ui.settings.dialog import SettingsDialog

        dialog = SettingsDialog(parent=self._window.dialog_parent)
        dialog.finished.connect(lambda _: self.refresh_offline_indicator())
        dialog.accepted.connect(lambda: self.settings_saved(dialog))
        self.dialog = dialog
        dialog.open()
        return dialog

    def settings_saved(self, dialog: SettingsDialog) -> None:
        """Tell the views (``window.settings_changed``, e.g. the Review tab's author) and the
        user what saving did; a key that was not stored is shown as an error."""
        self._window.notify_settings_changed()
        self._window.show_status("; ".join(["Settings saved", *dialog.saved_messages]), 10000)
        if dialog.failed_messages():
            self._window.show_error("Settings", "\n".join(dialog.failed_messages()))

    def open_log_folder(self) -> bool:
        """Help ▸ Open log folder: the folder in the system's file manager."""
        folder = log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))
