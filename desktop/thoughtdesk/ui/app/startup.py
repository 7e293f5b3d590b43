"""Starting the desktop application."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import LIBRARY_ENV, LIBRARY_FILENAME, resource_path, user_data_dir
from thoughtdesk.core.settings.saved import resolve_library_path

if TYPE_CHECKING:  # Qt is imported when the GUI starts, not for the command line
    from thoughtdesk.ui.qt import QApplication

DEMO_COLLECTION = "Demo"
#: resources/thoughtdesk.desktop, without ".desktop".
DESKTOP_FILE_NAME = "thoughtdesk"
QUIT_WHEN_SHOWN_ENV = "THOUGHTDESK_QUIT_WHEN_SHOWN"

log = logging.getLogger(__name__)


def open_library_for_gui(path: Path) -> Library:
    """Open the library; a library created just now gets the demo collection, so views have content."""
    is_new = not path.exists()
    library = Library.open(path)
    if is_new:
        add_demo_collection(library)
        log.info("created a new library at %s with the demo collection", path)
    else:
        log.info("opened the library %s", path)
    return library


def needs_confirmation(path: Path, *, chosen_in_wizard: bool = False) -> bool:
    """Whether to ask before creating a library at ``path``: it does not exist and it is not the
    default library in the data folder (a first start creates that one) nor the file the user
    named in the first-run wizard a moment ago. A path given on the command line, handed over,
    in ``$THOUGHTDESK_LIBRARY`` or remembered in Settings may be a typo or a drive not mounted."""
    if path.exists() or chosen_in_wizard:
        return False
    return path.expanduser().absolute() != (user_data_dir() / LIBRARY_FILENAME).absolute()


def add_demo_collection(library: Library) -> None:
    demo = resource_path("demo_collection.json")
    if demo.exists() and library.collection_id(DEMO_COLLECTION) is None:
        from thoughtdesk.core.importing.importer import import_thoughtsource  # a first start only

        import_thoughtsource(library, demo, collection=DEMO_COLLECTION)


def make_application(argv: list[str] | None = None) -> QApplication:
    """The application object (made once), named for QSettings, collecting garbage on the GUI thread."""
    from thoughtdesk.ui.qt import QApplication

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or sys.argv[:1])
    app.setOrganizationName("ThoughtDesk")
    app.setApplicationName("ThoughtDesk")
    from thoughtdesk.ui.settings.options import use_settings_file

    use_settings_file()  # QSettings() and the command line: one INI file in the config folder
    # The desktop entry's name: the Wayland app id, so the dock groups the window under the
    # entry's icon (X11 uses StartupWMClass=ThoughtDesk, the application name).
    app.setDesktopFileName(DESKTOP_FILE_NAME)
    from thoughtdesk.ui.app import gc_guard

    gc_guard.install(app)
    return app


def run_gui(library: str | None = None) -> int:
    """Show the main window on ``library`` (default: the user's library) until it closes.

    A second launch while one runs hands ``library`` to it and returns (one process per user
    and library: :mod:`~thoughtdesk.ui.app.single_instance`). Before the window: the log file,
    the crash dialog, native crashes and Qt's warnings into the log folder, offline mode and the key file fallback
    from the settings, and on a first start the first-run wizard (not when ``firstRun/done`` is
    set or ``THOUGHTDESK_NO_WIZARD=1``). ``THOUGHTDESK_QUIT_WHEN_SHOWN=1`` quits as soon as the
    window is first painted, printing the seconds since the process started (benchmarks).
    """
    app = make_application()
    from thoughtdesk.core.settings.logs import setup_logging, watch_keyring
    from thoughtdesk.ui.app.about import app_icon
    from thoughtdesk.ui.app.crash import install_crash_handler
    from thoughtdesk.ui.app.diagnostics import enable_native_crash_log, route_qt_messages
    from thoughtdesk.ui.app.main_window import MainWindow
    from thoughtdesk.ui.app.single_instance import InstanceServer, hand_off
    from thoughtdesk.ui.qt import QMessageBox, Qt
    from thoughtdesk.ui.settings.options import QtSettings, apply_startup_settings, load_settings, wizard_wanted

    measuring = os.environ.get(QUIT_WHEN_SHOWN_ENV) == "1"  # a cold-start measurement stands alone
    requested = Path(library).expanduser() if library else None
    if not measuring and hand_off(requested):
        where = f" and opens {requested}" if requested is not None else ""
        print(f"ThoughtDesk is already running: its window comes to the front{where}.")
        return 0
    setup_logging()
    install_crash_handler()
    enable_native_crash_log()
    route_qt_messages()
    instance = InstanceServer(parent=app)
    if not measuring:
        instance.listen()
    app.setWindowIcon(app_icon())
    settings = apply_startup_settings()
    watch_keyring()
    wizard_chose = False
    if wizard_wanted():
        from thoughtdesk.ui.settings.first_run import FirstRunWizard

        wizard = FirstRunWizard()
        if wizard.exec():
            settings = load_settings()
            wizard_chose = bool(settings.library_path)
            if wizard.failed_messages():  # e.g. the keyring refused a key: say so before going on
                box = QMessageBox(QMessageBox.Icon.Warning, "ThoughtDesk", "\n".join(wizard.failed_messages()))
                box.setTextFormat(Qt.TextFormat.PlainText)
                box.exec()
    explicit = library or (None if os.environ.get(LIBRARY_ENV) else settings.library_path or None)
    path = resolve_library_path(explicit, QtSettings())  # a bad library/path: logged, the default
    from_wizard = wizard_chose and not library and not os.environ.get(LIBRARY_ENV)
    if needs_confirmation(path, chosen_in_wizard=from_wizard):
        from thoughtdesk.ui.app.missing_library import confirm_library

        chosen = confirm_library(path)  # create it, choose another, or quit: nothing made unasked
        if chosen is None:
            print(f"ThoughtDesk: no library at {path}; nothing was created.", file=sys.stderr)
            return 1
        path = chosen
    created = not path.exists()
    try:
        lib = open_library_for_gui(path)
    except ThoughtDeskError as error:
        QMessageBox.critical(None, "ThoughtDesk", str(error))
        return 1
    window = MainWindow(lib)
    if created:
        window.show_status(f"Created a new library at {path}, with a small demo collection", 0)
    instance.open_requested.connect(window.open_handed_over)
    if measuring:
        from thoughtdesk.ui.app.startup_probe import quit_when_shown

        quit_when_shown(window)
    window.show()
    from thoughtdesk.ui.app.gc_guard import freeze_startup_objects
    from thoughtdesk.ui.qt import QTimer

    QTimer.singleShot(0, freeze_startup_objects)
    return app.exec()
