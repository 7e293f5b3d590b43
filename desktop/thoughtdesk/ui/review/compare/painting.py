"""Painting the compare view's similarity highlights: visible panels at once, the rest when idle.

:class:`HighlightPainter` is a part the :class:`~thoughtdesk.ui.review.compare.view.CompareView`
has (not a mixin). The view tells it what to paint (:meth:`HighlightPainter.restart` with the
sentence groups, the theme and the panels in use); the painter keeps which panels are still
stale and paints them within a time budget when the event loop is idle, or at once when they
scroll into view.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from thoughtdesk.core.review.compare.colours import Theme
from thoughtdesk.core.review.compare.similarity import Alignment, group_colours
from thoughtdesk.ui.qt import QObject, QScrollArea, QTimer
from thoughtdesk.ui.review.compare.cot_panel import CotPanel
from thoughtdesk.ui.review.compare.safe_text import highlighted_cot_html

PALETTE_SIZE = 12
#: Milliseconds of painting per idle step, so keys stay responsive while off-screen panels fill in.
IDLE_BUDGET_MS = 6.0


class HighlightPainter:
    """The budgeted painting of highlighted documents into the panels of one scroll area."""

    def __init__(self, scroll_area: QScrollArea, parent: QObject) -> None:
        self.scroll_area = scroll_area
        #: The sentence groups painted (None before the first sample).
        self.alignment: Alignment | None = None
        #: The colours are chosen for this theme (set with the alignment).
        self.theme: Theme = "light"
        self.panels: list[CotPanel] = []  # the panels in use, one per CoT
        #: Indices of panels whose document does not show the current alignment yet.
        self.stale: set[int] = set()
        self._idle_timer = QTimer(parent, singleShot=True, interval=0)
        self._idle_timer.timeout.connect(self._paint_some_stale)
        # Panels out of view are painted when they scroll into view (if idle time has not yet).
        self.scroll_area.horizontalScrollBar().valueChanged.connect(self.paint_stale_in_view)
        self.scroll_area.verticalScrollBar().valueChanged.connect(self.paint_stale_in_view)

    def restart(self, alignment: Alignment, theme: Theme, panels: Sequence[CotPanel] | None = None) -> None:
        """New groups or colours (and new panels, if given): every panel is stale, nothing is
        painted yet (:meth:`paint_in_view` paints what shows)."""
        self.alignment = alignment
        self.theme = theme
        if panels is not None:
            self.panels = list(panels)
        self.stale = set(range(len(self.panels)))

    def paint_in_view(self) -> None:
        """Paint the stale panels in view now and the others when idle."""
        self.paint_stale_in_view()
        self.schedule_idle()

    def paint(self, indices: Sequence[int]) -> None:
        """Paint the panels at ``indices`` now (their marks included)."""
        alignment = self.alignment
        if alignment is None:
            return
        colours = group_colours(PALETTE_SIZE, self.theme)
        for index in indices:
            html = highlighted_cot_html(
                alignment.texts[index], alignment.sentences[index], alignment.group_of[index], colours, self.theme
            )
            self.panels[index].paint(html, alignment.texts[index])
            self.stale.discard(index)

    def paint_all(self) -> None:
        """Paint every stale panel now (tests, screenshots, printing)."""
        self._idle_timer.stop()
        self.paint(sorted(self.stale))

    def schedule_idle(self) -> None:
        """Paint the remaining stale panels in idle steps."""
        if self.stale and not self._idle_timer.isActive():
            self._idle_timer.start()

    def paint_stale_in_view(self, _value: int = 0) -> None:
        """Paint the stale panels that are in view (after a scroll, a filter or a new layout)."""
        if self.stale and self.alignment is not None:
            self.paint([i for i in sorted(self.stale) if self._in_view(self.panels[i])])

    def _paint_some_stale(self) -> None:
        """Paint stale panels the filters show, in order, for at most IDLE_BUDGET_MS."""
        started = time.perf_counter()
        for index in sorted(self.stale):
            if index >= len(self.panels) or self.panels[index].isHidden():
                continue
            self.paint([index])
            if (time.perf_counter() - started) * 1000.0 > IDLE_BUDGET_MS:
                self._idle_timer.start()
                return

    def _in_view(self, panel: CotPanel) -> bool:
        if panel.isHidden():
            return False
        viewport = self.scroll_area.viewport()
        top_left = panel.mapTo(viewport, panel.rect().topLeft())
        return viewport.rect().intersects(panel.rect().translated(top_left))
