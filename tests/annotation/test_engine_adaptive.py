"""The assignment engine under `allocation="adaptive"` (issue 16): floor first, then the uncertain pairs.

Annotators vote from known strengths: three configurations far apart and two (bravo, charlie) nearly equal, so the
one truly uncertain neighbour pair is known by construction.
"""

import numpy as np
import pytest
from django.test import TestCase

from annotation import selectors, services
from annotation.models import Lease, StudyPair
from bt_elo import bradley_terry
from tests.annotation.data import SLUGS, annotator, build_corpus, next_lease, submit_vote

pytestmark = pytest.mark.django_db

# cfg-alpha-direct ≫ cfg-alpha-specialized ≫ {cfg-bravo-direct ≈ cfg-charlie-direct} (Bradley–Terry log-strengths).
STRENGTH = {"cfg-alpha-direct": 4.0, "cfg-alpha-specialized": 2.0, "cfg-bravo-direct": 0.05, "cfg-charlie-direct": 0.0}
CLOSE = frozenset(("cfg-bravo-direct", "cfg-charlie-direct"))
FAR = frozenset(("cfg-alpha-direct", "cfg-charlie-direct"))


def make_adaptive(*, figures=40, floor=2, **settings):
    build_corpus(figures=figures)
    settings = {"allocation": "adaptive", "adaptive_floor": floor, "overlap_rate": 0, "min_dwell_ms": 0, **settings}
    return services.study_create(name="adaptive", configurations=SLUGS, quota_per_annotator=10_000, **settings)


def cast(study, users, votes, seed):
    """`votes` votes, annotators taking turns; each vote drawn from the true strengths. The k-th vote on a pair draws
    from its own stream (seed, pair, k), so the outcomes do not depend on the database's ids, which decide the order
    the engine serves pairs in. Returns the leases served."""
    served, per_pair = [], {}
    order = sorted(STRENGTH)
    for n in range(votes):
        user = users[n % len(users)]
        # The plan is refitted off the request, after its transaction commits: run those callbacks as a worker would.
        with TestCase.captureOnCommitCallbacks(execute=True):
            lease = next_lease(study=study, annotator=user)
        if lease is None:
            break
        a, b = lease.item.artifact_x, lease.item.artifact_y
        if not lease.left_is_x:
            a, b = b, a
        first, second = sorted((a.configuration.slug, b.configuration.slug))
        k = per_pair[first, second] = per_pair.get((first, second), 0) + 1
        draw = np.random.default_rng([seed, order.index(first), order.index(second), k]).random()
        p_first = 1.0 / (1.0 + np.exp(STRENGTH[second] - STRENGTH[first]))
        winner = first if draw < p_first else second
        outcome = "a" if winner == a.configuration.slug else "b"
        submit_vote(token=lease.token, annotator=user, outcome=outcome, dwell_ms=4000)
        served.append(lease)
    return served


def pair_of(lease) -> frozenset:
    return frozenset((lease.item.artifact_x.configuration.slug, lease.item.artifact_y.configuration.slug))


def test_floor_first_then_votes_go_to_the_uncertain_neighbours():
    study = make_adaptive(figures=40, floor=3)
    users = [annotator(f"ann-{i}") for i in range(3)]
    served = cast(study, users, 60, seed=5)
    assert len(served) == 60
    pairs = [pair_of(lease) for lease in served]
    # The floor: the first 6 × 3 votes give every one of the 6 pairs exactly 3 votes, in rounds.
    for round_end in (6, 12, 18):
        counts = {p: pairs[:round_end].count(p) for p in set(pairs)}
        assert len(counts) == 6 and set(counts.values()) == {round_end // 6}
    # Beyond it, the coin-flip neighbours get the votes; the pair 4 log-units apart (never flipped) gets none.
    after = pairs[18:]
    assert after.count(CLOSE) > len(after) / 3
    assert after.count(FAR) == 0
    # The coverage table is honest about it: the target an adaptive study promises every pair is its floor.
    coverage = selectors.coverage_frame(study="adaptive")
    assert (coverage["target"] == 3).all() and (coverage["n"] >= 3).all()
    assert coverage["n"].sum() == 60


def test_sides_balanced_and_no_item_served_twice_to_one_annotator():
    study = make_adaptive(figures=40, floor=2)
    users = [annotator(f"ann-{i}") for i in range(3)]
    served = cast(study, users, 90, seed=9)
    leases = list(Lease.objects.filter(study=study).select_related("item"))
    assert len(leases) == len(served) == 90
    # No item twice to one annotator, and never the same figure twice for one annotator and pair.
    assert len({(l.annotator_id, l.item_id) for l in leases}) == len(leases)
    assert len({(l.annotator_id, l.item.figure_id, l.item.config_x_id, l.item.config_y_id) for l in leases}) == len(
        leases
    )
    # Sides (assignment.left_is_x): for every annotator and pair, x was on the left as often as on the right, give or
    # take one; so over all annotators a pair is off by at most one per annotator, and over everything by little.
    per_annotator_pair, per_pair = {}, {}
    for l in leases:
        key = (l.item.config_x_id, l.item.config_y_id)
        step = 1 if l.left_is_x else -1
        per_annotator_pair[(l.annotator_id, key)] = per_annotator_pair.get((l.annotator_id, key), 0) + step
        per_pair[key] = per_pair.get(key, 0) + step
    assert max(abs(b) for b in per_annotator_pair.values()) <= 1
    assert max(abs(b) for b in per_pair.values()) <= len(users)
    assert abs(sum(per_pair.values())) <= len(users)
    # The engine's live counters agree (StudyPair x_left / y_left count live leases).
    for pair in StudyPair.objects.filter(study=study):
        assert pair.x_left - pair.y_left == per_pair.get((pair.config_x_id, pair.config_y_id), 0)


def test_a_next_item_request_runs_no_fit_and_one_refresh_per_vote_count(
    monkeypatch, django_capture_on_commit_callbacks
):
    """The refit (Elo and its bootstrap) runs in the analysis task queued after the request commits, never in the
    request: two requests with no vote in between queue one refresh; the refresh fits once; a new vote queues another."""
    study = make_adaptive(figures=20, floor=1)
    users = [annotator("ann-a"), annotator("ann-b")]
    cast(study, users, 8, seed=1)
    calls = []
    real = bradley_terry.bootstrap_elo
    monkeypatch.setattr(bradley_terry, "bootstrap_elo", lambda *a, **k: calls.append(k) or real(*a, **k))
    with django_capture_on_commit_callbacks(execute=False) as queued:
        first = next_lease(study=study, annotator=users[0])
        next_lease(study=study, annotator=users[1])
    assert calls == [] and len(queued) == 1  # no fit in either request; one refresh queued
    queued[0]()  # the worker's turn
    assert len(calls) == 1 and calls[0]["resamples"] < 1000
    submit_vote(token=first.token, annotator=users[0], outcome="a", dwell_ms=4000)
    with django_capture_on_commit_callbacks(execute=True) as queued:
        next_lease(study=study, annotator=users[0])
    assert len(queued) == 1 and len(calls) == 2


def test_coverage_studies_keep_the_round_robin():
    build_corpus(figures=10)
    study = services.study_create(
        name="cov", configurations=SLUGS, overlap_rate=0, min_dwell_ms=0, target_per_pair=2, quota_per_annotator=100
    )
    assert study.allocation == "coverage"
    served = cast(study, [annotator()], 12, seed=0)
    pairs = [pair_of(lease) for lease in served]
    assert len(set(pairs[:6])) == 6 and len(set(pairs[6:])) == 6  # every pair once, then once more
    assert (selectors.coverage_frame(study="cov")["target"] == 2).all()


def test_allocation_settings_through_the_api_and_the_form():
    from django.test import Client

    from tests.annotation.data import coordinator

    build_corpus(figures=4)
    client = Client()
    client.force_login(coordinator())
    created = client.post(
        "/api/studies/",
        {"name": "adapt", "configurations": list(SLUGS), "allocation": "adaptive", "adaptive_floor": 4},
        content_type="application/json",
    )
    assert created.status_code == 201
    body = created.json()
    assert (body["allocation"], body["adaptive_floor"], body["stop_when_flip_below"]) == ("adaptive", 4, 0.05)
    refused = client.post(
        "/api/studies/",
        {"name": "bad", "configurations": list(SLUGS), "allocation": "greedy", "stop_when_flip_below": 0.9},
        content_type="application/json",
    )
    assert refused.status_code == 400
    assert set(refused.json()["detail"]) == {"allocation", "stop_when_flip_below"}
    page = client.get("/coordinate/").content.decode()
    assert 'name="allocation"' in page and 'name="adaptive_floor"' in page and 'name="stop_when_flip_below"' in page
    dashboard = client.get("/coordinate/adapt/").content.decode()
    assert "allocation adaptive (floor 4 per pair)" in dashboard and "pairs at the floor (4)" in dashboard
