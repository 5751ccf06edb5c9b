"""50 concurrent simulated annotators (next item + submit) against the live app on PostgreSQL, at the paper's scale
(10 configurations, 1,000 figures, 10,000 artifacts, 4,270 votes stored), beside the trivial /healthz view.

Run: DATABASE_URL=postgres://... .venv/bin/pytest tests/benchmarks/test_annotation_bench.py -q -s
"""
import os
import statistics
import threading
import time
import urllib.request

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Artifact, Configuration
from annotation import services
from annotation.models import Comparison, Item, Lease
from corpus.models import Figure
from tests.annotation.data import annotator
from tests.annotation.test_concurrency import ApiClient

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
pytestmark = pytest.mark.django_db(transaction=True)
ANNOTATORS, ROUNDS = 50, 4
MAX_QUERIES = 40


def paper_scale():
    configs = Configuration.objects.bulk_create([Configuration(slug=f"c{i:02d}", model=f"m{i % 5}", harness="h", workflow="direct" if i % 2 else "specialized",
                                                               reasoning_effort="high", label=f"C{i}", position=i) for i in range(10)])
    figures = Figure.objects.bulk_create([Figure(
        task_id=f"t{i:04d}", arxiv_id=f"2401.{i:05d}", arxiv_base_id=f"2401.{i:05d}", arxiv_version="v1", title="t", authors=[], abs_url="https://a.b/",
        pdf_url="https://a.b/", source_url="https://a.b/", license="CC BY 4.0", source_path="f.png", sha256="0" * 64, selection_score=1.0,
        field="cs.CV", manifest_image="f.png", image="corpus/x.png", image_format="PNG", image_mode="RGB", width=1, height=1, megapixels=0.0,
        orientation="square", file_size=1) for i in range(1000)])
    artifacts = Artifact.objects.bulk_create([Artifact(configuration=c, figure=f, gate_passed=True, audit_summary={"text boxes": 1}) for c in configs for f in figures])
    study = services.study_create(name="paper", configurations=[c.slug for c in configs], min_dwell_ms=0, target_per_pair=100, overlap_rate=0.04,
                                  quota_per_annotator=1000)
    by = {(a.configuration_id, a.figure_id): a for a in artifacts}
    pairs = [(configs[i], configs[j]) for i in range(10) for j in range(i + 1, 10)]
    voter = annotator("ann-past")
    items, leases, votes = [], [], []
    for n in range(4270):
        x, y = pairs[n % 45]
        figure = figures[(n * 7) % 1000]
        items.append(Item(study=study, figure=figure, config_x=x, config_y=y, artifact_x=by[(x.pk, figure.pk)], artifact_y=by[(y.pk, figure.pk)]))
    items = Item.objects.bulk_create(items, ignore_conflicts=False)
    now = timezone.now()
    leases = Lease.objects.bulk_create([Lease(token=f"past-{n}", study=study, item=it, annotator=voter, left_is_x=n % 2 == 0, state="submitted", expires_at=now)
                                        for n, it in enumerate(items)])
    Comparison.objects.bulk_create([Comparison(comparison_id=f"past-{n}", study=study, item=it, lease=le, annotator=voter, annotator_name=voter.username,
                                               artifact_a=it.artifact_x, artifact_b=it.artifact_y, left_config=it.config_x, outcome="a", counted=True, created_at=now)
                                    for n, (it, le) in enumerate(zip(items, leases))])
    return study


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1000, result


def test_fifty_annotators_next_and_submit(live_server):
    if connection.vendor != "postgresql":
        pytest.skip("the benchmark runs on PostgreSQL: set DATABASE_URL")
    study = paper_scale()
    users = [annotator(f"bench-{i}") for i in range(ANNOTATORS)]
    study.annotators.add(*users)
    clients = [ApiClient(live_server.url, u.username) for u in users]
    timings = {"next": [], "submit": [], "healthz": []}
    errors = []
    lock = threading.Lock()
    barrier = threading.Barrier(ANNOTATORS)

    def health():
        with urllib.request.urlopen(live_server.url + "/healthz", timeout=60) as response:
            return response.status

    def work(client):
        barrier.wait()
        for _ in range(ROUNDS):
            t_h, status_h = timed(health)
            t_n, (status_n, data) = timed(lambda: client.post("/api/annotate/next/", {}))
            if status_n != 200 or data.get("state") != "item":
                errors.append(("next", status_n, data))
                continue
            t_s, (status_s, _) = timed(lambda: client.post("/api/annotate/submit/", {"token": data["item"]["token"], "outcome": "b", "dwell_ms": 4000}))
            if status_s != 200 or status_h != 200:
                errors.append(("submit", status_s))
            with lock:
                timings["healthz"].append(t_h)
                timings["next"].append(t_n)
                timings["submit"].append(t_s)

    threads = [threading.Thread(target=work, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)

    def p(values, q):
        return statistics.quantiles(values, n=100)[q - 1]

    for name, values in timings.items():
        print(f"{name:8s} n={len(values)} p50={p(values, 50):.1f} ms p95={p(values, 95):.1f} ms")
    print(f"ratio p95 next/healthz={p(timings['next'], 95) / p(timings['healthz'], 95):.2f} submit/healthz={p(timings['submit'], 95) / p(timings['healthz'], 95):.2f}")
    assert not errors, errors[:5]
    assert Comparison.objects.filter(study=study).count() == 4270 + ANNOTATORS * ROUNDS

    # bounded SQL per request, measured in-process
    from django.test import Client

    client = Client()
    client.force_login(users[0])
    with CaptureQueriesContext(connection) as next_queries:
        token = client.post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
    with CaptureQueriesContext(connection) as submit_queries:
        client.post("/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 4000}, content_type="application/json")
    print(f"queries: next={len(next_queries)} submit={len(submit_queries)}")
    assert len(next_queries) <= MAX_QUERIES and len(submit_queries) <= MAX_QUERIES
    assert p(timings["next"], 95) <= 3 * p(timings["healthz"], 95), "next-item p95 is more than 3x the trivial view"
    assert p(timings["submit"], 95) <= 3 * p(timings["healthz"], 95), "submit p95 is more than 3x the trivial view"
