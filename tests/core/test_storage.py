"""core.storage: two writers of one content-addressed name leave one file under it and nothing else."""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from core.storage import save_content_addressed


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
