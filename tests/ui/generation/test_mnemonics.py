"""Every Alt+letter of a run dialog does one thing: two widgets with one mnemonic (Alt+S for the
"Samples and prompts" tab and for Start, Alt+C for Collection and Concurrent requests) make Qt
cycle the focus between them, so neither is pressed. Checked on every tab of every kind."""

from __future__ import annotations

import pytest

from tests.helpers.widgets import mnemonic_clashes
from tests.ui.generation.test_planned_dialog import KINDS, Kind, open_kind
from thoughtdesk.ui.qt import QTabWidget
from thoughtdesk.ui.widgets.mnemonics import mnemonic


def test_the_mnemonic_parser():
    assert mnemonic("&Start") == "s" and mnemonic("Run &name") == "n"
    assert mnemonic("Critiques && rating") is None and mnemonic("A && &B") == "b"


@pytest.mark.parametrize("kind", KINDS, ids=[k.kind for k in KINDS])
def test_every_tab_of_a_run_dialog_has_distinct_mnemonics(window, qtbot, kind: Kind):
    dialog = open_kind(window, kind)
    qtbot.waitExposed(dialog)
    tabs = dialog.findChild(QTabWidget)
    assert tabs is not None
    clashes = {}
    for index in range(tabs.count()):
        tabs.setCurrentIndex(index)
        page = tabs.widget(index)
        assert page is not None
        qtbot.waitUntil(page.isVisible)
        found = mnemonic_clashes(dialog)
        if found:
            clashes[tabs.tabText(index)] = found
    dialog.reject()
    assert clashes == {}
