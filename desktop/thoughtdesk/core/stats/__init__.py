"""Dataset statistics: counts, answer types, choice counts and token-length distributions per
dataset split, and n-gram overlap between datasets (docs/stats.md). No Qt."""

from __future__ import annotations

from thoughtdesk.core.stats.collect import (
    DEFAULT_N,
    LENGTH_FIELDS,
    OVERLAP_FIELDS,
    CollectionStatistics,
    LengthSummary,
    SplitStatistics,
    collection_statistics,
)
from thoughtdesk.core.stats.overlap import NgramSet, OverlapMatrix, shared_counts
from thoughtdesk.core.stats.tokens import NgramHasher, token_count, tokens

__all__ = [
    "DEFAULT_N",
    "LENGTH_FIELDS",
    "OVERLAP_FIELDS",
    "CollectionStatistics",
    "LengthSummary",
    "NgramHasher",
    "NgramSet",
    "OverlapMatrix",
    "SplitStatistics",
    "collection_statistics",
    "shared_counts",
    "token_count",
    "tokens",
]
