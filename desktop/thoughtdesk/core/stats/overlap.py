"""N-gram overlap between units (datasets, or dataset splits) from their hashed n-gram sets.

Each unit's n-grams are a sorted, de-duplicated numpy uint64 array (exact sets of hashes, not
MinHash sketches). Intersections are counted in one pass: all arrays concatenated and sorted
once, each distinct hash gets the bit mask of the units that hold it, and the pair counts come
from the few distinct masks. With more than 62 units the masks do not fit in 64 bits and the
pairs are intersected one by one (``np.intersect1d``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Hashes gathered for one unit before they are de-duplicated (bounds the memory of a unit to
#: its distinct n-grams plus this many, 8 bytes each).
COMPACT_AT = 1 << 21


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``values`` sorted, repeats dropped (a sort and a mask: faster here than np.unique, which
    numpy 2.3 runs through a hash table for integers)."""
    values = np.sort(values)
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


class NgramSet:
    """A growing set of n-gram hashes: appended in batches, de-duplicated now and then."""

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []
        self._pending = 0
        self._unique = np.zeros(0, dtype=np.uint64)

    def add(self, hashes: np.ndarray) -> None:
        """Add a batch of hashes (repeats allowed)."""
        if len(hashes) == 0:
            return
        self._parts.append(hashes)
        self._pending += len(hashes)
        if self._pending >= COMPACT_AT:
            self._compact()

    def _compact(self) -> None:
        if self._parts:
            self._unique = sorted_distinct(np.concatenate([self._unique, *self._parts]))
            self._parts = []
            self._pending = 0

    def array(self) -> np.ndarray:
        """The distinct hashes, sorted."""
        self._compact()
        return self._unique


@dataclass(frozen=True)
class OverlapMatrix:
    """Distinct n-grams per unit and shared between each pair, with the two measures derived.

    ``containment[i][j]`` = |A_i ∩ A_j| / |A_i|: the share of unit i's distinct n-grams that also
    occur in unit j (asymmetric; 1 on the diagonal unless the unit has none).
    ``jaccard[i][j]`` = |A_i ∩ A_j| / |A_i ∪ A_j| (symmetric).
    """

    field: str
    n: int
    units: list[str]
    sizes: list[int]
    shared: list[list[int]]

    @property
    def containment(self) -> list[list[float]]:
        return [
            [self.shared[i][j] / self.sizes[i] if self.sizes[i] else 0.0 for j in range(len(self.units))]
            for i in range(len(self.units))
        ]

    @property
    def jaccard(self) -> list[list[float]]:
        out = []
        for i in range(len(self.units)):
            row = []
            for j in range(len(self.units)):
                union = self.sizes[i] + self.sizes[j] - self.shared[i][j]
                row.append(self.shared[i][j] / union if union else 0.0)
            out.append(row)
        return out

    def to_json(self) -> dict:
        """The matrix as plain JSON data (rounded measures)."""
        return {
            "field": self.field,
            "n": self.n,
            "units": self.units,
            "distinct_ngrams": self.sizes,
            "shared_ngrams": self.shared,
            "containment": [[round(v, 6) for v in row] for row in self.containment],
            "jaccard": [[round(v, 6) for v in row] for row in self.jaccard],
        }


def shared_counts(sets: list[np.ndarray]) -> list[list[int]]:
    """|A_i ∩ A_j| for every pair of sorted, distinct uint64 arrays (the diagonal: |A_i|)."""
    k = len(sets)
    shared = [[0] * k for _ in range(k)]
    for i, s in enumerate(sets):
        shared[i][i] = len(s)
    if k < 2:
        return shared
    if k > 62:
        for i in range(k):
            for j in range(i + 1, k):
                shared[i][j] = shared[j][i] = len(np.intersect1d(sets[i], sets[j], assume_unique=True))
        return shared
    values = np.concatenate(sets)
    bits = np.concatenate([np.full(len(s), 1 << i, dtype=np.uint64) for i, s in enumerate(sets)])
    order = np.argsort(values)
    values, bits = values[order], bits[order]
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    masks = np.bitwise_or.reduceat(bits, starts)
    # Only hashes held by two units or more matter; their distinct masks are few.
    several = masks[(masks & (masks - np.uint64(1))) != 0]
    several = np.sort(several)
    starts = np.flatnonzero(np.r_[True, several[1:] != several[:-1]]) if len(several) else starts[:0]
    counts = np.diff(np.r_[starts, len(several)])
    for mask, count in zip(several[starts].tolist(), counts.tolist(), strict=True):
        members = [i for i in range(k) if mask >> i & 1]
        for a_index, a in enumerate(members):
            for b in members[a_index + 1 :]:
                shared[a][b] += count
                shared[b][a] += count
    return shared


def overlap_matrix(field: str, n: int, units: dict[str, NgramSet]) -> OverlapMatrix:
    """The overlap matrix of ``units`` (name -> n-gram set), in the given order."""
    arrays = [s.array() for s in units.values()]
    return OverlapMatrix(field, n, list(units), [len(a) for a in arrays], shared_counts(arrays))
