"""Computing the next sample's similarity ahead, while the reviewer reads the current one.

The similarity matrix is most of the cost of showing a sample with many CoTs (about 30 ms for
60 CoTs). Once a sample is shown, the one ``n`` would show next is read from the library (GUI
thread, a few ms) and its matrix computed in the thread pool; ``show_sample`` then takes it
instead of computing it. A matrix is only used for exactly the texts, in the order, it was
computed for, so blind order, a changed CoT or another sample simply miss the cache.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.review.compare.similarity import SimilarityMatrix
from thoughtdesk.ui.app.tasks import Task
from thoughtdesk.ui.qt import QObject, QTimer
from thoughtdesk.ui.review.compare.view import CotView

#: Matrices kept (the next sample, and a few the reviewer may go back to).
CACHE_SIZE = 4
#: Milliseconds after a sample is shown before the next one is prepared (painting comes first).
DELAY_MS = 120


def texts_of(views: Sequence[CotView]) -> tuple[str, ...]:
    """The texts a matrix is computed from, in display order (the cache key)."""
    return tuple(v.text if isinstance(v.text, str) else "\n".join(v.text) for v in views)


class SimilarityPrefetch(QObject):
    """Prepares the similarity of the review view's next sample in a worker thread."""

    def __init__(self, view) -> None:
        super().__init__(view)
        self.view = view
        self.enabled = True
        self._cache: OrderedDict[tuple[str, ...], SimilarityMatrix] = OrderedDict()
        self._running: dict[tuple[str, ...], Task[SimilarityMatrix]] = {}
        self._timer = QTimer(self, singleShot=True, interval=DELAY_MS)
        self._timer.timeout.connect(self._prepare_next)

    def take(self, views: Sequence[CotView]) -> SimilarityMatrix | None:
        """The matrix computed ahead for exactly these CoTs, if there is one."""
        return self._cache.get(texts_of(views))

    def schedule(self) -> None:
        if self.enabled:
            self._timer.start()

    def _prepare_next(self) -> None:
        view = self.view
        if not view.isVisible():
            return  # the tab was left or the window closed (its library may be closed too)
        pk = view.next_sample_key()
        if pk is None or view.library is None:
            return
        stored = load_sample(view.library, pk)
        if stored is None:
            return
        views, _ = view._views(stored)
        key = texts_of(views)
        if key in self._cache or key in self._running or not key:
            return
        cots = [v.text for v in views]
        task = (
            Task(lambda _ctx: SimilarityMatrix.compute(cots))
            .on_success(lambda matrix: self._store(key, matrix))
            .on_finished(lambda: self._running.pop(key, None))
        )
        self._running[key] = task
        task.start()

    def _store(self, key: tuple[str, ...], matrix: SimilarityMatrix) -> None:
        self._cache[key] = matrix
        self._cache.move_to_end(key)
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)

    def wait(self, timeout_ms: int = 5000) -> None:
        """Block until running computations are done (tests and benchmarks)."""
        from thoughtdesk.ui.qt import QThreadPool

        QThreadPool.globalInstance().waitForDone(timeout_ms)
