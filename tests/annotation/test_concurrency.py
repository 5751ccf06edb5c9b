"""Several annotator clients at once against a live server, on either database: no duplicate leases, no lost or doubled
votes."""

import json
import threading
import urllib.request
from collections import Counter

import pytest
from django.conf import settings
from django.test import Client

from annotation import services
from annotation.models import Comparison, Lease
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus

pytestmark = pytest.mark.django_db(transaction=True)
CSRF = "c" * 32  # any well-formed token works when cookie and header agree


class ApiClient:
    """A plain HTTP client with its own session, like a browser tab."""

    def __init__(self, base: str, username: str):
        client = Client()
        assert client.login(username=username, password=PASSWORD)
        self.base = base
        self.cookie = (
            f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}; csrftoken={CSRF}"
        )

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "Cookie": self.cookie, "X-CSRFToken": CSRF},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")


def run_all(workers):
    barrier = threading.Barrier(len(workers))
    errors = []

    def wrapped(work):
        try:
            barrier.wait()
            work()
        except Exception as error:  # surfaced below
            errors.append(repr(error))

    threads = [threading.Thread(target=wrapped, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors


def test_simultaneous_annotators_get_distinct_leases_and_every_vote_once(live_server):
    build_corpus(figures=8)
    study = services.study_create(
        name="race", configurations=SLUGS, min_dwell_ms=0, overlap_rate=0, quota_per_annotator=6
    )
    users = [annotator(f"ann-{i}") for i in range(8)]
    study.annotators.add(*users)
    clients = [ApiClient(live_server.url, u.username) for u in users]
    stored = Counter()

    def session(client, name):
        def work():
            for _ in range(6):
                status, data = client.post("/api/annotate/next/", {})
                assert status == 200 and data["state"] == "item", data
                token = data["item"]["token"]
                body = {"token": token, "outcome": "a", "dwell_ms": 4000}
                # a double submit from an impatient client: stored once
                assert client.post("/api/annotate/submit/", body)[0] == 200
                assert client.post("/api/annotate/submit/", body)[0] == 200
                stored[name] += 1

        return work

    run_all([session(c, u.username) for c, u in zip(clients, users)])
    assert sum(stored.values()) == 48
    assert Comparison.objects.count() == 48
    assert Lease.objects.filter(state="submitted").count() == 48
    per_item = Counter(
        Lease.objects.filter(state__in=["open", "submitted"], is_overlap=False).values_list("item_id", flat=True)
    )
    assert max(per_item.values()) == 1, "an item was handed to two annotators at once"
    per_lease = Counter(Comparison.objects.values_list("lease_id", flat=True))
    assert set(per_lease.values()) == {1}
    # coverage stayed even: 6 pairs, 48 votes, 8 per pair
    assert set(Counter(Lease.objects.values_list("item__config_x", "item__config_y")).values()) == {8}


def test_racing_double_submits_on_one_lease_store_one_vote(live_server):
    build_corpus(figures=2)
    study = services.study_create(name="double", configurations=SLUGS, min_dwell_ms=0)
    user = annotator()
    study.annotators.add(user)
    clients = [ApiClient(live_server.url, user.username) for _ in range(6)]
    status, data = clients[0].post("/api/annotate/next/", {})
    token = data["item"]["token"]
    answers = []
    run_all(
        [
            lambda c=c: answers.append(
                c.post("/api/annotate/submit/", {"token": token, "outcome": "b", "dwell_ms": 5000})
            )
            for c in clients
        ]
    )
    assert [s for s, _ in answers] == [200] * 6
    assert Comparison.objects.count() == 1 and Comparison.objects.get().outcome == "b"
