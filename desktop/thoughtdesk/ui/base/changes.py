"""What a write to the library changed: the payload of the window's ``data_changed`` signal.

A feature that wrote to the library calls ``window.notify_data_changed(DataChanges(...))``,
saying what it changed and who it is. Each view refreshes only when the change touches what it
shows, and skips changes it made itself and already shows (Anki's ``OpChanges`` and handler).
Writes by other connections (a run's thread, the CLI) are not notified: views that must follow
them poll (the Results tab's data version).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DataChanges:
    """Which kinds of rows a write touched, and the object that made it (``initiator``).

    ``initiator`` is compared by identity: a view that made the change, or that was already
    updated with its result, is named here and skips the notification. It takes no part in
    equality.
    """

    #: Collections added, removed or renamed (the collection tree).
    collections: bool = False
    #: Samples added, removed or edited.
    samples: bool = False
    #: Generated CoTs added or removed.
    cots: bool = False
    #: Answers or their correctness (new answers, re-scoring).
    answers: bool = False
    #: Reviewers' annotations.
    annotations: bool = False
    #: Generation runs and their requests.
    runs: bool = False
    initiator: object | None = field(default=None, compare=False)

    @classmethod
    def imported(cls, initiator: object | None = None) -> DataChanges:
        """What an import writes: a collection with samples, CoTs and answers."""
        return cls(collections=True, samples=True, cots=True, answers=True, initiator=initiator)

    @property
    def sample_contents(self) -> bool:
        """Anything a sample shows changed: its text, CoTs, answers or annotations."""
        return self.samples or self.cots or self.answers or self.annotations

    @property
    def scores(self) -> bool:
        """Anything accuracy is computed from changed: samples, CoTs or answers."""
        return self.collections or self.samples or self.cots or self.answers
