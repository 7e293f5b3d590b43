"""MergeOutcome: what an annotation import did: counts, and every record that did not match, with why."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Unmatched:
    """A record of the file that was not merged. ``where`` names it (dataset/split/sample/CoT and
    key, or the record's index); ``reason`` says why (sample not in the library, CoT not found,
    CoT text changed since export, bad value...)."""

    where: str
    reason: str


@dataclass
class RatingCounts:
    """What an import did with the human ratings of a file (explanation and critique ratings):
    ``records`` read, then added / updated / unchanged / kept as for annotations."""

    records: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    kept: int = 0

    @property
    def merged(self) -> int:
        """Ratings that matched a CoT or critique of the library."""
        return self.added + self.updated + self.unchanged + self.kept


@dataclass
class MergeOutcome:
    """The outcome of :func:`import_annotations`.

    ``format``: ``"thoughtdesk"``, ``"thoughtsource"`` or ``None`` when unrecognised.
    ``records``: annotation records read from the file. ``added``: slots that were empty;
    ``updated``: slots whose stored value was older and differed; ``unchanged``: already stored
    with the same value (re-importing a file adds nothing); ``kept``: slots whose stored value is
    newer than the file's, so it was kept. ``matched_samples``/``matched_cots``: distinct samples
    and CoTs of the library the file's records matched. ``authors``: authors merged.
    ``error``: why nothing was merged (unreadable file, unknown format, ``strict`` and some records
    unmatched); when set, the library was not changed. ``dry_run``: nothing was written.
    """

    path: Path
    format: str | None = None
    records: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    kept: int = 0
    matched_samples: int = 0
    matched_cots: int = 0
    authors: list[str] = field(default_factory=list)
    unmatched: list[Unmatched] = field(default_factory=list)
    error: str | None = None
    dry_run: bool = False
    #: The file's explanation and critique ratings (docs/critiques-review.md); their unmatched
    #: records are in ``unmatched`` too.
    ratings: RatingCounts = field(default_factory=RatingCounts)
    #: The file's step labels (docs/steps.md): one record per author and CoT trace.
    steps: RatingCounts = field(default_factory=RatingCounts)

    @property
    def ok(self) -> bool:
        """True when the merge ran (possibly with some records unmatched)."""
        return self.error is None

    @property
    def merged(self) -> int:
        """Records that matched a CoT of the library (added, updated, unchanged or kept)."""
        return self.added + self.updated + self.unchanged + self.kept

    def reasons(self) -> dict[str, int]:
        """How many records were unmatched for each reason."""
        counts: dict[str, int] = {}
        for item in self.unmatched:
            counts[item.reason] = counts.get(item.reason, 0) + 1
        return counts

    @property
    def summary(self) -> str:
        """One paragraph for a message box or the CLI."""
        if self.error is not None:
            return f"{self.path}: nothing imported: {self.error}"
        verb = "would merge" if self.dry_run else "merged"
        text = (
            f"{self.path} ({self.format} format): {verb} {self.merged} of {self.records} "
            f"annotation(s) on {self.matched_cots} CoT(s) of {self.matched_samples} sample(s): "
            f"{self.added} added, {self.updated} updated, {self.unchanged} already present, "
            f"{self.kept} kept (stored one newer)"
        )
        r = self.ratings
        if r.records:
            text += (
                f"; {verb} {r.merged} of {r.records} rating(s): {r.added} added, {r.updated} updated, "
                f"{r.unchanged} already present, {r.kept} kept"
            )
        t = self.steps
        if t.records:
            text += (
                f"; {verb} {t.merged} of {t.records} step-labelled CoT(s): {t.added} added, {t.updated} updated, "
                f"{t.unchanged} already present, {t.kept} kept"
            )
        if self.unmatched:
            why = "; ".join(f"{n} {reason}" for reason, n in self.reasons().items())
            text += f"; {len(self.unmatched)} not matched ({why})"
        return text
