"""What the gate learns of a provider's rate limit (see :class:`~thoughtdesk.core.generation.backends.retry.ProviderGate`).

- :class:`HeaderBudget`: the requests or tokens a provider still allows, estimated from the
  rate-limit headers it sends (OpenAI ``x-ratelimit-*``, Anthropic ``anthropic-ratelimit-*``);
- :class:`Pacer`: for a provider that sends none, the rate it accepts, learned from its 429s.

Both are plain state driven by the gate with monotonic times; neither sleeps nor sends.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

#: A header budget keeps this many requests' worth in reserve (for requests and for tokens):
#: requests the client sent before one whose answer told the budget may reach the server after
#: it (a busy client), so "remaining" can be one or two too many.
BUDGET_RESERVE = 1.0


@dataclass
class HeaderBudget:
    """The requests (or tokens) a provider still allows, estimated from its rate-limit headers.

    ``level`` units were left at monotonic time ``at``; the budget refills at ``rate`` units a
    second up to ``cap`` (the per-minute limit: rate = limit / 60). Units the gate started are
    remembered for a minute so that an answer's ``remaining`` (counted by the server when it
    admitted that request) can be brought up to date. Without a known limit there is no refill
    estimate: the budget is trusted until the reset time the server gave, then forgotten.
    """

    level: float | None = None
    at: float = 0.0
    rate: float | None = None
    cap: float | None = None
    expires: float = math.inf
    starts: deque[tuple[float, float]] = field(default_factory=deque)

    def available(self, now: float) -> float | None:
        """Units left now (None: unknown, i.e. not limited by headers)."""
        if self.level is None:
            return None
        if self.rate is None:
            if now >= self.expires:
                self.level = None
                return None
            return self.level
        level = self.level + self.rate * (now - self.at)
        return level if self.cap is None else min(self.cap, level)

    def wait_for(self, units: float, now: float) -> float:
        """Seconds until ``units`` are available (0: now; at most until the reset time)."""
        left = self.available(now)
        if left is None:
            return 0.0
        if self.cap is not None:
            # a request larger than the whole budget still runs (when it is full); the others
            # leave a reserve of their own size
            units = self.cap if units >= self.cap else min(self.cap, units * (1 + BUDGET_RESERVE))
        if left >= units:
            return 0.0
        if self.rate:
            return (units - left) / self.rate
        return max(0.0, self.expires - now)

    def take(self, units: float, now: float) -> None:
        """``units`` were just sent."""
        self.starts.append((now, units))
        while self.starts and self.starts[0][0] < now - 60.0:
            self.starts.popleft()
        left = self.available(now)
        if left is not None:
            self.level, self.at = left - units, now

    def observe(
        self, remaining: int | None, limit: int | None, reset: float | None, sent_at: float, now: float
    ) -> None:
        """An answer to a request sent at ``sent_at`` said ``remaining`` units were left."""
        if remaining is None:
            return
        if limit:
            self.cap, self.rate = float(limit), limit / 60.0
        since = sum(units for started, units in self.starts if started > sent_at)
        level = remaining - since + (self.rate * (now - sent_at) if self.rate else 0.0)
        self.level = level if self.cap is None else min(self.cap, level)
        self.at = now
        self.expires = now + reset if reset is not None else math.inf


#: The pacer starts when this many of the last answers (the second figure) were 429s without
#: rate-limit headers: with 10 % random 429s that happens about once in a million answers.
PACE_START = (7, 8)
#: ... or when the moving share of 429s over at least 32 answers reaches this: 10 % random 429s
#: stay more than five standard deviations below it.
PACE_SHARE = 0.3
#: On a 429 the pacer's rate is multiplied by this (one cut per round: see :class:`Pacer`);
#: by its cube when the previous cut was less than :data:`PACE_WINDOW` ago (still far above).
PACE_CUT = 0.8
#: While the pace is what holds requests back, each success adds this many requests a second
#: to it; successes come at about the rate, so it grows by about 5 % a second (probing).
PACE_GROWTH = 0.05
#: The same below :data:`PACE_CUT` times the rate of the last cut: back quickly to a rate the
#: provider accepted.
PACE_CLIMB = 0.5
#: Seconds of sent requests the pacer's first rate is measured over.
PACE_WINDOW = 1.0


@dataclass
class Pacer:
    """Spaces requests at a learned rate, for a provider that says nothing of its limit.

    Inactive (no spacing) until the gate sees nearly all recent answers refused
    (:data:`PACE_START`). The first rate is what was sent over the last :data:`PACE_WINDOW`
    seconds, cut: too high, but 429s come back at once and the next cuts follow quickly. Each
    later cut multiplies the rate by :data:`PACE_CUT`, only for a 429 of a request sent after
    the previous cut (the others answer the old rate: one cut per round, not one per 429).
    While the pace is what holds requests back, successes raise it (fast back to just under
    the last cut's rate, then slowly), so it settles just under the provider's limit: a climb
    above it costs a 429 or two and a cut.
    """

    rate: float | None = None  # requests a second; None: not pacing
    next_start: float = -math.inf
    last_cut: float = -math.inf
    held_at: float = -math.inf  # when the pace last delayed a request
    cuts: int = 0
    ceiling: float = 0.0  # the rate at the last cut
    starts: deque[float] = field(default_factory=deque)  # when requests started, until pacing begins
    first_start: float = math.inf

    @property
    def active(self) -> bool:
        return self.rate is not None

    def wait_for(self, now: float) -> float:
        """Seconds until the pace lets the next request go (0: now)."""
        if self.rate is None or now >= self.next_start:
            return 0.0
        self.held_at = now
        return self.next_start - now

    def take(self, now: float) -> None:
        """A request starts now."""
        if self.rate is not None:
            self.next_start = max(now, self.next_start) + 1.0 / self.rate
            return
        self.first_start = min(self.first_start, now)
        self.starts.append(now)
        if len(self.starts) > 4096:  # only the last PACE_WINDOW seconds are read
            while self.starts and self.starts[0] < now - PACE_WINDOW:
                self.starts.popleft()

    def accepted(self, now: float) -> None:
        """A request was answered (not refused) now."""
        if self.rate is not None and now - self.held_at < 1.0:
            # back quickly to just under the rate of the last 429, then slowly beyond it
            self.rate += PACE_CLIMB if self.rate < PACE_CUT * self.ceiling else PACE_GROWTH

    def rejected(self, sent_at: float, now: float) -> None:
        """A request sent at ``sent_at`` was refused with 429 (now)."""
        if self.rate is None:
            # The first rate: what was sent over the last PACE_WINDOW seconds (or since the
            # first request). Too high, as the refused were sent too, but the next cuts come
            # quickly (a 429 comes back at once); the accepted answers could be too low (a
            # provider answers 429s at once and its accepted requests only later), and a rate
            # too low takes a long climb.
            while self.starts and self.starts[0] < now - PACE_WINDOW:
                self.starts.popleft()
            span = min(PACE_WINDOW, max(0.05, now - self.first_start))
            self.rate = max(1.0 / PACE_WINDOW, len(self.starts) / span) * PACE_CUT
            self.starts.clear()
        elif sent_at >= self.last_cut:
            # cuts in quick succession: the rate is still far above the limit
            self.ceiling = self.rate
            self.rate = max(0.01, self.rate * (PACE_CUT**3 if now - self.last_cut < PACE_WINDOW else PACE_CUT))
        else:
            return
        self.cuts += 1
        self.last_cut = now
        # the next request waits a full interval of the new pace (the refusal says the bucket is empty)
        self.next_start = now + 1.0 / self.rate
