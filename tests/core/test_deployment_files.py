"""docker/compose.yml and docker/Dockerfile read as data. No Docker engine runs on these machines, so this is what can
be checked without one: each role scales on its own, every queue has a consumer, and the app processes share nothing
but the database, the broker and the object store (tests/faults/test_workers_on_other_hosts.py runs that arrangement
as processes)."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.conf import settings

DOCKER = Path(__file__).resolve().parents[2] / "docker"
COMPOSE = yaml.safe_load((DOCKER / "compose.yml").read_text())  # resolves the file's `<<:` merge keys
SERVICES = COMPOSE["services"]
APP_ROLES = ("migrate", "web", "render", "judge", "worker", "beat")
SCALED_ROLES = ("web", "render", "judge", "worker")
SHARED = ("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_CACHE_URL", "REFIG_MEDIA_STORAGE", "REFIG_S3_BUCKET")


def queues(role: str) -> set[str]:
    return set(SERVICES[role]["environment"]["QUEUES"].split(","))


def test_scaled_roles_have_no_fixed_name_and_no_folder_of_their_own():
    for role in SCALED_ROLES:
        assert "container_name" not in SERVICES[role], role  # a fixed name forbids --scale
        assert not SERVICES[role].get("volumes"), role  # media live in the object store, not a shared folder
    assert SERVICES["web"]["ports"] == ["8000-8009:8000"]  # one host port per replica, up to 10


def test_every_app_process_reaches_the_same_database_broker_and_object_store():
    environments = [SERVICES[role]["environment"] for role in APP_ROLES]
    for name in SHARED:
        assert len({env[name] for env in environments}) == 1, name
    assert environments[0]["REFIG_MEDIA_STORAGE"] == "s3"
    assert len({env["REFIG_PSEUDONYM_KEY"] for env in environments}) == 1  # annotators named alike everywhere


def test_render_and_judge_each_have_their_own_service_and_every_queue_a_consumer():
    assert queues("render") == {"render"} and queues("judge") == {"judge"}
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()} | {settings.CELERY_TASK_DEFAULT_QUEUE}
    assert routed <= queues("render") | queues("judge") | queues("worker")
    assert "beat" in SERVICES["beat"]["command"]


def test_the_image_holds_every_app_and_the_start_scripts():
    dockerfile = (DOCKER / "Dockerfile").read_text()
    copied = set(re.findall(r"^COPY (\w+) \1$", dockerfile, flags=re.MULTILINE))
    local_apps = {app for app in settings.INSTALLED_APPS if (DOCKER.parent / app / "apps.py").exists()}
    assert local_apps and local_apps | {"config", "templates"} <= copied
    for script in ("start-web.sh", "start-worker.sh"):
        assert os.access(DOCKER / script, os.X_OK), script
        assert script in dockerfile
    assert "QUEUES" in (DOCKER / "start-worker.sh").read_text()


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="needs docker-compose (.ci/run installs it)")
def test_docker_compose_accepts_the_file_and_refuses_it_without_the_secrets():
    """Docker Compose's own validation (its schema, merge keys, interpolation), without an engine."""
    command = ["docker-compose", "-f", str(DOCKER / "compose.yml"), "config", "-q"]
    base = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    secrets = {"DJANGO_SECRET_KEY": "s", "REFIG_PSEUDONYM_KEY": "p"}
    accepted = subprocess.run(command, env=base | secrets, capture_output=True, text=True, timeout=60)
    assert accepted.returncode == 0, accepted.stderr
    refused = subprocess.run(command, env=base, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "set DJANGO_SECRET_KEY" in refused.stderr
