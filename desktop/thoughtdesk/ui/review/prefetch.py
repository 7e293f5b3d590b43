"""Computing the next sample's similarity ahead, while the reviewer reads the current one.

The similarity matrix is most of the cost of showing a sample with many CoTs (about 30 ms for
60 CoTs). Once a sample is shown, the one ``n`` would show next is read from the library (GUI
thread, a few ms) and its matrix computed in the thread pool; ``show_sample`` then takes it
instead of computing it. A matrix is only used for exactly the texts, in the order, it was
computed for, so blind order, a changed CoT or another sample simply miss the cache.

The next sample's critiques and explanation ratings are read ahead too, with it (one query each
for all its CoTs): decoding a few hundred critiques costs ~10 ms, which ``n`` then does not pay.
They are used once, by the next ``show_sample`` of that sample, and dropped by any rating change
or reload (:meth:`SimilarityPrefetch.forget_critiques`), so a stale rating is never shown.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from thoughtdesk.core.critiques import Critique, ExplanationRating, critiques_for_cots, explanation_ratings_for_cots
from thoughtdesk.core.critiques.quotes import QuoteSpan, quotes_by_cot
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.review.compare.similarity import SimilarityMatrix
from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.qt import QObject, QTimer
from thoughtdesk.ui.review.compare.view import SIMILARITY_CHARS, CotView

#: A sample's critiques, explanation ratings and flaw quotes, by CoT key (read ahead).
SampleCritiques = tuple[
    dict[int, list[Critique]], dict[int, list[ExplanationRating]], dict[int, list[tuple[int, QuoteSpan]]]
]
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
        #: The next sample's critiques and ratings, read ahead: sample key -> (critiques, ratings).
        self._critiques: dict[int, SampleCritiques] = {}
        self._timer = QTimer(self, singleShot=True, interval=DELAY_MS)
        self._timer.timeout.connect(self._prepare_next)

    def take(self, views: Sequence[CotView]) -> SimilarityMatrix | None:
        """The matrix computed ahead for exactly these CoTs, if there is one."""
        return self._cache.get(texts_of(views))

    def take_critiques(self, sample_pk: int) -> SampleCritiques | None:
        """The critiques and explanation ratings of ``sample_pk`` read ahead, once (None: not read)."""
        return self._critiques.pop(sample_pk, None)

    def forget_critiques(self) -> None:
        """Drop what was read ahead (a rating changed, an import, another reviewer name)."""
        self._critiques.clear()

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
        stored = load_sample(view.library, pk, annotations=False)
        if stored is None:
            return
        critiques = critiques_for_cots(view.library, stored.cot_pks, for_view=True)
        texts = {
            cot_pk: cot.cot or "" for cot_pk, cot in zip(stored.cot_pks, stored.sample.generated_cot, strict=False)
        }
        ratings = explanation_ratings_for_cots(view.library, stored.cot_pks)
        self._critiques = {pk: (critiques, ratings, quotes_by_cot(critiques, texts))}
        views, _ = view.cot_views(stored)
        key = texts_of(views)
        if key in self._cache or key in self._running or not key:
            return
        if sum(len(text) for text in key) > SIMILARITY_CHARS:
            return  # too long to compare: the view shows it without highlighting

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
