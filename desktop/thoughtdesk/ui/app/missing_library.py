"""A library named on the command line (or handed over, or set in Settings) that does not exist.

``thoughtdesk gui /tmp/typo/dir/x.thoughtdesk`` used to create the folders and a library with the
demo collection without a word. Now the user is told and asked first: create a new library there
(and the missing folders), choose another library file, or quit (:func:`confirm_library`).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from pathlib import Path

from thoughtdesk.ui.qt import QFileDialog, QMessageBox, Qt, QWidget

log = logging.getLogger(__name__)


class Choice(enum.Enum):
    CREATE = "create"
    CHOOSE = "choose"
    QUIT = "quit"


def missing_folders(path: Path) -> list[Path]:
    """The folders that creating ``path`` would make, outermost first."""
    return [folder for folder in reversed(path.parents) if not folder.exists()]


def missing_library_box(path: Path, parent: QWidget | None = None, *, quit_text: str = "&Quit") -> QMessageBox:
    """The question about a missing library: what is missing, and the three ways on."""
    folders = missing_folders(path)
    folder_note = (
        f"\n\nThe folder {folders[0]} does not exist either; it would be created"
        + (f" with {len(folders) - 1} folder(s) inside it." if len(folders) > 1 else ".")
        if folders
        else ""
    )
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "No library there",
        f"There is no ThoughtDesk library at\n{path}{folder_note}\n\n"
        "Create a new library there (with a small demo collection), choose another library file, or quit?",
        QMessageBox.StandardButton.NoButton,
        parent,
    )
    box.setObjectName("missingLibrary")
    box.setTextFormat(Qt.TextFormat.PlainText)  # a path is never read as markup
    create = box.addButton("&Create new library", QMessageBox.ButtonRole.AcceptRole)
    create.setObjectName("createLibrary")
    choose = box.addButton("C&hoose another…", QMessageBox.ButtonRole.ActionRole)
    choose.setObjectName("chooseLibrary")
    leave = box.addButton(quit_text, QMessageBox.ButtonRole.RejectRole)
    leave.setObjectName("quitLibrary")
    box.setDefaultButton(choose)  # Enter never creates folders where a typo pointed
    box.setEscapeButton(leave)
    return box


def ask_missing_library(path: Path, parent: QWidget | None = None, *, quit_text: str = "&Quit") -> Choice:
    """Show :func:`missing_library_box` and wait for the answer."""
    box = missing_library_box(path, parent, quit_text=quit_text)
    box.exec()
    name = box.clickedButton().objectName() if box.clickedButton() is not None else ""
    return {"createLibrary": Choice.CREATE, "chooseLibrary": Choice.CHOOSE}.get(name, Choice.QUIT)


def choose_library_file(path: Path, parent: QWidget | None = None) -> Path | None:
    """A file dialog for another library: an existing one, or a new name in an existing folder."""
    start = next((folder for folder in path.parents if folder.is_dir()), Path.home())
    chosen, _ = QFileDialog.getSaveFileName(
        parent,
        "Choose a library",
        str(start / path.name),
        "ThoughtDesk libraries (*.thoughtdesk *.sqlite *.db);;All files (*)",
        options=QFileDialog.Option.DontConfirmOverwrite,  # choosing an existing library opens it
    )
    return Path(chosen) if chosen else None


#: Replaced in tests that answer without a modal loop.
question: Callable[..., Choice] = ask_missing_library
chooser: Callable[[Path, QWidget | None], Path | None] = choose_library_file


def confirm_library(path: Path, parent: QWidget | None = None, *, quit_text: str = "&Quit") -> Path | None:
    """``path`` when a library exists there; otherwise the user's answer: ``path`` itself (create
    it), another file chosen in a file dialog (an existing library, or a new one the user named
    there), or None (quit, or "cancel" where a window is open). Nothing is created here."""
    while not path.exists():
        choice = question(path, parent, quit_text=quit_text)
        log.info("no library at %s: the user chose %s", path, choice.value)
        if choice is Choice.CREATE:
            return path
        if choice is Choice.QUIT:
            return None
        chosen = chooser(path, parent)
        if chosen is not None:
            return chosen
    return path
