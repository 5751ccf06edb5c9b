"""Production settings refuse unsafe configurations and pass `check --deploy`."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SECRET = "p" * 30 + "-not-a-real-secret-but-long-enough-0123456789"


def run_manage(*args, **env):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "CELERY_"))}
    base.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120
    )


PRODUCTION = dict(
    DJANGO_ENV="production",
    DJANGO_SECRET_KEY=SECRET,
    DJANGO_ALLOWED_HOSTS="refig.example.org",
    DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres",
    CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
)


def test_check_deploy_passes_with_no_warnings():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_missing_secret_sqlite_and_eager():
    cases = [
        ({"DJANGO_SECRET_KEY": ""}, "DJANGO_SECRET_KEY"),
        ({"DATABASE_URL": "sqlite:////tmp/x.sqlite3"}, "SQLite and others are refused"),
        ({"DATABASE_URL": ""}, "DATABASE_URL must point at PostgreSQL"),
        ({"CELERY_BROKER_URL": ""}, "CELERY_BROKER_URL must point at Redis"),
        ({"CELERY_TASK_ALWAYS_EAGER": "1"}, "CELERY_TASK_ALWAYS_EAGER is refused"),
    ]
    for override, message in cases:
        result = run_manage("check", **(PRODUCTION | override))
        assert result.returncode != 0, override
        assert message in result.stderr, (override, result.stderr[-500:])


def test_embedded_default_needs_no_variables(tmp_path):
    result = run_manage("check", REFIG_VAR_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_runserver_serves_static_files_with_debug_off(tmp_path):
    """`make run`'s runserver, DEBUG off by default: whitenoise serves the project's and the admin's static files, and
    an unknown address gets the plain 404, not the debug page listing every URL pattern."""
    import time
    import urllib.error
    import urllib.request

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "CELERY_"))}
    env["REFIG_VAR_DIR"] = str(tmp_path)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def get(path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status, body = get("/healthz")
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "runserver did not start"
                time.sleep(0.3)
        assert (status, body) == (200, b"ok")
        for path, expected in (("/static/refig.css", b"{"), ("/static/admin/css/base.css", b"{")):
            status, body = get(path)
            assert status == 200 and expected in body, (path, status)
        status, body = get("/no-such-page/")
        assert status == 404 and b"URLconf" not in body and b"DEBUG" not in body
    finally:
        server.terminate()
        server.wait(timeout=30)
