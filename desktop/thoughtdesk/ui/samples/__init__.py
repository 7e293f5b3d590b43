"""The Samples tab (Ctrl+1): browse collections, search and filter samples, read one sample.

``install(window)`` adds the tab and its window-wide keys (Ctrl+F search, J / K next and
previous sample); the tab is what other features see as ``window.samples``.
"""

from __future__ import annotations

from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.samples.tab import SamplesTab

__all__ = ["SamplesTab", "install"]


def install(window: WindowApi) -> SamplesTab:
    """Add the Samples tab (Ctrl+1) with Ctrl+F, J and K."""
    tab = SamplesTab(window)
    window.add_tab(tab, "Samples", "Ctrl+1")
    window.add_shortcut("Ctrl+F", tab.focus_search)
    window.add_shortcut("J", lambda: tab.move_selection(+1))
    window.add_shortcut("K", lambda: tab.move_selection(-1))
    return tab
