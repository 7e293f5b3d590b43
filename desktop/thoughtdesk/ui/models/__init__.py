"""Edit ▸ Models…: the local model library (docs/models.md); ``install(window)`` adds the menu entry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.qt import QObject

if TYPE_CHECKING:  # imported when the dialog is first opened, not before the window's first paint
    from thoughtdesk.ui.models.dialog import ModelsDialog

__all__ = ["ModelsDialog", "ModelsMenu", "install"]


class ModelsMenu(QObject):
    """Edit ▸ Models…: opens the model library (one dialog, raised again when open)."""

    def __init__(self, window: WindowApi) -> None:
        super().__init__(window.dialog_parent)
        self.window = window
        self.dialog: ModelsDialog | None = None
        self.action = window.add_action(window.menu("&Edit"), "&Models…", None, self.open_models)

    def open_models(self) -> ModelsDialog:
        if self.dialog is None:
            from thoughtdesk.ui.models.dialog import ModelsDialog

            self.dialog = ModelsDialog(self.window.dialog_parent)
        self.dialog.refresh()
        self.dialog.open()
        return self.dialog


def install(window: WindowApi) -> ModelsMenu:
    """Add Edit ▸ Models…."""
    return ModelsMenu(window)


def __getattr__(name: str) -> object:
    if name == "ModelsDialog":  # the package's name for it, imported when asked for
        from thoughtdesk.ui.models.dialog import ModelsDialog

        return ModelsDialog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
