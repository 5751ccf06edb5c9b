"""Pacing a judge run at an API's rate limit: an adaptive concurrency window, optional requests- and tokens-per-minute
budgets, a cost cap, and the progress line. Pure: no Django, DRF or Celery; time is always passed in (``now``, in
seconds of any monotonic clock), so every rule is tested with hand-computed sequences.

The window is AIMD-like. It starts low and, until the first 429, grows by one per success (slow start: it doubles per
round trip). After that it grows with time (``growth_per_second`` of itself, at least ``increase_per_second``), and a
429 shrinks it once per round trip by ``decrease_factor``, or by half when the server accepted less than half the
window over the last round trip (the successes of one round trip are the concurrency it accepts, by Little's law: the
limit dropped, or slow start overshot). Growing with time rather than per round trip keeps the probes above the limit
rare at high rates; a gentle decrease keeps the window near the limit (its mean stays above 90 % of it); halving ends
a burst of 429s within a few round trips when the limit drops. A ``Retry-After`` holds every new attempt until it has
passed, and attempts go out spaced at the window's rate (window / latency), not in bursts: a burst, such as every
thread released at once when a hold ends, meets a limit before the average rate does.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

RATE_WINDOW_SECONDS = 1.0  # successes are remembered this long at least (and two round trips)
DEFAULT_TOKENS_PER_REQUEST = 2000  # a tokens-per-minute budget's guess before the first reply says how many
MAX_RETRY_AFTER_SECONDS = 60.0  # a server asking for more is waited on in steps of this (the client retries)


@dataclass(frozen=True)
class PacingSettings:
    start_concurrency: int = 2
    max_concurrency: int = 100
    fixed: bool = False  # True: the window stays at start_concurrency (429s still honour Retry-After)
    increase_per_second: float = 0.5
    growth_per_second: float = 0.1
    decrease_factor: float = 0.9
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    budget_usd: float | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.start_concurrency <= self.max_concurrency:
            raise ValueError("concurrency must be at least 1 and at most the maximum concurrency")
        if not 0 < self.decrease_factor < 1 or self.increase_per_second < 0 or self.growth_per_second < 0:
            raise ValueError("the decrease factor must lie in (0, 1) and the increase be non-negative")
        for name in ("requests_per_minute", "tokens_per_minute", "budget_usd"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name.replace('_', ' ')} must be a positive number")


class ConcurrencyWindow:
    """How many judgements may be in flight. Not thread-safe on its own: ``Pacer`` holds the lock."""

    def __init__(self, settings: PacingSettings, *, now: float):
        self.settings = settings
        self.limit = float(settings.start_concurrency)
        self.slow_start = not settings.fixed
        self.latency: float | None = None  # mean seconds of a successful call (exponentially weighted)
        self._successes: deque[float] = deque()
        self._last_growth = now
        self._last_decrease = -math.inf

    @property
    def allowed(self) -> int:
        return max(1, min(self.settings.max_concurrency, math.floor(self.limit)))

    def successes_within(self, seconds: float, *, now: float) -> int:
        keep = max(RATE_WINDOW_SECONDS, 2 * (self.latency or 0.0))
        while self._successes and self._successes[0] <= now - keep:
            self._successes.popleft()
        return sum(1 for at in self._successes if at > now - seconds)

    def on_success(self, *, started: float, now: float) -> None:
        seconds = max(0.0, now - started)
        self.latency = seconds if self.latency is None else 0.8 * self.latency + 0.2 * seconds
        self._successes.append(now)
        if self.settings.fixed:
            return
        if self.slow_start:
            self.limit += 1
        else:
            step = max(self.settings.increase_per_second, self.settings.growth_per_second * self.limit)
            self.limit += step * (now - self._last_growth)
        self.limit = min(self.limit, float(self.settings.max_concurrency))
        self._last_growth = now

    def on_rate_limited(self, *, started: float, now: float) -> None:
        """One 429. Calls sent before the last decrease saw the old window: their 429s are the same signal."""
        self._last_growth = now
        if self.settings.fixed or started < self._last_decrease:
            return
        self.slow_start = False
        sharp = self.latency is not None and self.successes_within(self.latency, now=now) < self.limit / 2
        self.limit = max(1.0, self.limit * (0.5 if sharp else self.settings.decrease_factor))
        self._last_decrease = now


class TokenBucket:
    """A budget of ``per_minute`` units refilled continuously, holding at most one minute's worth (a burst the API's
    own minute window allows). ``take`` may drive it negative: the next taker waits for the debt to be refilled."""

    def __init__(self, per_minute: float, *, now: float):
        self.rate = per_minute / 60.0
        self.capacity = float(per_minute)
        self.level = self.capacity
        self._at = now

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self._at) * self.rate)
        self._at = now

    def wait(self, amount: float, *, now: float) -> float:
        """Seconds until ``amount`` may be taken (0 when it may be now)."""
        self._refill(now)
        needed = min(amount, self.capacity) - self.level
        return 0.0 if needed <= 0 else needed / self.rate

    def take(self, amount: float, *, now: float) -> None:
        self._refill(now)
        self.level -= amount


class CostMeter:
    """Cost so far against an optional cap. A judgement may start only while what is spent, plus what the calls in
    flight are expected to cost, plus its own expected cost stays within the cap; before any cost is known, one call
    at a time finds it out."""

    def __init__(self, budget_usd: float | None, *, spent_before: float = 0.0, priced_before: int = 0):
        self.budget = budget_usd
        self.spent = spent_before
        self._costs = spent_before  # the run's earlier judgements tell the expected cost too
        self._priced = priced_before

    @property
    def mean_cost(self) -> float | None:
        return self._costs / self._priced if self._priced else None

    def add(self, cost: float | None) -> None:
        if cost is None:
            return
        self.spent += cost
        self._costs += cost
        self._priced += 1

    def may_start(self, *, in_flight: int) -> bool:
        if self.budget is None:
            return True
        if self.spent >= self.budget:
            return False
        mean = self.mean_cost
        if mean is None:
            return in_flight == 0
        return self.spent + (in_flight + 1) * mean <= self.budget


class Pacer:
    """The shared state of one judge run, used from the judging threads (``before_attempt``/``after_attempt``, by
    ``judge_client.JudgeClient``) and the run loop (``may_start``)."""

    def __init__(
        self,
        settings: PacingSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.settings = settings
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        now = clock()
        self.window = ConcurrencyWindow(settings, now=now)
        self.requests = TokenBucket(settings.requests_per_minute, now=now) if settings.requests_per_minute else None
        self.tokens = TokenBucket(settings.tokens_per_minute, now=now) if settings.tokens_per_minute else None
        self.hold_until = now
        self.next_send = now
        self.rate_limited = 0  # 429s seen
        self._tokens_per_request: float = DEFAULT_TOKENS_PER_REQUEST

    def may_start(self, *, in_flight: int) -> bool:
        with self._lock:
            return in_flight < self.window.allowed

    def before_attempt(self) -> None:
        """Block until an attempt may go out: past any Retry-After, within both per-minute budgets."""
        while True:
            with self._lock:
                now = self._clock()
                wait = max(self.hold_until, self.next_send) - now
                if self.requests is not None:
                    wait = max(wait, self.requests.wait(1, now=now))
                if self.tokens is not None:
                    wait = max(wait, self.tokens.wait(self._tokens_per_request, now=now))
                if wait <= 0:
                    if self.window.latency is not None:
                        self.next_send = now + self.window.latency / self.window.allowed
                    if self.requests is not None:
                        self.requests.take(1, now=now)
                    if self.tokens is not None:
                        self.tokens.take(self._tokens_per_request, now=now)
                    return
            self._sleep(min(wait, MAX_RETRY_AFTER_SECONDS))

    def after_attempt(self, status: str, *, started: float, retry_after: float | None, tokens: int) -> None:
        with self._lock:
            now = self._clock()
            if tokens and self.tokens is not None:  # the guess taken before the call, corrected to what it used
                self.tokens.take(tokens - self._tokens_per_request, now=now)
            if tokens:
                self._tokens_per_request = 0.8 * self._tokens_per_request + 0.2 * tokens
            if status == "rate_limited":
                self.rate_limited += 1
                self.window.on_rate_limited(started=started, now=now)
                if retry_after is not None:
                    self.hold_until = max(self.hold_until, now + min(retry_after, MAX_RETRY_AFTER_SECONDS))
            elif status in ("ok", "invalid_reply"):  # the server answered in full: it was not over its limit
                self.window.on_success(started=started, now=now)

    def now(self) -> float:
        return self._clock()


@dataclass(frozen=True)
class Progress:
    done: int
    failed: int
    total: int
    elapsed: float
    rate: float  # judgements per second, recent
    cost_usd: float | None
    concurrency: int
    rate_limited: int


def progress_line(p: Progress) -> str:
    """One line: done, failed, rate, cost so far, time left (at the recent rate)."""
    left = p.total - p.done - p.failed
    eta = "?" if p.rate <= 0 else _duration(left / p.rate)
    cost = "" if p.cost_usd is None else f", ${p.cost_usd:.2f} so far"
    return (
        f"{p.done}/{p.total} done, {p.failed} failed, {p.rate:.1f}/s{cost}, {eta} left "
        f"(concurrency {p.concurrency}, {p.rate_limited} rate-limited replies)"
    )


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
