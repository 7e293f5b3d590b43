"""blocked(): no signal inside the block, the previous state after it, even after an error."""

from __future__ import annotations

import pytest

from thoughtdesk.ui.qt import QComboBox, QLineEdit
from thoughtdesk.ui.widgets.signals import blocked


def test_signals_are_blocked_inside_only(qtbot):
    box, edit = QComboBox(), QLineEdit()
    qtbot.addWidget(box)
    qtbot.addWidget(edit)
    seen: list[str] = []
    box.currentTextChanged.connect(seen.append)
    edit.textChanged.connect(seen.append)
    with blocked(box, edit):
        box.addItems(["a", "b"])
        edit.setText("typed")
        assert box.signalsBlocked() and edit.signalsBlocked()
    assert seen == []
    assert not box.signalsBlocked() and not edit.signalsBlocked()
    box.setCurrentIndex(1)
    assert seen == ["b"]


def test_the_previous_state_comes_back_after_nesting_and_errors(qtbot):
    box = QComboBox()
    qtbot.addWidget(box)
    with blocked(box):
        with blocked(box):
            pass
        assert box.signalsBlocked()  # the outer block still holds
    assert not box.signalsBlocked()
    with pytest.raises(RuntimeError), blocked(box):
        raise RuntimeError("while refilling")
    assert not box.signalsBlocked()
