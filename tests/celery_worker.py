"""A real Celery worker in a subprocess, over the real broker, against the test database."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def _broker_url_for_this_process() -> str:
    """The broker the real workers of this test process use. Under pytest-xdist each test process takes its own Redis
    database (gw0 the given one, gw1 the one below, …): a purge or a worker in one must never eat another's messages."""
    url = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    base, _, database = url.rpartition("/")
    if not url.startswith("redis") or not database.isdigit():
        return url  # RabbitMQ or a Redis URL without a database: queues are shared, as before
    return f"{base}/{int(database) - int(worker.removeprefix('gw'))}"


BROKER_URL = _broker_url_for_this_process()


def broker_reachable(url: str) -> bool:
    import kombu

    try:
        with kombu.Connection(url, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1)
        return True
    except Exception:
        return False


def database_url_for_worker() -> str:
    db = settings.DATABASES["default"]
    if connection.vendor == "sqlite":
        # The test database is a file (config.settings), which a worker process opens like the tests do.
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


@contextlib.contextmanager
def celery_worker(
    *, queues: str, media_root: Path, extra_env: dict | None = None, args: tuple[str, ...] = (), purge: bool = True
):
    if not broker_reachable(BROKER_URL):
        if os.environ.get("REFIG_REQUIRE_SERVICES"):
            pytest.fail(f"broker {BROKER_URL} is not reachable")
        pytest.skip(f"broker {BROKER_URL} is not reachable")
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url_for_worker(),
        CELERY_BROKER_URL=BROKER_URL,
        CELERY_TASK_ALWAYS_EAGER="0",
        DJANGO_MEDIA_ROOT=str(media_root),
        DJANGO_SETTINGS_MODULE="config.settings",
        **(extra_env or {}),
    )
    if purge:  # start from an empty queue so a leftover message from an earlier run cannot interfere
        subprocess.run(
            [sys.executable, "-m", "celery", "-A", "config", "purge", "-f", "-Q", queues],
            env=env,
            cwd=ROOT,
            capture_output=True,
            timeout=60,
        )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            queues,
            "--pool",
            "solo",
            "--concurrency",
            "1",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            *args,
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield worker
    finally:
        with contextlib.suppress(ProcessLookupError):  # a fault test may have killed it already
            os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)


def send_over_broker(task, *args, broker_url: str = BROKER_URL) -> None:
    """Put `task` on the broker even when the suite runs eager (CELERY_TASK_ALWAYS_EAGER=1): `apply_async` would then
    run it in this process, and the worker under test would never see it."""
    import warnings

    from celery.exceptions import AlwaysEagerIgnored

    from config.celery_app import app

    with app.connection_for_write(broker_url) as conn, warnings.catch_warnings():
        warnings.simplefilter("ignore", AlwaysEagerIgnored)
        app.send_task(task.name, args=args, connection=conn)


def send_and_wait(task, *args, broker_url: str = BROKER_URL, timeout: float = 90, done=None):
    """Send `task` over the broker (not eager) and poll `done()` until it is true."""
    send_over_broker(task, *args, broker_url=broker_url)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.25)
    return False
