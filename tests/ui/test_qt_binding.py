"""The Qt binding in use must not leak or free references to ``None``.

PySide6 6.12.0 drops one reference to ``None`` on every call of a method returning void; on
Python < 3.12 (where ``None`` is not immortal) a long session then aborts with
"Fatal Python error: none_dealloc". pyproject pins PySide6 below 6.12; this test catches such a
binding if the pin is ever lifted.
"""

from __future__ import annotations

import sys

from thoughtdesk.ui.qt import QTextEdit


def test_void_calls_keep_the_reference_count_of_none(qtbot):
    edit = QTextEdit()
    qtbot.addWidget(edit)
    before = sys.getrefcount(None)
    for _ in range(2000):
        edit.setFixedHeight(40)
        edit.setPlainText("x")
    after = sys.getrefcount(None)
    # Other threads may hold or release a few references meanwhile; a broken binding loses 4,000.
    assert abs(after - before) < 200, f"None refcount changed by {after - before} over 4,000 Qt calls"
