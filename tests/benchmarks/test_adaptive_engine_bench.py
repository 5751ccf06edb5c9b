"""Benchmark: next-item time of an adaptive study beside a coverage study (the baseline), same data, same run.

Run: .venv/bin/pytest tests/benchmarks/test_adaptive_engine_bench.py -q -s   (add DATABASE_URL for PostgreSQL)

10 configurations (45 pairs), 150 figures, votes cast one at a time by three annotators. After every vote the
adaptive study's plan is refitted (Elo + 200 cluster-bootstrap draws, cached per vote counts), so each "next" here
pays for one refit; a second annotator asking before the next vote reads the cache ("cached").
"""

import statistics
import time

import numpy as np
import pytest

from annotation import services
from tests.annotation.data import annotator, build_corpus, next_lease, submit_vote

pytestmark = pytest.mark.django_db

SLUGS = tuple(f"cfg-{i:02d}" for i in range(10))
VOTES = 300


def run(study, users, rng):
    refit, cached = [], []
    for n in range(VOTES):
        user, other = users[n % 3], users[(n + 1) % 3]
        start = time.perf_counter()
        lease = next_lease(study=study, annotator=user)
        refit.append(time.perf_counter() - start)
        start = time.perf_counter()
        peek = next_lease(study=study, annotator=other)  # another tab asking before the vote lands
        cached.append(time.perf_counter() - start)
        submit_vote(token=lease.token, annotator=user, outcome="a" if rng.random() < 0.6 else "b", dwell_ms=4000)
        if peek is not None:
            services.lease_skip(token=peek.token, annotator=other, reason="bench")
    return refit, cached


def test_adaptive_next_item_time_against_coverage():
    build_corpus(figures=150, configurations=SLUGS)
    users = [annotator(f"ann-{i}") for i in range(3)]
    common = {"configurations": SLUGS, "overlap_rate": 0, "min_dwell_ms": 0, "quota_per_annotator": 100_000}
    times = {}
    for allocation in ("coverage", "adaptive"):
        study = services.study_create(name=allocation, allocation=allocation, adaptive_floor=2, **common)
        times[allocation] = run(study, users, np.random.default_rng(1))
    for allocation, (refit, cached) in times.items():
        print(
            f"\n{allocation:>9}: next item median {1000 * statistics.median(refit):.1f} ms after a vote, "
            f"{1000 * statistics.median(cached):.1f} ms with no vote since (p95 {1000 * np.percentile(refit, 95):.1f} ms)"
        )
    ratio = statistics.median(times["adaptive"][0]) / statistics.median(times["coverage"][0])
    cached_ratio = statistics.median(times["adaptive"][1]) / statistics.median(times["coverage"][1])
    print(f"adaptive / coverage median next-item time: {ratio:.2f} after a vote, {cached_ratio:.2f} cached")
    assert cached_ratio < ratio  # the cache is what keeps the common case near coverage's cost
