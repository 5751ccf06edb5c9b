"""Annotators keep voting while the database, then the broker, go away for a few seconds (a TCP proxy between the app
and each service, cut and restored by the test). Every answer during a cut is a clean error — 503 with the app's JSON
error body, never a 500 — and afterwards the votes the clients believe stored are exactly the votes in the database,
none doubled. Clients do what the annotation page does: a submit whose answer did not come is sent again with the same
lease token (comparison_submit is idempotent per token).

The app runs under gunicorn (config/gunicorn.py) with DATABASE_URL and CELERY_BROKER_URL pointing at the proxies."""

import http.client
import json
import threading
import time
from collections import Counter
from urllib.parse import urlparse

import pytest
from django.db import connection
from django.db.models import Count

from tests.benchmarks.test_annotation_bench import CSRF, gunicorn_serving
from tests.celery_worker import BROKER_URL, broker_reachable
from tests.faults.proxy import TcpProxy

pytestmark = pytest.mark.django_db(transaction=True)

ANNOTATORS = 8
PHASES = (("before", 3.0), ("database cut", 4.0), ("after database", 3.0), ("broker cut", 4.0), ("after broker", 3.0))


class Client:
    """One browser tab: a keep-alive connection, reconnecting when the server or the network drops it."""

    def __init__(self, port: int, cookie: str, log: list, phase):
        self.port, self.log, self.phase = port, log, phase
        self.headers = {"Cookie": f"{cookie}; csrftoken={CSRF}", "X-CSRFToken": CSRF, "Accept": "application/json"}
        self.connection = None

    def call(self, method: str, path: str, body=None) -> tuple[int | None, dict]:
        payload = None if body is None else json.dumps(body).encode()
        headers = {**self.headers, **({"Content-Type": "application/json"} if payload else {})}
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.connection.request(method, path, body=payload, headers=headers)
            response = self.connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            if self.connection is not None:
                self.connection.close()
            self.connection = None
            self.log.append((self.phase(), path, None, ""))
            return None, {}
        self.log.append((self.phase(), path, response.status, raw.decode(errors="replace")[:300]))
        try:
            return response.status, json.loads(raw or b"{}")
        except ValueError:
            return response.status, {"unparsed": raw.decode(errors="replace")[:300]}


def annotate(client: Client, stop: threading.Event, believed: set[str]) -> None:
    token, sent = None, False
    while not stop.is_set() or sent:  # a vote already sent is sent until answered, even when the test winds down
        if token is None:
            status, body = client.call("POST", "/api/annotate/next/", {})
            if status == 200 and body.get("state") == "item":
                token = body["item"]["token"]
            elif status == 200:
                return  # nothing left to serve
            else:
                time.sleep(0.2)
            continue
        sent = True
        status, body = client.call("POST", "/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 4000})
        if status in (None, 503):
            time.sleep(0.2)  # no answer, or the service is away: send the same vote again
            continue
        if status == 200:
            believed.add(token)
        token, sent = None, False  # stored, or refused for a stated reason (not believed stored)


def test_votes_survive_database_and_broker_outages_with_clean_errors_only(monkeypatch):
    from annotation import services
    from annotation.models import Comparison
    from tests.annotation.data import SLUGS, annotator, build_corpus, coordinator

    if connection.vendor != "postgresql":
        pytest.skip("the database cut needs a database over TCP: set DATABASE_URL to PostgreSQL")
    if not broker_reachable(BROKER_URL):
        pytest.skip(f"broker {BROKER_URL} is not reachable")
    build_corpus(figures=60)
    study = services.study_create(
        name="outage", configurations=SLUGS, min_dwell_ms=0, target_per_pair=1000, quota_per_annotator=1000
    )
    users = [annotator(f"outage-{i}") for i in range(ANNOTATORS)]
    study.annotators.add(*users)
    researcher = coordinator("outage-coordinator")

    from django.conf import settings
    from django.test import Client as DjangoClient

    def cookie(user):
        client = DjangoClient()
        client.force_login(user)
        return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"

    database = connection.settings_dict
    broker = urlparse(BROKER_URL)
    with (
        TcpProxy(database["HOST"] or "127.0.0.1", int(database["PORT"] or 5432)) as db_proxy,
        TcpProxy(broker.hostname, broker.port or 6379) as broker_proxy,
    ):
        monkeypatch.setenv("CELERY_BROKER_URL", f"redis://127.0.0.1:{broker_proxy.port}{broker.path or '/0'}")
        monkeypatch.setenv("CELERY_TASK_ALWAYS_EAGER", "0")
        monkeypatch.setenv("WEB_WORKERS", "2")
        monkeypatch.setenv("WEB_THREADS", "4")
        with gunicorn_serving({**database, "HOST": "127.0.0.1", "PORT": db_proxy.port}, settings.MEDIA_ROOT) as (
            _,
            port,
            _pid,
        ):
            current = ["before"]
            log: list = []
            believed: set[str] = set()
            stop = threading.Event()
            clients = [Client(port, cookie(u), log, lambda: current[0]) for u in users]
            watcher = Client(port, cookie(researcher), log, lambda: current[0])
            threads = [threading.Thread(target=annotate, args=(c, stop, believed)) for c in clients]

            def watch():  # the coordinator's live leaderboard: its refresh goes to the broker
                while not stop.is_set():
                    watcher.call("GET", "/results/elo/live.json")
                    time.sleep(0.3)

            threads.append(threading.Thread(target=watch))
            for t in threads:
                t.start()
            for name, seconds in PHASES:
                current[0] = name
                if name == "database cut":
                    db_proxy.cut()
                elif name == "broker cut":
                    broker_proxy.cut()
                else:
                    db_proxy.restore()
                    broker_proxy.restore()
                time.sleep(seconds)
            stop.set()
            for t in threads:
                t.join(60)

    statuses = Counter((phase, status) for phase, _, status, _ in log)
    print("\n" + "\n".join(f"{phase:15s} {status}: {n}" for (phase, status), n in sorted(statuses.items(), key=str)))
    server_errors = [entry for entry in log if entry[2] is not None and entry[2] >= 500 and entry[2] != 503]
    assert server_errors == [], server_errors[:5]
    unavailable = [entry for entry in log if entry[2] == 503]
    bodies = [json.loads(body) for *_, body in unavailable]
    assert all(set(b) == {"error", "detail"} and b["error"] == "unavailable" for b in bodies)
    assert any(phase == "database cut" and path.startswith("/api/annotate/") for phase, path, *_ in unavailable)
    # The broker is only needed when a leaderboard refresh is enqueued, at most one per study while one is pending
    # (de-duplicated), so during the cut live.json answers either its cached board or a clean 503 — never a 500,
    # which server_errors above already rules out.
    after = [status for phase, _, status, _ in log if phase in ("after database", "after broker")]
    assert after.count(200) > 0  # the app came back on its own

    stored = Comparison.objects.filter(study=study)
    doubled = list(stored.values("lease").annotate(n=Count("id")).filter(n__gt=1))
    print(f"votes believed stored {len(believed)}, stored {stored.count()}, doubled {len(doubled)}")
    assert doubled == []
    assert set(stored.values_list("lease__token", flat=True)) == believed
