"""Soak: 50 annotators voting, a researcher refreshing results pages and a render worker rendering real decks, all at
once for REFIG_SOAK_SECONDS (60 by default; `make soak` runs 300), against the app under gunicorn on PostgreSQL at the
paper's scale. Prints p50/p95 of every request kind and its p95 ratio to /healthz probed on the same connections, the
5xx count (must be 0), votes the clients believe stored against votes in the database (must be equal) and renders done.

Run: DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... pytest tests/benchmarks/test_soak.py -q -s
"""

import json
import os
import statistics
import subprocess
import sys
import threading
import time

import pytest

ANNOTATORS = 50
SOAK_SECONDS = float(os.environ.get("REFIG_SOAK_SECONDS", 60))
RESEARCHER_PAGES = ("/results/", "/coordinate/paper/", "/api/tables/coverage/?study=paper&format=json")
RENDER_DECKS = 60
CSRF = "c" * 32


# --- the load generator (runs in its own process; standard library only) ------------------------
def _soak(host: str, port: int, annotators: list[str], researcher: str, seconds: float) -> dict:
    import http.client

    timings: dict[str, list[float]] = {"healthz": [], "next": [], "submit": [], "results": []}
    statuses: dict[str, int] = {}
    believed: list[str] = []
    failures: list = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def session(cookie: str):
        connection = http.client.HTTPConnection(host, port, timeout=180)
        headers = {"Cookie": f"{cookie}; csrftoken={CSRF}", "X-CSRFToken": CSRF}

        def call(kind: str, method: str, path: str, body=None):
            nonlocal connection
            payload = None if body is None else json.dumps(body).encode()
            extra = {"Content-Type": "application/json"} if payload is not None else {}
            for attempt in range(2):
                start = time.perf_counter()
                try:
                    connection.request(method, path, body=payload, headers={**headers, **extra})
                    response = connection.getresponse()
                    data = response.read()
                    break
                except (http.client.HTTPException, OSError):
                    # the server closed an idle keep-alive connection: reconnect once, as a browser does
                    connection.close()
                    connection = http.client.HTTPConnection(host, port, timeout=180)
                    if attempt:
                        raise
            elapsed = (time.perf_counter() - start) * 1000
            with lock:
                timings[kind].append(elapsed)
                key = f"{kind} {response.status}"
                statuses[key] = statuses.get(key, 0) + 1
            return response.status, data

        return call

    def annotate(cookie: str):
        call = session(cookie)
        try:
            while time.monotonic() < deadline:
                call("healthz", "GET", "/healthz")
                status, body = call("next", "POST", "/api/annotate/next/", {})
                data = json.loads(body or b"{}") if status == 200 else {}
                if data.get("state") != "item":
                    time.sleep(0.5)
                    continue
                token = data["item"]["token"]
                status, body = call(
                    "submit", "POST", "/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 4000}
                )
                if status == 200:
                    with lock:
                        believed.append(token)
        except Exception as error:
            with lock:
                failures.append(repr(error))

    def research(cookie: str):
        call = session(cookie)
        n = 0
        try:
            while time.monotonic() < deadline:
                call("healthz", "GET", "/healthz")
                call("results", "GET", RESEARCHER_PAGES[n % len(RESEARCHER_PAGES)])
                n += 1
        except Exception as error:
            with lock:
                failures.append(repr(error))

    threads = [threading.Thread(target=annotate, args=(c,)) for c in annotators]
    threads.append(threading.Thread(target=research, args=(researcher,)))
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 600)
    return {
        "timings": timings,
        "statuses": statuses,
        "believed": believed,
        "failures": failures,
        "wall_s": time.perf_counter() - started,
    }


if __name__ == "__main__":
    job = json.loads(sys.stdin.read())
    json.dump(_soak(job["host"], job["port"], job["annotators"], job["researcher"], job["seconds"]), sys.stdout)
    sys.exit(0)


# --- the soak -------------------------------------------------------------------------------------
def render_backlog(tmp_path) -> list[int]:
    """RENDER_DECKS real decks of one more configuration, imported and waiting for the render worker."""
    from agents import services
    from agents.models import Artifact
    from tests.agents.decks import one_slide_deck

    root = tmp_path / "runs"
    for i in range(RENDER_DECKS):
        one_slide_deck(root / "soak-render" / f"t{i:04d}" / "output.pptx", title=f"Soak {i}", boxes=2 + i % 4)
    (tmp_path / "configurations.json").write_text(
        json.dumps(
            {
                "configurations": [
                    {
                        "slug": "soak-render",
                        "model": "soak",
                        "harness": "h",
                        "workflow": "direct",
                        "reasoning_effort": "high",
                        "label": "Soak",
                    }
                ]
            }
        )
    )
    services.artifacts_import(run_root=root, configurations_file=tmp_path / "configurations.json")
    return list(
        Artifact.objects.filter(configuration__slug="soak-render", pptx__gt="")
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def test_soak_annotators_researcher_and_render_worker(transactional_db, tmp_path, settings):
    from django.conf import settings as django_settings
    from django.db import connection
    from django.test import Client

    from agents.models import Artifact
    from agents.tasks import audit_and_render
    from annotation.models import Comparison
    from core.services import user_create_with_role
    from tests.annotation.data import PASSWORD, annotator
    from tests.benchmarks.test_annotation_bench import gunicorn_serving, paper_scale
    from tests.celery_worker import celery_worker, send_over_broker

    if connection.vendor != "postgresql":
        pytest.skip("the soak runs on PostgreSQL: set DATABASE_URL")
    study = paper_scale()
    votes_before = Comparison.objects.filter(study=study).count()
    users = [annotator(f"soak-{i}") for i in range(ANNOTATORS)]
    study.annotators.add(*users)
    researcher, _ = user_create_with_role(username="soak-researcher", password=PASSWORD, role="coordinator")
    render_ids = render_backlog(tmp_path)

    def cookie(user):
        client = Client()
        client.force_login(user)
        return f"{django_settings.SESSION_COOKIE_NAME}={client.cookies[django_settings.SESSION_COOKIE_NAME].value}"

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    job = {
        "annotators": [cookie(u) for u in users],
        "researcher": cookie(researcher),
        "seconds": SOAK_SECONDS,
    }
    with (
        celery_worker(queues="render", media_root=settings.MEDIA_ROOT) as worker,
        gunicorn_serving(connection.settings_dict, settings.MEDIA_ROOT) as (host, port, _pid),
    ):
        for start in range(0, len(render_ids), 20):
            send_over_broker(audit_and_render, render_ids[start : start + 20])
        done = subprocess.run(
            [sys.executable, __file__],
            input=json.dumps({**job, "host": host, "port": port}),
            capture_output=True,
            text=True,
            timeout=SOAK_SECONDS + 900,
            env=env,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout)
        rendered_at_end = Artifact.objects.filter(pk__in=render_ids, render_ok__isnull=False).count()
        deadline = time.monotonic() + 300
        while Artifact.objects.filter(pk__in=render_ids, render_ok__isnull=True).exists():
            assert time.monotonic() < deadline and worker.poll() is None, "render worker did not finish"
            time.sleep(1)

    timings = result["timings"]

    def p(values, q):
        return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]

    requests = sum(len(v) for v in timings.values())
    print(
        f"\nsoak {SOAK_SECONDS:.0f} s: {ANNOTATORS} annotators + 1 researcher + 1 render worker under gunicorn: "
        f"{requests} requests in {result['wall_s']:.1f} s ({requests / result['wall_s']:.0f} req/s)"
    )
    for name, values in timings.items():
        if values:
            print(
                f"{name:8s} n={len(values)} p50={p(values, 50):.1f} ms p95={p(values, 95):.1f} ms max={max(values):.1f} ms"
            )
    healthz = p(timings["healthz"], 95)
    print("p95 ratio to /healthz: " + " ".join(f"{k}={p(timings[k], 95) / healthz:.2f}" for k in timings if timings[k]))
    server_errors = {k: n for k, n in result["statuses"].items() if k.split()[-1].startswith("5")}
    stored = Comparison.objects.filter(study=study).count() - votes_before
    print(f"statuses: {result['statuses']}")
    print(
        f"5xx: {sum(server_errors.values())}; votes believed stored {len(result['believed'])}, stored {stored}; "
        f"renders done during the soak {rendered_at_end}/{len(render_ids)}"
    )
    assert not result["failures"], result["failures"][:5]
    assert server_errors == {}
    assert stored == len(result["believed"]) == len(set(result["believed"]))
    assert all(k.endswith(" 200") for k in result["statuses"]), result["statuses"]
    assert Artifact.objects.filter(pk__in=render_ids, render_ok=True).count() == len(render_ids)
