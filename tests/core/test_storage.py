"""core.storage: a file appears under its name only when whole; two writers of one content-addressed name leave one
file under it and nothing else."""

import os

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage

from core.storage import AtomicFileSystemStorage, save_content_addressed


class _Watched(ContentFile):
    """Bytes written in two chunks; between them, what a reader would find under the name is noted."""

    def __init__(self, name, halves):
        super().__init__(b"".join(halves))
        self.watched, self.halves, self.seen = name, halves, []

    def chunks(self, chunk_size=None):
        yield self.halves[0]
        found = default_storage.exists(self.watched)
        self.seen.append(default_storage.open(self.watched).read() if found else None)
        yield self.halves[1]


def test_a_file_is_found_under_its_name_only_once_every_byte_is_written(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    name = "renders/ab/abc.png"
    content = _Watched(name, [b"first half ", b"second half"])
    assert default_storage.save(name, content) == name
    # The plain FileSystemStorage shows the file here, empty (b""): a reader would be served a truncated image.
    assert content.seen == [None]
    with default_storage.open(name) as handle:
        assert handle.read() == b"first half second half"
    assert default_storage.listdir("renders/ab") == ([], ["abc.png"])  # no partial file left behind


def test_a_name_taken_while_writing_gets_another_and_files_keep_the_plain_storages_permissions(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "atomic"
    plain = FileSystemStorage(location=tmp_path / "plain")
    name = "corpus/a.png"
    first = default_storage.save(name, ContentFile(b"one"))
    second = default_storage.save(name, ContentFile(b"two"))
    assert first == name and second != name and second.startswith("corpus/a_")
    assert [default_storage.open(n).read() for n in (first, second)] == [b"one", b"two"]
    plain.save(name, ContentFile(b"one"))
    mode = os.stat(plain.path(name)).st_mode
    assert os.stat(default_storage.path(first)).st_mode == mode
    assert sorted(default_storage.listdir("corpus")[1]) == sorted([os.path.basename(first), os.path.basename(second)])


def test_the_second_writer_of_a_name_leaves_the_first_copy_alone_and_no_stray_file(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    save_content_addressed("corpus/clean/ab/abc.png", ContentFile(b"the bytes"))
    # A second request found the name free a moment ago, and writes the same bytes after the first.
    save_content_addressed("corpus/clean/ab/abc.png", ContentFile(b"the bytes"))
    assert default_storage.listdir("corpus/clean/ab") == ([], ["abc.png"])
    with default_storage.open("corpus/clean/ab/abc.png") as handle:
        assert handle.read() == b"the bytes"


@pytest.mark.django_db
def test_a_figure_image_made_on_first_use_by_two_requests_at_once_is_served_to_both(settings, tmp_path, monkeypatch):
    """The race the annotation benchmark met (a 500 on a source image): both requests saw no clean copy yet."""
    from corpus.services import clean_image_name, figure_clean_image
    from tests.factories import figure_create

    settings.MEDIA_ROOT = tmp_path
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


def test_a_storage_configured_to_overwrite_replaces_the_file_whole(tmp_path):
    storage = AtomicFileSystemStorage(location=tmp_path, allow_overwrite=True)
    assert storage.save("a/report.csv", ContentFile(b"first")) == "a/report.csv"
    assert storage.save("a/report.csv", ContentFile(b"second, longer")) == "a/report.csv"
    assert storage.open("a/report.csv").read() == b"second, longer"
    assert storage.listdir("a") == ([], ["report.csv"])
