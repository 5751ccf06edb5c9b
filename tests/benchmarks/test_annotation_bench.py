"""200 simulated annotators at a realistic pace (next item, its three images, think, submit) against the live app on
PostgreSQL, at the paper's scale (10 configurations, 1,000 figures, 10,000 artifacts, 4,270 votes stored), beside the
trivial /healthz view measured in the same run.

Run: DATABASE_URL=postgres://... .venv/bin/pytest tests/benchmarks/test_annotation_bench.py -q -s   (or `make bench`)

Pace: each annotator thinks for a dwell time drawn from the demo's votes (demo/bundle/battles.csv, dwell_ms: median
22 s) divided by THINK_SCALE, so that the run lasts under a minute; 200 annotators then ask as often as
200 x THINK_SCALE real ones would (the 50 annotators of the issue make 2.5 items/s). Annotators start at random points
of an item, so they do not ask in step. Target: next-item and submit p95 within TARGET_RATIO x /healthz p95. Printed:
the CPU per completed item of the web processes and of the database's backends. Information only, no target: the
saturated closed loop (annotators asking again as soon as they are answered) and one annotator alone.

The app is served the way production serves it: gunicorn with config/gunicorn.py (the file docker/start-web.sh uses),
in its own processes, on the test database this benchmark fills. The load comes from another process (this file run as
a script). Each simulated annotator is one thread with one HTTP connection (like a browser tab), opened and warmed up
before the clock starts, opened again after the server's keep-alive lapsed; only the time from sending a request to
reading its whole answer is recorded. /healthz is probed on the same connections, during the annotators' think time, so
it sees the same server load; so is "auth", an authenticated API request that stops at input validation (session, user
and role queries, no service call): the floor of any annotator request.
"""

import contextlib
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ANNOTATORS = 200
THINK_SCALE = 2  # dwell times divided by this: 200 annotators ask as often as 400 real ones
LOAD_SECONDS = 45
TARGET_RATIO = 3.0  # next and submit p95 within 3x /healthz p95, same run
SATURATED_ANNOTATORS, SATURATED_ROUNDS = 50, 4  # the closed loop, information only
ALONE_ROUNDS = 50
MAX_QUERIES = 20
KEEPALIVE_SECONDS = 5  # config/gunicorn.py's keepalive: an idle connection older than this is closed by the server
CSRF = "c" * 32  # any well-formed token works when cookie and header agree
DWELLS = Path(__file__).resolve().parents[2] / "demo" / "bundle" / "battles.csv"


def demo_dwell_ms() -> list[int]:
    with open(DWELLS, newline="") as rows:
        return [int(row["dwell_ms"]) for row in csv.DictReader(rows) if row["dwell_ms"]]


# --- the load generator (runs in its own process; standard library only) ------------------------
def _load(host: str, port: int, cookies: list[str], job: dict) -> dict:
    """Each cookie's annotator asks for items: `rounds` of them back to back (closed loop), or, with `dwell_ms`, for
    `seconds`, thinking a drawn dwell / `scale` on each item before submitting it."""
    import http.client
    import random

    timings = {"next": [], "submit": [], "healthz": [], "auth": [], "image": []}
    errors = []
    lock = threading.Lock()
    clock: dict = {}
    # The run's clock starts when every annotator is connected and warmed up.
    barrier = threading.Barrier(len(cookies), action=lambda: clock.setdefault("start", time.monotonic()))
    dwells, scale, rounds = job.get("dwell_ms"), job.get("scale", 1), job.get("rounds")

    def work(index: int, cookie: str):
        rng = random.Random(f"annotator-{index}")
        connection = http.client.HTTPConnection(host, port, timeout=120)
        headers = {"Cookie": f"{cookie}; csrftoken={CSRF}", "X-CSRFToken": CSRF}
        used = [time.monotonic()]

        def call(method, path, body=None):
            payload = None if body is None else json.dumps(body).encode()
            extra = {"Content-Type": "application/json"} if payload is not None else {}
            if time.monotonic() - used[0] > KEEPALIVE_SECONDS - 0.5:
                connection.close()  # the server has closed it, or is about to: a browser opens a new one
            start = time.perf_counter()
            try:
                connection.request(method, path, body=payload, headers={**headers, **extra})
                response = connection.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                connection.close()  # closed by the server just now: reconnect once, as a browser does
                start = time.perf_counter()
                connection.request(method, path, body=payload, headers={**headers, **extra})
                response = connection.getresponse()
            data = response.read()
            elapsed = (time.perf_counter() - start) * 1000
            used[0] = time.monotonic()
            return elapsed, response.status, data

        def think() -> float:
            return rng.choice(dwells) / 1000 / scale

        def probes() -> tuple:
            t_h, status_h, _ = call("GET", "/healthz")
            # the authenticated floor: session, user and role checks, then a 400 from input validation (no service)
            t_a, status_a, _ = call("POST", "/api/annotate/submit/", {})
            return t_h, status_h, t_a, status_a

        try:
            connection.connect()
            call("GET", "/api/annotate/summary/")  # warm-up: session, user, the server thread's database connection
            barrier.wait()
            deadline = clock["start"] + job.get("seconds", 0)
            if dwells:
                time.sleep(rng.uniform(0, think()))  # arrive somewhere in an item, as annotators already at work do
            done = 0
            while (done < rounds) if rounds else (time.monotonic() < deadline):
                done += 1
                if not dwells:
                    t_h, status_h, t_a, status_a = probes()
                t_n, status_n, body = call("POST", "/api/annotate/next/", {})
                data = json.loads(body or b"{}")
                if status_n != 200 or data.get("state") != "item":
                    with lock:
                        errors.append(["next", status_n, data])
                    continue
                # the three images of the item, as the page loads them (served as stored, no re-encoding)
                images = [call("GET", f"/annotate/img/{data['item']['token']}/{side}") for side in ("source", "a", "b")]
                dwell_ms = 4000
                if dwells:
                    thinking = think()
                    dwell_ms, began = int(thinking * 1000 * scale), time.monotonic()
                    if began + thinking > deadline:
                        break  # the run ends while this annotator thinks: the item stays open, as when they leave
                    time.sleep(rng.uniform(0, thinking))
                    t_h, status_h, t_a, status_a = probes()
                    time.sleep(max(thinking - (time.monotonic() - began), 0))
                t_s, status_s, body = call(
                    "POST",
                    "/api/annotate/submit/",
                    {"token": data["item"]["token"], "outcome": "b", "dwell_ms": dwell_ms},
                )
                with lock:
                    if status_s != 200 or status_h != 200 or status_a != 400 or any(i[1] != 200 for i in images):
                        errors.append(
                            [
                                "submit",
                                status_s,
                                status_h,
                                status_a,
                                [i[1] for i in images],
                                body.decode()[:200],
                                [i[2][:300].decode(errors="replace") for i in images if i[1] != 200],
                            ]
                        )
                    timings["image"].extend(i[0] for i in images)
                    timings["healthz"].append(t_h)
                    timings["auth"].append(t_a)
                    timings["next"].append(t_n)
                    timings["submit"].append(t_s)
        except Exception as error:  # reported to the test
            with lock:
                errors.append(["client", repr(error)])
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(n, c)) for n, c in enumerate(cookies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(900)
    return {"timings": timings, "errors": errors, "wall_s": time.monotonic() - clock.get("start", time.monotonic())}


if __name__ == "__main__":
    job = json.loads(sys.stdin.read())
    json.dump(_load(job["host"], job["port"], job["cookies"], job), sys.stdout)
    sys.exit(0)


# --- the benchmark ------------------------------------------------------------------------------
def submitted_leases(*, study, annotator, item_ids, prefix: str, overlap_every: int = 0) -> list:
    """Leases the annotator has submitted on these items, written in bulk around the services (the pool's counters
    are not touched); every `overlap_every`-th is an overlap lease. Sides alternate."""
    from django.utils import timezone

    from annotation.models import Item, Lease

    now = timezone.now()
    pairs = {
        pk: (x, y) for pk, x, y in Item.objects.filter(pk__in=item_ids).values_list("pk", "config_x_id", "config_y_id")
    }
    return Lease.objects.bulk_create(
        [
            Lease(
                token=f"{prefix}-{n}",
                study=study,
                item_id=pk,
                config_x_id=pairs[pk][0],
                config_y_id=pairs[pk][1],
                annotator=annotator,
                left_is_x=n % 2 == 0,
                is_overlap=bool(overlap_every) and n % overlap_every == 0,
                state="submitted",
                expires_at=now,
            )
            for n, pk in enumerate(item_ids)
        ]
    )


def paper_scale():
    from django.utils import timezone

    from agents.models import Artifact, Configuration
    from annotation import services
    from annotation.models import Comparison, Item
    from corpus.models import Figure
    from tests.annotation.data import annotator

    configs = Configuration.objects.bulk_create(
        [
            Configuration(
                slug=f"c{i:02d}",
                model=f"m{i % 5}",
                harness="h",
                workflow="direct" if i % 2 else "specialized",
                reasoning_effort="high",
                label=f"C{i}",
                position=i,
            )
            for i in range(10)
        ]
    )
    figures = Figure.objects.bulk_create(
        [
            Figure(
                task_id=f"t{i:04d}",
                arxiv_id=f"2401.{i:05d}",
                arxiv_base_id=f"2401.{i:05d}",
                arxiv_version="v1",
                title="t",
                authors=[],
                abs_url="https://a.b/",
                pdf_url="https://a.b/",
                source_url="https://a.b/",
                license="CC BY 4.0",
                source_path="f.png",
                sha256="0" * 64,
                selection_score=1.0,
                field="cs.CV",
                manifest_image="f.png",
                image="corpus/x.png",
                image_format="PNG",
                image_mode="RGB",
                width=1,
                height=1,
                megapixels=0.0,
                orientation="square",
                file_size=1,
            )
            for i in range(1000)
        ]
    )
    # Real image bytes to serve: one source figure (stored under every figure's name) and one plain render per
    # configuration, at the sizes annotators see (the renderer's long edge).
    import io

    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from PIL import Image, ImageDraw

    from core.png import clean_png

    def drawn(size, colour) -> bytes:
        image = Image.new("RGB", size, colour)
        draw = ImageDraw.Draw(image)
        for k in range(40):
            draw.rectangle((20 + k * 37, 30 + (k % 7) * 90, 90 + k * 37, 80 + (k % 7) * 90), outline=(20, 20, 20))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()

    default_storage.save("corpus/x.png", ContentFile(drawn((1800, 900), (250, 250, 250))))
    renders = [
        default_storage.save(
            f"renders/bench-{c.pk}.png", ContentFile(clean_png(drawn((1600, 900), (240, 240, 250 - i))))
        )
        for i, c in enumerate(configs)
    ]
    Artifact.objects.bulk_create(
        [
            Artifact(
                configuration=c,
                figure=f,
                gate_passed=True,
                audit_summary={"text boxes": 1},
                render_png=renders[i],
                render_sha256=f"{i:064d}",
            )
            for i, c in enumerate(configs)
            for f in figures
        ]
    )
    started = time.perf_counter()
    study = services.study_create(
        name="paper",
        configurations=[c.slug for c in configs],
        min_dwell_ms=0,
        target_per_pair=100,
        overlap_rate=0.04,
        quota_per_annotator=1000,
    )
    print(
        f"\nstudy_create (materialises the pool): {time.perf_counter() - started:.2f} s, {Item.objects.filter(study=study).count()} items"
    )
    # 4,270 past votes by one annotator, written in bulk (not through the services), on the study's pooled items
    pairs = [(configs[i], configs[j]) for i in range(10) for j in range(i + 1, 10)]
    pool = {(it.figure_id, it.config_x_id, it.config_y_id): it for it in Item.objects.filter(study=study)}
    voter = annotator("ann-past")
    items = []
    for n in range(4270):
        x, y = pairs[n % 45]
        items.append(pool[(figures[(n * 7) % 1000].pk, x.pk, y.pk)])
    now = timezone.now()
    leases = submitted_leases(study=study, annotator=voter, item_ids=[it.pk for it in items], prefix="past")
    Comparison.objects.bulk_create(
        [
            Comparison(
                comparison_id=f"past-{n}",
                study=study,
                item=it,
                lease=le,
                annotator=voter,
                annotator_name=voter.username,
                artifact_a=it.artifact_x,
                artifact_b=it.artifact_y,
                left_config=it.config_x,
                outcome="a",
                counted=True,
                created_at=now,
            )
            for n, (it, le) in enumerate(zip(items, leases))
        ]
    )
    started = time.perf_counter()
    services.study_pool_sync(study=study, force=True)  # rows written around the services: rebuild the counters
    print(f"study_pool_sync(force=True): {time.perf_counter() - started:.2f} s")
    return study


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU time of every process in the group (gunicorn's master and workers), from /proc; with the
    master's reaped children, so that a worker recycled meanwhile (max_requests) still counts."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the command: state ppid pgrp ... utime(11) stime(12)
            total += sum(int(n) for n in fields[11:15])  # utime stime cutime cstime
    return total / ticks


@contextlib.contextmanager
def gunicorn_serving(database: dict, media_root, extra_env: dict | None = None):
    """The app under gunicorn with the production server settings (or `extra_env`'s), on the test database; yields
    (host, port, the server's process group)."""
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = (
        f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:{database['PORT'] or 5432}/{database['NAME']}"
    )
    if database.get("PASSWORD"):
        url = url.replace("@", f":{database['PASSWORD']}@", 1)
    root = Path(__file__).resolve().parents[2]
    cache_url = os.environ.get("REFIG_BENCH_REDIS_CACHE_URL", "redis://127.0.0.1:6379/12")
    import redis

    if cache_url:
        redis.Redis.from_url(cache_url).flushdb()  # nothing cached by an earlier run (its ids are reused by this one)
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_DEBUG": "0",
        "WEB_BIND": f"127.0.0.1:{port}",
        "WEB_ACCESS_LOG": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_MEDIA_ROOT": str(media_root),
        # as docker/compose.yml deploys it: the cache (and so the sessions) in Redis, a database of its own here
        **({"REDIS_CACHE_URL": cache_url} if cache_url else {}),
        **(extra_env or {}),
    }
    # REFIG_SERVER_LOG=<file> keeps the server's log (errors, deadlocks) for a look after the run.
    log = open(os.environ["REFIG_SERVER_LOG"], "ab") if os.environ.get("REFIG_SERVER_LOG") else subprocess.PIPE
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(root / "config" / "gunicorn.py"), "config.wsgi:application"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    said = server.stderr.read().decode()[-2000:] if server.stderr else f"see {log.name}"
                    raise RuntimeError(f"gunicorn did not start: {said}") from None
                time.sleep(0.2)
        yield "127.0.0.1", port, server.pid
    finally:
        # The whole process group: workers must not outlive the master holding connections to the test database.
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)
        if log is not subprocess.PIPE:
            log.close()


def database_cpu_seconds(database_name: str) -> dict[int, float]:
    """User + system CPU time of each PostgreSQL backend serving `database_name` on this machine, by process id (from
    /proc: a backend's title names its database)."""
    ticks = os.sysconf("SC_CLK_TCK")
    found = {}
    for process in Path("/proc").glob("[0-9]*"):
        try:
            title = (process / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if not title.startswith("postgres:") or f" {database_name} " not in title:
                continue
            fields = (process / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(process.name)] = (int(fields[11]) + int(fields[12])) / ticks
    return found


def _p(values, q):
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _report(name: str, result: dict) -> None:
    timings, completed = result["timings"], max(len(result["timings"]["submit"]), 1)
    requests = sum(len(v) for v in timings.values())
    print(f"{name}: {requests} requests in {result['wall_s']:.1f} s ({requests / result['wall_s']:.0f} req/s)")
    print(
        f"  CPU per completed item (next + 3 images + submit, and the two probes): web processes "
        f"{1000 * result['cpu_web'] / completed:.1f} ms, database backends {1000 * result['cpu_db'] / completed:.1f} ms"
    )
    for kind, values in timings.items():
        if len(values) > 1:
            print(
                f"  {kind:8s} n={len(values)} p50={_p(values, 50):.1f} ms p95={_p(values, 95):.1f} ms max={max(values):.1f} ms"
            )


def test_two_hundred_annotators_at_a_realistic_pace(transactional_db):
    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation.models import Comparison
    from tests.annotation.data import PASSWORD, annotator

    if connection.vendor != "postgresql":
        pytest.skip("the benchmark runs on PostgreSQL: set DATABASE_URL")
    study = paper_scale()
    users = [annotator(f"bench-{i}") for i in range(ANNOTATORS + 1)]
    study.annotators.add(*users)
    cookies = []
    for u in users:
        client = Client()
        assert client.login(username=u.username, password=PASSWORD)
        cookies.append(f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    dwells = demo_dwell_ms()

    database = connection.settings_dict["NAME"]

    def run_load(server, cookies, **job):
        """The load's timings, with the CPU time the web processes and the database's backends spent meanwhile."""
        host, port, pid = server
        job = json.dumps({"host": host, "port": port, "cookies": cookies, **job})
        web, backends = group_cpu_seconds(pid), database_cpu_seconds(database)
        done = subprocess.run(
            [sys.executable, __file__], input=job, capture_output=True, text=True, timeout=1200, env=env
        )
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout)
        result["cpu_web"] = group_cpu_seconds(pid) - web
        result["cpu_db"] = sum(s - backends.get(p, 0.0) for p, s in database_cpu_seconds(database).items())
        return result

    # No worker recycled mid-run: it would take its database connection's CPU time with it.
    with gunicorn_serving(connection.settings_dict, settings.MEDIA_ROOT, {"WEB_MAX_REQUESTS": "0"}) as server:
        paced = run_load(server, cookies[:ANNOTATORS], dwell_ms=dwells, scale=THINK_SCALE, seconds=LOAD_SECONDS)
        saturated = run_load(server, cookies[:SATURATED_ANNOTATORS], rounds=SATURATED_ROUNDS)
        # One annotator alone on the same server: the requests' own service time and CPU, without queueing.
        alone = run_load(server, cookies[ANNOTATORS:], rounds=ALONE_ROUNDS)
    for result in (paced, saturated, alone):
        assert not result["errors"], result["errors"][:5]

    timings, completed = paced["timings"], len(paced["timings"]["submit"])
    mean_think = statistics.mean(dwells) / 1000 / THINK_SCALE
    print(
        f"\n{ANNOTATORS} annotators, think times = the demo's dwell times / {THINK_SCALE} (mean {mean_think:.1f} s), "
        f"{LOAD_SECONDS} s: {completed} items completed ({completed / paced['wall_s']:.1f} items/s; the pace of "
        f"{ANNOTATORS * THINK_SCALE} annotators at the demo's dwell times)"
    )
    _report("realistic pace", paced)
    ratios = {name: _p(timings[name], 95) / _p(timings["healthz"], 95) for name in ("next", "submit", "auth")}
    print(
        "p95 ratio to /healthz: "
        + " ".join(f"{name}={ratio:.2f}" for name, ratio in ratios.items())
        + f" (target {TARGET_RATIO}x)"
    )
    _report(
        f"information only, closed loop: {SATURATED_ANNOTATORS} annotators x {SATURATED_ROUNDS} items, no think time",
        saturated,
    )
    _report(f"information only, one annotator alone, {ALONE_ROUNDS} items", alone)
    votes = 4270 + completed + SATURATED_ANNOTATORS * SATURATED_ROUNDS + ALONE_ROUNDS
    assert Comparison.objects.filter(study=study).count() == votes

    # bounded SQL per request, measured in-process on a second item: the first may carry the study's recheck of its
    # artifacts (once per POOL_ARTIFACTS_RECHECK, whichever request comes first), counted apart
    client = Client()
    client.force_login(users[0])
    client.get("/api/annotate/summary/")
    with CaptureQueriesContext(connection) as first_queries:
        token = client.post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
    client.post(
        "/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 4000}, content_type="application/json"
    )
    with CaptureQueriesContext(connection) as next_queries:
        token = client.post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
    with CaptureQueriesContext(connection) as submit_queries:
        client.post(
            "/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 4000}, content_type="application/json"
        )
    print(f"queries: next={len(next_queries)} submit={len(submit_queries)} (first next: {len(first_queries)})")
    assert len(next_queries) <= MAX_QUERIES and len(submit_queries) <= MAX_QUERIES
    for name in ("next", "submit"):
        assert ratios[name] <= TARGET_RATIO, f"{name} p95 is {ratios[name]:.2f}x /healthz p95 (target {TARGET_RATIO}x)"
