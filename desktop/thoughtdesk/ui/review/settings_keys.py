"""The Review tab's keys in QSettings, in a module of their own: the Review menu reads them
before the tab (and the modules behind it) is built on first use."""

from __future__ import annotations

#: The label set in use.
LABEL_SET_SETTING = "review/labelSet"
#: Blind mode (the Review menu's check mark before the tab is built; the tab's own state after).
BLIND_SETTING = "review/blind"
#: A library's active review queue: this prefix + the library's path.
ACTIVE_QUEUE_SETTING = "review/activeQueue/"
