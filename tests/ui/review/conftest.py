"""Shared set-up of the Review tab tests: a real library file with the review fixture, the real
main window offscreen, keys sent as a user types them, and reads through a second connection."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.helpers.paths import FIXTURES
from tests.helpers.window import close_window, open_window
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import AnnotationStore, CotReview
from thoughtdesk.core.settings.registry import USER_NAME
from thoughtdesk.ui.review.view import ReviewView
from thoughtdesk.ui.settings.options import write

COLLECTION_FILE = FIXTURES / "review_ui" / "review_collection.json"
COLLECTION = "Review"
REVIEWER = "alice"


def make_library(path: Path) -> Path:
    """A library file holding the review fixture as collection "Review"."""
    with Library.open(path) as library:
        import_thoughtsource(library, COLLECTION_FILE, collection=COLLECTION)
    return path


def shown_pk(view: ReviewView) -> int:
    """The primary key of the sample the review view shows."""
    assert view.stored is not None, "the review view shows no sample"
    return view.stored.pk


class Session:
    """A main window on a library file, with its Review tab shown."""

    def __init__(self, qtbot, path: Path) -> None:
        self.qtbot = qtbot
        self.path = path
        # Active: window shortcuts (Ctrl+2) need the active window.
        self.window = open_window(qtbot, Library.open(path), size=(1500, 900), active=True)
        self.controller = self.window.review
        self.view = self.controller.view
        QTest.keyClick(self.window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)  # the tab's shortcut
        assert self.window.tabs.currentWidget() is self.view
        qtbot.waitUntil(lambda: self.view.stored is not None, timeout=5000)

    def key(self, key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
        """Type a key where the keyboard focus is (the review view when nothing inside has it)."""
        focus = QApplication.focusWidget()
        target = focus if focus is not None and (focus is self.view or self.view.isAncestorOf(focus)) else self.view
        QTest.keyClick(target, key, modifier)

    def review(self, cot_pk: int, author: str = REVIEWER) -> CotReview:
        """What is stored, read through a second connection (so it was committed)."""
        with Library.open(self.path) as library:
            return AnnotationStore(library, author).review(cot_pk)

    def close(self) -> None:
        close_window(self.window)


@pytest.fixture
def library_path(tmp_path) -> Path:
    # The reviewer's name, where Settings and the first-run wizard keep it. The settings start
    # empty in every test (tests/helpers/app_state.py), so nothing else needs resetting.
    write(USER_NAME, REVIEWER)
    return make_library(tmp_path / "review.thoughtdesk")


@pytest.fixture
def session(qtbot, library_path):
    opened = Session(qtbot, library_path)
    yield opened
    opened.close()
