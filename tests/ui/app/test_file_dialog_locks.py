"""File dialogs never open the files they list (issue 23, point 1, in the GUI): Qt's own dialog
read the first bytes of every file to guess its type, so listing the library's folder opened and
closed the library and its -wal/-shm in the app's process, which drops SQLite's POSIX locks; a
command run on the library then checkpointed and deleted the app's write-ahead log."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog as QtFileDialog
from PySide6.QtWidgets import QFileSystemModel

from tests.helpers.widgets import child
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.qt import QFileDialog

pytestmark = pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads the locks from /proc/locks (Linux)")


def locked_files(folder: Path) -> list[str]:
    """The files in ``folder`` this process holds POSIX locks on (one entry per lock).

    A lock is matched on device and inode both: the same inode number on another file system
    (the venv's, another test's temporary folder) is another file."""
    files = {}
    for path in folder.iterdir():
        st = os.stat(path)
        files[(os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)] = path.name
    held = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields:  # a waiting lock: "1: -> POSIX ..."
            fields.remove("->")
        major, minor, inode = fields[5].split(":")
        key = (int(major, 16), int(minor, 16), int(inode))
        if fields[1] == "POSIX" and int(fields[4]) == os.getpid() and key in files:
            held.append(files[key])
    return sorted(held)


def list_folder(qtbot, dialog: QtFileDialog, folder: Path) -> None:
    """Show ``dialog`` (Qt's widget dialog) on ``folder`` until its model has listed the files."""
    dialog.setOption(QtFileDialog.Option.DontUseNativeDialog, True)
    dialog.setDirectory(str(folder))
    model = child(dialog, QFileSystemModel)
    with qtbot.waitSignal(model.directoryLoaded, timeout=10000):
        dialog.show()
    names = {"library.thoughtdesk", "library.thoughtdesk-wal", "library.thoughtdesk-shm"}
    root = model.index(str(folder))

    def listed() -> bool:
        # A file's type is shown once Qt's file-info work filled its icon and type together (the
        # icon provider's icon() then type(), which is what made Qt read the files): before it,
        # the model has no information for the file and its type is "".
        types = {
            model.index(row, 0, root).data(): model.index(row, 2, root).data() for row in range(model.rowCount(root))
        }
        return all(types.get(name) for name in names)

    qtbot.waitUntil(listed, timeout=10000)


@pytest.mark.parametrize("dialog_kind", ["ThoughtDesk's", "Qt's own"])
def test_listing_the_library_folder_keeps_sqlites_locks(qtbot, tmp_path, dialog_kind):
    library = Library.open(tmp_path / "library.thoughtdesk")
    library.conn.execute("BEGIN")
    try:
        library.conn.execute("SELECT count(*) FROM collection").fetchone()  # a reader's locks held
        before = locked_files(tmp_path)
        assert "library.thoughtdesk-shm" in before
        if dialog_kind == "ThoughtDesk's":
            dialog = QFileDialog.configured(None, "Open", str(tmp_path))
        else:
            dialog = QtFileDialog(None, "Open", str(tmp_path))
        qtbot.addWidget(dialog)
        list_folder(qtbot, dialog, tmp_path)
        after = locked_files(tmp_path)
        dialog.close()
        if dialog_kind == "Qt's own":
            # The control: Qt's own provider drops them, which shows the probe sees the fault.
            if after == before:
                pytest.skip("this Qt's dialog did not read the files it listed (nothing to guard against)")
            assert "library.thoughtdesk-shm" not in after
        else:
            # the fault is a lock lost; another connection of this process may add its own
            dropped = list(before)
            for name in after:
                if name in dropped:
                    dropped.remove(name)
            assert dropped == [], f"listing the folder dropped SQLite's locks on the library: {dropped}"
    finally:
        library.conn.execute("ROLLBACK")
        library.close()


def test_no_module_uses_qts_file_dialog_directly():
    # Every file dialog goes through thoughtdesk.ui.qt.QFileDialog (tests patch its static
    # functions; Qt's would open a real, blocking dialog in a test).
    root = Path(__file__).resolve().parents[3]
    offenders = []
    for folder in (root / "desktop" / "thoughtdesk", root / "tests"):
        for path in folder.rglob("*.py"):
            if path.name in ("qt.py", Path(__file__).name):
                continue
            text = path.read_text(encoding="utf-8")
            if "QFileDialog" in text and "from PySide6.QtWidgets import" in text:
                for line in text.splitlines():
                    if line.startswith("from PySide6.QtWidgets import") and "QFileDialog" in line:
                        offenders.append(str(path.relative_to(root)))
    assert offenders == [], f"import QFileDialog from thoughtdesk.ui.qt in: {offenders}"
    assert sys.modules["thoughtdesk.ui.qt"].QFileDialog is QFileDialog


def test_the_static_functions_return_what_was_chosen(qtbot, tmp_path):
    from thoughtdesk.ui.qt import QApplication, QTimer

    (tmp_path / "old.json").write_text("{}", encoding="utf-8")
    seen: list[QtFileDialog] = []

    def accept() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QtFileDialog):
            QTimer.singleShot(20, accept)
            return
        seen.append(dialog)
        dialog.setOption(QtFileDialog.Option.DontUseNativeDialog, True)
        dialog.accept()

    QTimer.singleShot(20, accept)
    path, chosen_filter = QFileDialog.getSaveFileName(None, "Save", str(tmp_path / "new.json"), "JSON (*.json)")
    assert Path(path) == tmp_path / "new.json" and chosen_filter == "JSON (*.json)"
    assert seen and seen[0].acceptMode() == QtFileDialog.AcceptMode.AcceptSave
    QTimer.singleShot(20, accept)
    path, _ = QFileDialog.getOpenFileName(None, "Open", str(tmp_path / "old.json"), "JSON (*.json)")
    assert Path(path) == tmp_path / "old.json"
