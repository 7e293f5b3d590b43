"""Signal helpers shared by the features."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from thoughtdesk.ui.qt import QObject


@contextmanager
def blocked(*objects: QObject) -> Iterator[None]:
    """Block the signals of ``objects`` inside the ``with`` block (e.g. while refilling a combo box
    whose changes the code reacts to), then give each back the state it had before: an object
    blocked by an outer block stays blocked, and an exception inside does not leave any blocked."""
    before = [obj.blockSignals(True) for obj in objects]
    try:
        yield
    finally:
        for obj, was_blocked in zip(objects, before, strict=True):
            obj.blockSignals(was_blocked)
