"""Web server, render worker and judge worker on "other hosts": three processes that share nothing but the database,
the broker and the object store — each has its own MEDIA_ROOT, var folder and TMPDIR, and the media live in an S3
bucket (moto's standalone server, real S3 over HTTP: tests/object_store.py). A small study (docs/example-study: two
figures, two configurations, four decks) is imported into the bucket by this process (the coordinator's host), audited
and rendered by the render worker, judged by the judge worker against the stand-in judge server, and its images served
to an annotator by the web server — every byte read back from the bucket, the page naming no other host.

Real services: Redis (CELERY_BROKER_URL; the workers here use database 12), Celery workers, gunicorn, LibreOffice."""

import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from dataclasses import asdict
from pathlib import Path

import kombu
import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.test import Client

import tests.celery_worker
from agents.models import Artifact
from agents.tasks import audit_and_render
from annotation.models import Lease
from corpus.services import clean_image_name
from scoring import services as scoring_services
from scoring.judge_client import JudgeSettings
from scoring.models import JudgeRecord
from scoring.tasks import judge_artifact
from tests.celery_worker import ROOT, broker_reachable, celery_worker, database_url_for_worker, send_over_broker
from tests.object_store import bucket_create, object_store_env, s3_server, use_object_store
from tests.scoring.judge_server import JudgeServer, reply_body
from tests.scoring.test_scoring_integration import reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.libreoffice]

BROKER_URL = "redis://127.0.0.1:6379/12"
EXAMPLE = ROOT / "docs" / "example-study"
CSRF = "c" * 32  # any well-formed token works when cookie and header agree
RUBRIC = "refig-v1"
BOUND_SECONDS = 120  # every stage together, on a shared 2-core machine


def _host(tmp_path: Path, name: str, store: dict) -> dict:
    """The environment of one "host": its own folders, the shared database, broker and object store."""
    own = tmp_path / name
    (own / "tmp").mkdir(parents=True)
    return {
        **store,
        "REFIG_VAR_DIR": str(own / "var"),
        "DJANGO_MEDIA_ROOT": str(own / "media"),
        "TMPDIR": str(own / "tmp"),
        "CELERY_BROKER_URL": BROKER_URL,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "DATABASE_URL": database_url_for_worker(),
    }


@contextlib.contextmanager
def _web(env: dict):
    """gunicorn (config/gunicorn.py, one process) on a free port; yields (port, a call that waits until it answers),
    so that it starts while the test does other work."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "config" / "gunicorn.py"), "config.wsgi:application"],
        cwd=ROOT,
        env={**os.environ, **env, "WEB_BIND": f"127.0.0.1:{port}", "WEB_WORKERS": "1", "WEB_ACCESS_LOG": ""},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )

    def ready(deadline: float) -> None:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    return
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr.read().decode()[-3000:]
                time.sleep(0.2)

    try:
        yield port, ready
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def _purge(*queues: str) -> None:
    """Start from empty queues, so a leftover message from an earlier run cannot interfere."""
    with kombu.Connection(BROKER_URL, connect_timeout=2) as connection:
        channel = connection.channel()
        for queue in queues:
            channel.queue_purge(queue)


def _get(port: int, path: str, cookie: str, body: dict | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Cookie": f"{cookie}; csrftoken={CSRF}", "X-CSRFToken": CSRF, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, dict(answer.headers), answer.read()


def _drain(process, sink: list[bytes]) -> None:
    """Read a worker's output as it comes, so a full pipe never blocks it (and the log is there on failure)."""
    threading.Thread(target=lambda: sink.extend(iter(process.stdout.readline, b"")), daemon=True).start()


def _wait(condition, what: str, deadline: float, log: list[bytes]) -> None:
    while not condition():
        assert time.monotonic() < deadline, f"{what} not done in time:\n" + b"".join(log).decode()[-4000:]
        time.sleep(0.25)


def test_a_study_is_imported_rendered_judged_and_served_by_processes_sharing_only_database_broker_and_store(
    tmp_path, settings, monkeypatch
):
    from annotation import services as annotation_services
    from tests.annotation.data import annotator, coordinator

    if shutil.which(settings.REFIG["SOFFICE_BINARY"]) is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    if not broker_reachable(BROKER_URL):
        (pytest.fail if os.environ.get("REFIG_REQUIRE_SERVICES") else pytest.skip)(
            f"broker {BROKER_URL} is not reachable"
        )
    started = time.monotonic()
    deadline = started + BOUND_SECONDS
    with s3_server() as endpoint, JudgeServer() as judge:
        store = object_store_env(endpoint, bucket_create(endpoint))
        use_object_store(settings, monkeypatch, endpoint, store["REFIG_S3_BUCKET"])
        hosts = {name: _host(tmp_path, name, store) for name in ("render", "judge", "web")}
        hosts["judge"]["JUDGE_KEY"] = "sk-local-test"
        log: list[bytes] = []
        # celery_worker sets the database, broker and media folder itself: the rest of each host's environment here.
        monkeypatch.setattr(tests.celery_worker, "BROKER_URL", BROKER_URL)
        _purge("render", "judge")
        own = {"DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "DJANGO_MEDIA_ROOT"}

        def worker(queue: str):
            env = hosts[queue]
            extra = {k: v for k, v in env.items() if k not in own}
            return celery_worker(queues=queue, media_root=Path(env["DJANGO_MEDIA_ROOT"]), extra_env=extra, purge=False)

        with worker("render") as render, worker("judge") as judging, _web(hosts["web"]) as (port, web_ready):
            _drain(render, log)
            _drain(judging, log)
            # The coordinator's host (this process): corpus and decks go into the bucket, then the render queue.
            quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
            call_command(
                "import_corpus", "--manifest", EXAMPLE / "manifest.jsonl", "--images", EXAMPLE / "images", **quiet
            )
            runs = ("--run-root", EXAMPLE / "runs", "--configurations", EXAMPLE / "configurations.toml")
            call_command("import_artifacts", *runs, **quiet)
            ids = list(Artifact.objects.order_by("pk").values_list("pk", flat=True))
            assert len(ids) == 4 and all(default_storage.exists(a.pptx.name) for a in Artifact.objects.all())
            send_over_broker(audit_and_render, ids, broker_url=BROKER_URL)  # as `audit_artifacts --enqueue` does
            _wait(lambda: not Artifact.objects.filter(render_ok__isnull=True).exists(), "rendering", deadline, log)
            rendered = list(Artifact.objects.filter(gate_passed=True).order_by("pk"))
            assert len(rendered) == 4 and all(default_storage.exists(a.render_png.name) for a in rendered)
            rendered_at = time.monotonic()

            # As `judge --enqueue` does: one task per artifact to the judge queue.
            for _ in rendered:
                judge.push(200, reply_body("chat", json.dumps(reply(18, 25, 12, 20, 8))))
            judge_settings = JudgeSettings(
                protocol="chat", base_url=judge.base_url, model="qwen-judge", api_key_env="JUDGE_KEY"
            )
            judge_run = scoring_services.judge_run_ensure(
                judge="qwen-judge", family="qwen", run=1, rubric_version=RUBRIC
            )
            for artifact in scoring_services.artifacts_to_judge(judge_run=judge_run, configuration=None, limit=None):
                send_over_broker(
                    judge_artifact, artifact.pk, judge_run.pk, asdict(judge_settings), RUBRIC, broker_url=BROKER_URL
                )
            _wait(lambda: JudgeRecord.objects.filter(status="ok").count() == 4, "judging", deadline, log)
            judged_at = time.monotonic()
            assert len(judge.requests) == 4

            study = annotation_services.study_create(
                name="mine", configurations=["mine-high", "mine-low"], min_dwell_ms=0
            )
            user = annotator("ann-remote")
            study.annotators.add(user)
            client = Client()
            client.force_login(user)
            cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
            web_ready(deadline)
            page_status, headers, page = _get(port, "/annotate/mine/", cookie)
            status, _, body = _get(port, "/api/annotate/next/", cookie, body={})
            item = json.loads(body)
            assert status == 200 and item["state"] == "item", item
            token = item["item"]["token"]
            served = {side: _get(port, f"/annotate/img/{token}/{side}", cookie) for side in ("source", "a", "b")}
            served_at = time.monotonic()
            # The study's release, built by the web server on first download, is stored in the bucket too.
            client.force_login(coordinator("coord-remote"))
            cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
            release_status, _, release = _get(port, "/results/release/mine.zip", cookie)
            assert release_status == 200 and release == default_storage.open("releases/mine/mine-release-1.zip").read()
            with zipfile.ZipFile(io.BytesIO(release)) as archive:
                assert len([n for n in archive.namelist() if n.startswith("mine-release-1/renderings/")]) >= 4
        renders = {default_storage.open(a.render_png.name).read() for a in rendered}
        figure = Lease.objects.get(token=token).item.figure
        source = default_storage.open(clean_image_name(figure.sha256)).read()

    # Every image came from the bucket, through the web server: the slides are the render worker's renderings, the
    # source is the corpus import's clean copy. The page and its policy name no other host.
    assert {served["a"][2], served["b"][2]} <= renders and served["a"][2] != served["b"][2]
    assert served["source"][2] == source
    assert all(served[side][0] == 200 and served[side][1]["Content-Type"] == "image/png" for side in served)
    endpoint_host = endpoint.split("//")[1]
    assert page_status == 200 and endpoint_host.encode() not in page and b"X-Amz" not in page
    assert endpoint_host not in headers.get("Content-Security-Policy", "")
    for host in ("render", "judge", "web"):  # nothing written to any host's media folder
        media = tmp_path / host / "media"
        assert not media.exists() or not any(p.is_file() for p in media.rglob("*")), host
    scores = set(JudgeRecord.objects.values_list("score", flat=True))
    print(
        f"\nother hosts: rendered 4 decks {rendered_at - started:.1f} s after the start, judged"
        f" {judged_at - rendered_at:.1f} s later, served {served_at - judged_at:.1f} s later; total"
        f" {served_at - started:.1f} s"
    )
    assert scores == {83.0}
