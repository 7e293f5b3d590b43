"""Painting the compare view's similarity highlights: visible panels at once, the rest when idle.

:class:`HighlightPainting` is mixed into :class:`~thoughtdesk.ui.review.compare.view.CompareView`; it
uses the view's ``_matrix``, ``_alignment``, ``_cots``, ``_pool`` (the CoT panels), ``_stale``
(indices still to paint), ``_theme``, the ``slider``/``threshold_label``/``groups_label``
widgets, the ``scroll`` area and the ``_regroup_timer``/``_idle_timer`` timers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from thoughtdesk.core.review.compare.similarity import group_colours
from thoughtdesk.ui.review.compare.cot_panel import CotPanel
from thoughtdesk.ui.widgets.safe_text import highlighted_cot_html

PALETTE_SIZE = 12
#: Milliseconds of painting per idle step, so keys stay responsive while off-screen panels fill in.
IDLE_BUDGET_MS = 6.0


class HighlightPainting:
    """The threshold slider, re-grouping and the budgeted painting of highlighted documents."""

    def _on_slider(self, _value: int) -> None:
        self._update_threshold_label()
        self._regroup_timer.start()

    def _apply_threshold(self) -> None:
        self._regroup_timer.stop()
        if self._matrix is None:
            return
        self._alignment = self._matrix.groups(self.threshold)
        self._paint_highlights(only_in_view=True)
        self.thresholdChanged.emit(self.threshold)

    def _update_threshold_label(self) -> None:
        self.threshold_label.setText(f"{self.slider.value()} %")

    def _paint_highlights(self, only_in_view: bool = False) -> None:
        """Rebuild the highlighted documents; with ``only_in_view``, of visible panels only.

        The others are marked stale and painted when idle or when scrolled to.
        """
        if self._alignment is None:
            return
        targets: Sequence[int] = range(len(self._cots))
        if only_in_view:
            self._stale = set(targets)
            targets = [i for i in targets if self._in_view(self._pool[i])]
        self._paint(targets)
        self.groups_label.setText(f"{len(self._alignment.groups)} groups")
        self._schedule_idle()

    def _paint(self, indices: Sequence[int]) -> None:
        alignment = self._alignment
        if alignment is None:
            return
        theme = self._theme or self.theme()
        colours = group_colours(PALETTE_SIZE, theme)  # type: ignore[arg-type]
        for index in indices:
            html = highlighted_cot_html(
                alignment.texts[index], alignment.sentences[index], alignment.group_of[index], colours, theme
            )
            self._pool[index].paint(html, alignment.texts[index])
            self._stale.discard(index)

    def _schedule_idle(self) -> None:
        if self._stale and not self._idle_timer.isActive():
            self._idle_timer.start()

    def _paint_some_stale(self) -> None:
        """Paint stale panels the filters show, in order, for at most IDLE_BUDGET_MS."""
        started = time.perf_counter()
        for index in sorted(self._stale):
            if index >= len(self._cots) or self._pool[index].isHidden():
                continue
            self._paint([index])
            if (time.perf_counter() - started) * 1000.0 > IDLE_BUDGET_MS:
                self._idle_timer.start()
                return

    def _in_view(self, panel: CotPanel) -> bool:
        if panel.isHidden():
            return False
        viewport = self.scroll.viewport()
        top_left = panel.mapTo(viewport, panel.rect().topLeft())
        return viewport.rect().intersects(panel.rect().translated(top_left))

    def _paint_stale_in_view(self, _value: int = 0) -> None:
        if self._stale and self._alignment is not None:
            self._paint([i for i in sorted(self._stale) if self._in_view(self._pool[i])])
