"""Moving through samples in the Review tab (``ReviewView.nav``): ``n`` / ``p`` through a review
queue (marking a sample done when the reviewer moves on) or else through the Samples tab's list,
and the queue's progress line above the CoTs.

:class:`ReviewNavigation` is a part the :class:`~thoughtdesk.ui.review.view.ReviewView` has (not
a mixin); what it needs from the view is the :class:`NavHost` protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from thoughtdesk.core.library.reader import StoredSample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import ReviewQueue, mark_done, set_position
from thoughtdesk.ui.widgets.sizing import ElidedLabel


class NavHost(Protocol):
    """What :class:`ReviewNavigation` needs from the Review tab."""

    @property
    def library(self) -> Library | None: ...

    @property
    def stored(self) -> StoredSample | None: ...

    @property
    def author(self) -> str: ...

    @property
    def blind(self) -> bool: ...

    @property
    def progress(self) -> ElidedLabel: ...

    @property
    def status(self) -> ElidedLabel: ...

    #: ``(sample_pk or None, step) -> sample_pk or None``: the Samples tab's list.
    sample_neighbour: Callable[[int | None, int], int | None]

    def show_sample(self, sample_pk: int | None) -> None: ...

    def show_message(self, text: str) -> None: ...

    def when_shown(self, action: Callable[[], None]) -> None: ...


class ReviewNavigation:
    """The queue worked through (if any), where in it the reviewer is, and ``n`` / ``p``."""

    def __init__(self, host: NavHost) -> None:
        self.host = host
        self.queue: ReviewQueue | None = None
        self.index = 0

    def next_sample_key(self) -> int | None:
        """The sample ``n`` would show (for computing its similarity ahead)."""
        stored = self.host.stored
        if self.queue is not None:
            following = self.index + 1
            return self.queue.sample_pks[following] if following < self.queue.total else None
        return self.host.sample_neighbour(stored.pk, +1) if stored is not None else None

    def move_sample(self, step: int) -> None:
        """Next (+1) or previous (-1) sample: of the queue, else of the Samples tab's list (n / p)."""
        queue, library, stored = self.queue, self.host.library, self.host.stored
        if queue is not None and library is not None:  # (a queue is always of the open library)
            if step > 0 and stored is not None and stored.pk in queue.sample_pks:
                mark_done(library, queue.id, stored.pk)  # moving on = reviewed
                queue.done.add(stored.pk)
            target = self.index + step
            if not 0 <= target < queue.total:
                self.update_progress()
                self.host.show_message("End of the queue" if step > 0 else "Start of the queue")
                return
            self.go_to_index(target)
            return
        neighbour = self.host.sample_neighbour(stored.pk if stored is not None else None, step)
        if neighbour is None:
            self.host.show_message("No next sample" if step > 0 else "No previous sample")
        else:
            self.host.show_sample(neighbour)

    def start_queue(self, queue: ReviewQueue) -> None:
        """Work through ``queue`` from where it was left (the controller turns blind mode on for
        a blind queue, through its menu action, so the check mark and the setting agree)."""
        self.queue = queue
        self.index = queue.resume_index()
        self.update_progress()
        self.host.when_shown(lambda: self.go_to_index(self.index))

    def leave_queue(self) -> None:
        self.queue = None
        self.update_progress()

    def go_to_index(self, index: int) -> None:
        """Show the queue's sample ``index`` (remembered as the queue's position)."""
        library = self.host.library
        if self.queue is None or library is None or not self.queue.sample_pks:
            return
        self.index = max(0, min(index, self.queue.total - 1))
        self.queue.position = self.index
        set_position(library, self.queue.id, self.index)
        self.host.show_sample(self.queue.sample_pks[self.index])

    def go_to_sample(self, sample_pk: int) -> bool:
        """Show ``sample_pk`` inside the queue, if it is one of its samples."""
        if self.queue is None or sample_pk not in self.queue.sample_pks:
            return False
        self.go_to_index(self.queue.sample_pks.index(sample_pk))
        return True

    def update_progress(self) -> None:
        """The queue's progress line (hidden without a queue) and the reviewer's line."""
        progress = self.host.progress
        if self.queue is None:
            progress.setText("")
            progress.setVisible(False)
        else:
            progress.setVisible(True)
            progress.setText(
                f"Queue “{self.queue.name}”: sample {self.index + 1} of {self.queue.total} · {self.queue.progress_text}"
            )
        mode = "blind review" if self.host.blind else "open review"
        self.host.status.setText(f"Reviewer: {self.host.author} · {mode}")
