"""core.storage: a file appears under its name only when whole; two writers of one content-addressed name leave one
file under it and nothing else. The behaviour tests run on both media storages: the local filesystem and an
S3-compatible object store (moto's standalone server, real S3 over HTTP, started by the tests: tests/object_store.py)."""

import os

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage

from core.object_storage import ObjectStorage
from core.storage import AtomicFileSystemStorage, local_copy, save_content_addressed
from core.storage_config import media_storage_from_env
from tests.object_store import bucket_create, object_store_env, s3_server, use_object_store


@pytest.fixture(scope="session")
def s3_endpoint():
    with s3_server() as endpoint:
        yield endpoint


@pytest.fixture(params=["filesystem", "s3"])
def backend(request, settings, monkeypatch, tmp_path):
    """The media storage under test; the filesystem's root is tmp_path, the object store's a fresh bucket."""
    settings.MEDIA_ROOT = tmp_path
    if request.param == "s3":
        use_object_store(
            settings,
            monkeypatch,
            request.getfixturevalue("s3_endpoint"),
            bucket_create(request.getfixturevalue("s3_endpoint")),
        )
    return request.param


class _Watched(ContentFile):
    """Bytes handed to the storage in pieces; after the first piece, what a reader would find under the name is noted
    each time the storage asks for more (the filesystem reads chunks(), boto3 read())."""

    def __init__(self, name, halves):
        super().__init__(b"".join(halves))
        self.watched, self.halves, self.seen, self.started = name, halves, [], False

    def _look(self):
        found = default_storage.exists(self.watched)
        self.seen.append(default_storage.open(self.watched).read() if found else None)

    def chunks(self, chunk_size=None):
        yield self.halves[0]
        self._look()
        yield self.halves[1]

    def read(self, *args):
        if self.started:
            self._look()
        data = super().read(*args)
        self.started = self.started or bool(data)
        return data


def test_a_file_is_found_under_its_name_only_once_every_byte_is_written(backend):
    name = "renders/ab/abc.png"
    content = _Watched(name, [b"first half ", b"second half"])
    assert default_storage.save(name, content) == name
    # The plain FileSystemStorage shows the file here, empty (b""): a reader would be served a truncated image.
    assert content.seen[0] is None and set(content.seen) <= {None, b"first half second half"}
    with default_storage.open(name) as handle:
        assert handle.read() == b"first half second half"
    assert default_storage.listdir("renders/ab") == ([], ["abc.png"])  # no partial file left behind


def test_a_name_already_taken_gets_another(backend):
    name = "corpus/a.png"
    first = default_storage.save(name, ContentFile(b"one"))
    second = default_storage.save(name, ContentFile(b"two"))
    assert first == name and second != name and second.startswith("corpus/a_")
    assert [default_storage.open(n).read() for n in (first, second)] == [b"one", b"two"]
    assert sorted(default_storage.listdir("corpus")[1]) == sorted([os.path.basename(first), os.path.basename(second)])


def test_files_keep_the_plain_storages_permissions(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "atomic"
    plain = FileSystemStorage(location=tmp_path / "plain")
    plain.save("corpus/a.png", ContentFile(b"one"))
    saved = default_storage.save("corpus/a.png", ContentFile(b"one"))
    assert os.stat(default_storage.path(saved)).st_mode == os.stat(plain.path("corpus/a.png")).st_mode


def test_the_second_writer_of_a_name_leaves_the_first_copy_alone_and_no_stray_file(backend):
    save_content_addressed("corpus/clean/ab/abc.png", ContentFile(b"the bytes"))
    # A second request found the name free a moment ago, and writes the same bytes after the first.
    save_content_addressed("corpus/clean/ab/abc.png", ContentFile(b"the bytes"))
    assert default_storage.listdir("corpus/clean/ab") == ([], ["abc.png"])
    with default_storage.open("corpus/clean/ab/abc.png") as handle:
        assert handle.read() == b"the bytes"


@pytest.mark.django_db
def test_a_figure_image_made_on_first_use_by_two_requests_at_once_is_served_to_both(backend, monkeypatch):
    """The race the annotation benchmark met (a 500 on a source image): both requests saw no clean copy yet."""
    from corpus.services import clean_image_name, figure_clean_image
    from tests.factories import figure_create

    figure = figure_create("t0")
    name = clean_image_name(figure.sha256)
    assert figure_clean_image(figure=figure) == name
    # The second request looked before the first one's copy landed: it finds nothing until it saves its own.
    real_exists, real_save, saving = default_storage.exists, default_storage.save, []
    monkeypatch.setattr(default_storage, "exists", lambda n: real_exists(n) if saving else False)
    monkeypatch.setattr(
        default_storage, "save", lambda n, content, **kw: saving.append(n) or real_save(n, content, **kw)
    )
    assert figure_clean_image(figure=figure) == name
    monkeypatch.undo()
    assert saving == [name]
    directory, file_name = name.rsplit("/", 1)
    assert default_storage.listdir(directory)[1] == [file_name]


def test_a_storage_configured_to_overwrite_replaces_the_file_whole(backend, tmp_path, settings):
    if backend == "s3":
        storage = ObjectStorage(**{**settings.STORAGES["default"]["OPTIONS"], "file_overwrite": True})
    else:
        storage = AtomicFileSystemStorage(location=tmp_path, allow_overwrite=True)
    assert storage.save("a/report.csv", ContentFile(b"first")) == "a/report.csv"
    assert storage.save("a/report.csv", ContentFile(b"second, longer")) == "a/report.csv"
    assert storage.open("a/report.csv").read() == b"second, longer"
    assert storage.listdir("a") == ([], ["report.csv"])


def test_a_tool_that_reads_files_gets_a_local_path_on_either_storage(backend):
    name = default_storage.save("artifacts/ab/deck.pptx", ContentFile(b"PK\x03\x04 deck bytes"))
    with local_copy(name, ".pptx") as path:
        assert path.read_bytes() == b"PK\x03\x04 deck bytes" and path.suffix == ".pptx"
        local = path
    # The filesystem's file is the stored file itself; the object store's copy is gone once the tool is done.
    assert local.exists() == (backend == "filesystem")


def test_a_stored_files_url_is_the_apps_own_path_never_the_stores(backend):
    name = default_storage.save("renders/ab/abc.png", ContentFile(b"png"))
    assert default_storage.url(name) == "/media/renders/ab/abc.png"


def test_the_media_storage_comes_from_the_environment():
    assert media_storage_from_env({}) == {"BACKEND": "core.storage.AtomicFileSystemStorage"}
    s3 = media_storage_from_env(object_store_env("http://127.0.0.1:9", "media") | {"REFIG_S3_PREFIX": "/refig/"})
    assert s3["BACKEND"] == "core.object_storage.ObjectStorage"
    assert s3["OPTIONS"]["bucket_name"] == "media" and s3["OPTIONS"]["location"] == "refig"
    with pytest.raises(ImproperlyConfigured, match="REFIG_S3_BUCKET"):
        media_storage_from_env({"REFIG_MEDIA_STORAGE": "s3"})
    with pytest.raises(ImproperlyConfigured, match="'filesystem' or 's3'"):
        media_storage_from_env({"REFIG_MEDIA_STORAGE": "nfs"})
