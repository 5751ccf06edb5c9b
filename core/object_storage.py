"""Media on an S3-compatible object store (django-storages over boto3), for installations whose web servers and workers
run on several hosts (config/settings.py: REFIG_MEDIA_STORAGE=s3). A separate module so that the filesystem default
never imports boto3."""

from __future__ import annotations

from urllib.parse import urljoin

from django.conf import settings
from django.utils.encoding import filepath_to_uri
from storages.backends.s3 import S3Storage


class ObjectStorage(S3Storage):
    """S3Storage as the app uses its media. An object appears under its name only once whole (an S3 PUT is atomic),
    as AtomicFileSystemStorage's files do. `url()` is the app's own path, as the filesystem storage's is, never a
    presigned link to the store: every image a page shows is served through the app (blinding, the content security
    policy), so no page names the store's host or carries its signatures."""

    def url(self, name, parameters=None, expire=None, http_method=None):
        return urljoin(settings.MEDIA_URL, filepath_to_uri(name))
