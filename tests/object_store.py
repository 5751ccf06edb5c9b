"""A local S3-compatible server for the object-storage tests: moto's standalone server (real S3 over HTTP) on
127.0.0.1, a free port, in a thread of the test process; one bucket per test, so tests never see each other's objects.
Processes the tests start reach it through the environment `object_store_env` gives them."""

from __future__ import annotations

import contextlib
import itertools
import logging
import os

from moto.server import ThreadedMotoServer

REGION = "us-east-1"
# moto accepts any key; these are what every process (the test and the ones it starts) signs with.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "refig-test", "AWS_SECRET_ACCESS_KEY": "refig-test-secret"}
_buckets = itertools.count(1)


@contextlib.contextmanager
def s3_server():
    """Yields the server's endpoint URL (http://127.0.0.1:PORT)."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def bucket_create(endpoint: str) -> str:
    import boto3

    name = f"refig-{os.getpid()}-{next(_buckets)}"
    client = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, **_keys())
    client.create_bucket(Bucket=name)
    return name


def _keys() -> dict:
    return {
        "aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    }


def object_store_env(endpoint: str, bucket: str) -> dict[str, str]:
    """The environment that points a process's media at the bucket (config/settings.py reads it)."""
    return {
        "REFIG_MEDIA_STORAGE": "s3",
        "REFIG_S3_BUCKET": bucket,
        "REFIG_S3_ENDPOINT_URL": endpoint,
        "REFIG_S3_REGION": REGION,
        "REFIG_S3_ADDRESSING_STYLE": "path",
        **CREDENTIALS,
    }


def use_object_store(settings, monkeypatch, endpoint: str, bucket: str) -> None:
    """Point this test process's media at the bucket, as config/settings.py would from object_store_env."""
    from core.storage_config import media_storage_from_env

    env = object_store_env(endpoint, bucket)
    for name in CREDENTIALS:
        monkeypatch.setenv(name, env[name])
    settings.STORAGES = {**settings.STORAGES, "default": media_storage_from_env(env)}
