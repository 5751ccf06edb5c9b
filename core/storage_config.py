"""settings.STORAGES["default"] from the environment (config/settings.py): the local filesystem by default, or with
REFIG_MEDIA_STORAGE=s3 any S3-compatible object store (AWS, MinIO, Ceph, R2...), which web servers and workers on
several hosts share. Credentials are boto3's own (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or the host's role)."""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

FILESYSTEM = {"BACKEND": "core.storage.AtomicFileSystemStorage"}


def media_storage_from_env(environ: Mapping[str, str]) -> dict:
    kind = environ.get("REFIG_MEDIA_STORAGE", "filesystem").strip().lower()
    if kind == "filesystem":
        return dict(FILESYSTEM)
    if kind != "s3":
        raise ImproperlyConfigured(f"REFIG_MEDIA_STORAGE must be 'filesystem' or 's3', not {kind!r}.")
    if not environ.get("REFIG_S3_BUCKET"):
        raise ImproperlyConfigured("REFIG_MEDIA_STORAGE=s3 needs REFIG_S3_BUCKET (the bucket that holds the media).")
    return {
        "BACKEND": "core.object_storage.ObjectStorage",
        "OPTIONS": {
            "bucket_name": environ["REFIG_S3_BUCKET"],
            "endpoint_url": environ.get("REFIG_S3_ENDPOINT_URL") or None,  # unset: AWS itself
            "region_name": environ.get("REFIG_S3_REGION") or None,
            "location": environ.get("REFIG_S3_PREFIX", "").strip("/"),  # a folder of the bucket, if it is shared
            "addressing_style": environ.get("REFIG_S3_ADDRESSING_STYLE") or None,  # "path" for most self-hosted ones
            "default_acl": None,  # objects stay private: the app serves them
            # As on the filesystem, a name already taken gets another (every name the app writes is content-addressed).
            "file_overwrite": False,
            # An object being read is held in memory up to this size, beyond it in a temporary file (a large deck).
            "max_memory_size": 16 * 1024 * 1024,
        },
    }
