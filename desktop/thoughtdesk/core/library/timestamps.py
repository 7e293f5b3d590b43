"""Timestamps ThoughtDesk writes into the library: one format, made here.

The format is ISO 8601 in UTC to the second, with ``Z``: ``2024-05-01T09:30:12Z`` (what
:func:`now_iso` returns). It is used for every time ThoughtDesk stamps itself: annotation dates,
review queues, collections, runs and requests (``created``, ``updated``, ``sent_at``,
``finished_at``), the ``_migrations`` log, the exchange file's ``exported``.

Why this one:

- annotation dates leave the library (ThoughtSource and exchange files, docs/review.md) and
  already had it, so exports and files written by older versions stay alike;
- it is fixed-width, so comparing two such strings compares the times: merging annotation
  files keeps the newer of two dates by string order (``core.review.exchange``);
- prefixes stay meaningful: a run's default name takes the first 16 characters
  (``2024-05-01T09:30`` -> ``2024-05-01 09:30``), a generated CoT's ThoughtSource ``date`` the
  first 19 (:func:`thoughtsource_date`).

Durations and ETAs are not computed from these strings (a run's latency comes from the backend,
its ETA from a monotonic clock), so whole seconds lose nothing. Rows written by older versions
keep their text: collections had ``+00:00``, runs ``+00:00`` with milliseconds, the migration
log SQLite's ``YYYY-MM-DD HH:MM:SS``; every reader above accepts those too. Times shown to people
in local time (a skip log's header and file name) are not library timestamps.
"""

from __future__ import annotations

import time

#: ``strftime`` pattern of :func:`now_iso`.
ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

#: The last second formatted and its text: a run stamps every request a few times, and
#: formatting each time cost about 1 % of a run's CPU at concurrency 64.
_last: tuple[int, str] = (-1, "")


def now_iso() -> str:
    """The current time as ThoughtDesk stores it: ``2024-05-01T09:30:12Z`` (UTC, seconds)."""
    global _last
    second = int(time.time())
    if second != _last[0]:
        _last = (second, time.strftime(ISO_FORMAT, time.gmtime(second)))
    return _last[1]


def thoughtsource_date(iso: str) -> str:
    """A stored timestamp as ThoughtSource dates generated CoTs: ``2024/05/01 09:30:12``."""
    return iso[:19].replace("T", " ").replace("-", "/")
