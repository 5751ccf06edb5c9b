"""The pacing rules (scoring.judge_pacing), each on a sequence computed by hand; and the judge client waiting out
429s under a pacer without spending its attempts."""

from __future__ import annotations

import json

import pytest

from scoring.judge_client import JudgeClient, JudgeInputs, JudgeSettings
from scoring.judge_pacing import (
    DEFAULT_TOKENS_PER_REQUEST,
    ConcurrencyWindow,
    CostMeter,
    Pacer,
    PacingSettings,
    Progress,
    TokenBucket,
    progress_line,
)
from scoring.rubric import load_rubric
from tests.scoring.judge_load import GOOD
from tests.scoring.judge_server import JudgeServer, error_body, reply_body

SETTINGS = PacingSettings(
    start_concurrency=2, max_concurrency=30, increase_per_second=0.5, growth_per_second=0.05, decrease_factor=0.9
)


def test_the_window_doubles_until_a_429_then_shrinks_once_per_round_trip_and_halves_on_a_sharp_drop():
    window = ConcurrencyWindow(SETTINGS, now=0.0)
    window.on_success(started=0.0, now=0.5)
    window.on_success(started=0.1, now=0.6)
    assert (window.limit, window.allowed, window.latency) == (4.0, 4, 0.5)  # slow start: one more per success
    # A 429 at 0.7: the last round trip (0.5 s) brought 2 successes, not fewer than half the window: 4 x 0.9.
    window.on_rate_limited(started=0.2, now=0.7)
    assert window.limit == pytest.approx(3.6) and not window.slow_start
    window.on_rate_limited(started=0.65, now=0.8)  # sent before the decrease: the same signal
    assert window.limit == pytest.approx(3.6)
    window.on_rate_limited(started=0.75, now=0.9)  # fresh: 2 successes in (0.4, 0.9] >= 1.8, so 3.6 x 0.9
    assert window.limit == pytest.approx(3.24)
    # Past slow start it grows with time since the last change (0.9 -> 3.0): max(0.5, 5 % of 3.24) = 0.5 a second.
    window.on_success(started=2.5, now=3.0)
    assert window.limit == pytest.approx(4.29) and window.allowed == 4
    # A large window grows by 5 % of itself a second: 20 -> 20 + 0.05 x 20 x 2 = 22 in two seconds.
    window.limit = 20.0
    window.on_success(started=4.5, now=5.0)
    assert window.limit == pytest.approx(22.0)
    # The limit dropped: one success in the last round trip (4.7, 5.2], fewer than 22 / 2: halve.
    window.on_rate_limited(started=5.1, now=5.2)
    assert window.limit == pytest.approx(11.0)


def test_the_window_never_passes_its_ceiling_and_a_fixed_window_never_moves():
    window = ConcurrencyWindow(SETTINGS, now=0.0)
    for i in range(40):
        window.on_success(started=i, now=i + 0.1)
    assert window.allowed == 30
    fixed = ConcurrencyWindow(PacingSettings(start_concurrency=3, max_concurrency=3, fixed=True), now=0.0)
    fixed.on_success(started=0.0, now=1.0)
    fixed.on_rate_limited(started=1.0, now=2.0)
    assert fixed.allowed == 3


def test_a_token_bucket_allows_a_minute_at_once_then_the_per_second_rate():
    bucket = TokenBucket(60, now=0.0)  # one a second, a minute's worth held
    assert bucket.wait(60, now=0.0) == 0.0
    bucket.take(60, now=0.0)
    assert bucket.wait(1, now=0.0) == 1.0 and bucket.wait(1, now=0.5) == 0.5
    bucket.take(1, now=1.0)
    bucket.take(10, now=1.0)  # more than was left: a debt the next taker waits out
    assert bucket.wait(1, now=1.0) == 11.0


def test_the_cost_meter_starts_nothing_that_could_pass_the_budget():
    meter = CostMeter(0.01)
    assert meter.may_start(in_flight=0) and not meter.may_start(in_flight=1)  # cost unknown: one call finds it out
    meter.add(0.002)
    meter.add(None)  # unpriced: neither spent nor counted
    assert meter.mean_cost == 0.002
    assert meter.may_start(in_flight=2)  # 0.002 + 3 x 0.002 = 0.008
    assert not meter.may_start(in_flight=4)  # 0.002 + 5 x 0.002 = 0.012
    earlier = CostMeter(0.01, spent_before=0.01, priced_before=5)  # the run spent it already
    assert earlier.mean_cost == 0.002 and not earlier.may_start(in_flight=0)
    assert CostMeter(None).may_start(in_flight=1000)


class FakeTime:
    def __init__(self):
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_retry_after_holds_every_attempt_and_the_per_minute_budgets_space_them():
    t = FakeTime()
    pacer = Pacer(SETTINGS, clock=t.clock, sleep=t.sleep)
    pacer.after_attempt("rate_limited", started=99.0, retry_after=2.0, tokens=0)
    pacer.before_attempt()
    assert t.sleeps == [2.0] and pacer.rate_limited == 1

    t = FakeTime()
    pacer = Pacer(PacingSettings(requests_per_minute=120), clock=t.clock, sleep=t.sleep)
    for _ in range(120):
        pacer.before_attempt()
    assert t.sleeps == []
    pacer.before_attempt()  # 2 a second once the minute's worth is spent
    assert t.sleeps == [0.5]

    t = FakeTime()
    pacer = Pacer(PacingSettings(tokens_per_minute=6000), clock=t.clock, sleep=t.sleep)
    for _ in range(3):
        pacer.before_attempt()  # guessed at 2000 tokens each
    assert t.sleeps == [] and DEFAULT_TOKENS_PER_REQUEST == 2000
    pacer.after_attempt("ok", started=100.0, retry_after=None, tokens=1000)  # 1000 of the guess given back
    pacer.before_attempt()  # the guess is now 0.8 x 2000 + 0.2 x 1000 = 1800 tokens, 1000 are there
    assert t.sleeps == [pytest.approx(8.0)]  # (1800 - 1000) / 100 a second


def test_the_progress_line():
    line = progress_line(Progress(1200, 3, 2000, 30.0, 40.0, 1.234, 12, 7))
    assert line == "1200/2000 done, 3 failed, 40.0/s, $1.23 so far, 20 s left (concurrency 12, 7 rate-limited replies)"
    assert "2 min 05 s left" in progress_line(Progress(0, 0, 250, 0.0, 2.0, None, 2, 0))
    assert "1 h 02 min left" in progress_line(Progress(0, 0, 3725, 0.0, 1.0, None, 2, 0))
    assert "? left" in progress_line(Progress(0, 0, 10, 0.0, 0.0, None, 2, 0)) and "$" not in progress_line(
        Progress(0, 0, 10, 0.0, 0.0, None, 2, 0)
    )


def test_bad_pacing_settings_are_refused():
    with pytest.raises(ValueError, match="budget usd must be a positive number"):
        PacingSettings(budget_usd=0)
    with pytest.raises(ValueError, match="at most the maximum"):
        PacingSettings(start_concurrency=5, max_concurrency=4)


def test_a_paced_client_waits_out_429s_without_spending_its_attempts():
    t = FakeTime()
    pacer = Pacer(SETTINGS, clock=t.clock, sleep=t.sleep)
    inputs = JudgeInputs(source_png=b"\x89PNG a", source_mime="image/png", render_png=b"\x89PNG b", object_summary={})
    with JudgeServer() as server:
        for _ in range(5):
            server.push(429, error_body("Rate limit reached"), headers={"retry-after-ms": "250"})
        server.push(200, reply_body("responses", json.dumps(GOOD)))
        settings = JudgeSettings(
            protocol="responses", base_url=server.base_url, model="m", api_key_env="", max_attempts=2
        )
        client = JudgeClient(settings, load_rubric("refig-v1"), sleep=t.sleep, pacer=pacer)
        outcome = client.judge(inputs)
        client.close()
    assert outcome.ok and [a.status for a in outcome.attempts] == ["rate_limited"] * 5 + ["ok"]
    assert pacer.rate_limited == 5 and t.sleeps == [0.25] * 5  # each Retry-After held by the pacer, nothing else
