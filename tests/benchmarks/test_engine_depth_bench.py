"""Benchmark: the next item for an annotator deep in a paper-scale session beside one just starting, same study, same run.

Run: DATABASE_URL=postgres://... .venv/bin/pytest tests/benchmarks/test_engine_depth_bench.py -q -s

The paper-scale study of the annotation benchmark (45,000 items), its statistics gathered; then one annotator is given
1,000 submitted leases (a quota of 1,000 items is the paper's; 5 % of them overlap items, the study's share), which
the statistics have not seen, as for an annotator during their session. A fresh annotator and the deep one ask for
30 items in turn (service calls in process, a vote after each). The pick excludes the annotator's items with NOT IN,
which PostgreSQL hashes once, and the annotator's tally reads the pair kept on each lease, so neither grows with the
session's length (a correlated NOT EXISTS was planned as a nested loop over the pair's free items x the leases).
"""

import statistics
import time

import pytest

from tests.annotation.data import annotator, next_lease, submit_vote
from tests.benchmarks.test_annotation_bench import paper_scale, submitted_leases

pytestmark = pytest.mark.django_db(transaction=True)

DEPTH = 1000
ITEMS = 30
TARGET_RATIO = (
    1.5  # the deep annotator's next item within 1.5x the fresh one's (the work differs only in the exclusion)
)


def test_the_next_item_costs_the_same_a_thousand_items_into_a_session(transactional_db):
    from django.db import connection

    from annotation.models import Item, Lease, Study

    if connection.vendor != "postgresql":
        pytest.skip("the benchmark runs on PostgreSQL: set DATABASE_URL")
    study = paper_scale()
    fresh, deep = annotator("depth-fresh"), annotator("depth-deep")
    study.annotators.add(fresh, deep)
    Study.objects.filter(pk=study.pk).update(quota_per_annotator=2 * DEPTH)  # room after the first thousand
    # The statistics a running deployment has: gathered before this annotator's session (autovacuum analyses a table
    # after a tenth of it changes, so a session's leases go unseen until then).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_lease")
        cursor.execute("ANALYZE annotation_item")
    # Every 40th pooled item, spread over every pair; their counters are left as they are, so the deep annotator's
    # exclusion is all that differs. 5 % overlap leases: the study's 4 % share is met, as the engine would have served.
    pool = Item.objects.filter(study=study, in_pool=True).order_by("pk").values_list("pk", flat=True)
    seen = set(list(pool)[: DEPTH * 40 : 40])
    submitted_leases(study=study, annotator=deep, item_ids=sorted(seen), prefix="depth", overlap_every=20)
    assert Lease.objects.filter(annotator=deep, state="submitted").count() == DEPTH

    timings = {"fresh": [], "deep": []}
    for _ in range(ITEMS):
        for name, user in (("fresh", fresh), ("deep", deep)):  # alternating: the machine's noise hits both alike
            start = time.perf_counter()
            lease = next_lease(study=study, annotator=user)
            timings[name].append(time.perf_counter() - start)
            assert lease is not None and (user == fresh or lease.item_id not in seen)
            submit_vote(token=lease.token, annotator=user, outcome="a", dwell_ms=4000)

    p50 = {name: 1000 * statistics.median(values) for name, values in timings.items()}
    ratio = p50["deep"] / p50["fresh"]
    print(
        f"\nnext item in process, p50 of {ITEMS}: fresh annotator {p50['fresh']:.1f} ms, "
        f"{DEPTH} items into the session {p50['deep']:.1f} ms: {ratio:.2f}x (target <= {TARGET_RATIO}x)"
    )
    assert ratio <= TARGET_RATIO, f"the next item {DEPTH} items into a session costs {ratio:.2f}x a fresh one"
