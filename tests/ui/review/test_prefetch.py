"""The Review tab computes the next sample's similarity while the reviewer reads the current one.

Without the prefetch the view computes the same matrix itself, only later, so the tests check
that the matrix shown after ``n`` is the very one computed ahead, and that it is the similarity
of exactly the texts shown.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.review.compare.similarity import SimilarityMatrix
from thoughtdesk.ui.review.prefetch import texts_of


def next_views(view):
    """The CoTs ``n`` will show, in display order (what the prefetch computes from)."""
    pk = view.next_sample_key()
    assert pk is not None
    views, _ = view.cot_views(load_sample(view.library, pk))
    return pk, views


def test_next_sample_similarity_is_computed_ahead_and_used(session, qtbot) -> None:
    view = session.view
    pk, views = next_views(view)
    qtbot.waitUntil(lambda: view.prefetch.take(views) is not None, timeout=5000)
    ahead = view.prefetch.take(views)
    assert ahead.texts == texts_of(views)

    session.key(Qt.Key.Key_N)
    assert view.stored.pk == pk
    assert view.compare._matrix is ahead  # taken, not computed again on the GUI thread
    fresh = SimilarityMatrix.compute([v.text for v in views])
    assert fresh.texts == ahead.texts and np.array_equal(fresh.scores, ahead.scores)


def test_each_sample_shows_the_similarity_of_its_own_texts(session, qtbot) -> None:
    """Forward, back and forward again, in blind order too: a cached matrix is only used for
    the texts (and order) it was computed from."""
    view = session.view
    steps = [
        lambda: session.key(Qt.Key.Key_N),
        lambda: session.key(Qt.Key.Key_P),
        lambda: view.set_blind(True),
        lambda: session.key(Qt.Key.Key_N),
        lambda: session.key(Qt.Key.Key_N),
        lambda: view.set_blind(False),
        lambda: session.key(Qt.Key.Key_P),
    ]
    for step in steps:
        # The prefetch starts a little after a sample is shown (a timer): let it finish and
        # store its result (delivered by a queued signal, before the task is let go).
        qtbot.waitUntil(lambda: not view.prefetch._timer.isActive() and not view.prefetch._running, timeout=10000)
        step()
        shown, _ = view.cot_views(view.stored)
        assert view.compare._matrix.texts == texts_of(shown)
    assert view.blind is False
