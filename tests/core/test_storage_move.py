"""`manage.py move_media`: an installation's media folder copied into the object store (moto's standalone server:
tests/object_store.py) under the same names, each copy read back and verified by SHA-256; damaged files and partial
writes stay behind, said; a run killed part-way is resumed by running it again, moving only what was left."""

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.core.management.base import CommandError

from core.media_move import LEDGER_NAME
from tests.celery_worker import ROOT, database_url_for_worker
from tests.object_store import bucket_create, object_store_env, s3_server, use_object_store


@pytest.fixture(scope="module")
def s3_endpoint():
    with s3_server() as endpoint:
        yield endpoint


def _addressed(folder, prefix: str, data: bytes, extension: str = ".png") -> str:
    sha = hashlib.sha256(data).hexdigest()
    name = f"{prefix}/{sha[:2]}/{sha}{extension}"
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    return name


def _move(*argv) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("move_media", *map(str, argv), "--no-progress", stdout=out, stderr=err)
    except CommandError as error:
        return out.getvalue(), err.getvalue() + f"\nCommandError: {error}"
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_media_move_into_the_store_verified_and_the_app_reads_them_there(settings, monkeypatch, tmp_path, s3_endpoint):
    from annotation.selectors.images import source_png
    from tests.factories import figure_create

    source = tmp_path / "media"
    settings.MEDIA_ROOT = source
    figure = figure_create("t0")  # stored on the filesystem, as an installation before the move
    source_png(figure)  # its clean copy made on first use (named after the figure, not its own bytes)
    deck = _addressed(source, "artifacts", b"PK\x03\x04 a deck")
    damaged = _addressed(source, "renders", b"a whole rendering")
    (source / damaged).write_bytes(b"a whole rend")  # cut short by a crash long ago: no longer its name's bytes
    (source / "renders" / "ab").mkdir(parents=True)
    (source / "renders" / "ab" / ".0123abcd.partial").write_bytes(b"half")  # an interrupted write's leftover
    files = {p.relative_to(source).as_posix(): p.read_bytes() for p in source.rglob("*") if p.is_file()}

    use_object_store(settings, monkeypatch, s3_endpoint, bucket_create(s3_endpoint))
    out, err = _move("--from", source)
    assert "5 files: 3 moved, 0 already in the store, 1 skipped" in out and "1 damaged, 0 failed" in out
    assert f"damaged (bytes do not match the name; not moved): {damaged}" in err and "CommandError" in err
    assert "the database names 1 files: all in the store" in out
    moved = {name: data for name, data in files.items() if name != damaged and ".partial" not in name}
    assert {name: default_storage.open(name).read() for name in moved} == moved and deck in moved
    assert not default_storage.exists(damaged) and not default_storage.exists("renders/ab/.0123abcd.partial")
    # The folder is left as it was; the app now reads the figure from the store.
    assert {p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()} == set(files) | {LEDGER_NAME}
    assert source_png(figure) == default_storage.open(f"corpus/clean/{figure.sha256[:2]}/{figure.sha256}.png").read()

    # Repaired and run again: only the repaired file moves; a copy changed in the store meanwhile is not trusted.
    (source / damaged).write_bytes(b"a whole rendering")
    out, err = _move("--from", source)
    assert "5 files: 1 moved, 3 already in the store, 1 skipped" in out and "0 damaged, 0 failed" in out, err
    assert default_storage.open(damaged).read() == b"a whole rendering"


@pytest.mark.django_db
def test_a_store_copy_with_other_bytes_is_replaced_and_the_folder_itself_is_refused(
    settings, monkeypatch, tmp_path, s3_endpoint
):
    source = settings.MEDIA_ROOT = tmp_path / "media"
    name = _addressed(source, "artifacts", b"the deck")
    out, err = _move("--from", source)
    assert "is the media storage itself" in err  # the filesystem storage at that folder: nothing to move into
    use_object_store(settings, monkeypatch, s3_endpoint, bucket_create(s3_endpoint))
    from django.core.files.base import ContentFile

    default_storage.save(name, ContentFile(b"the de"))  # a damaged copy written by an earlier tool
    out, err = _move("--from", source)
    assert "1 moved" in out and not err
    assert default_storage.open(name).read() == b"the deck"


@pytest.mark.django_db(transaction=True)
def test_a_move_killed_part_way_is_resumed_and_moves_only_what_was_left(settings, monkeypatch, tmp_path, s3_endpoint):
    source = tmp_path / "media"
    names = [_addressed(source, "renders", f"rendering {i}".encode() * 50) for i in range(40)]
    bucket = bucket_create(s3_endpoint)
    ledger = source / LEDGER_NAME
    env = {
        **os.environ,
        **object_store_env(s3_endpoint, bucket),
        "DATABASE_URL": database_url_for_worker(),
        "REFIG_VAR_DIR": str(tmp_path / "var"),
    }
    mover = subprocess.Popen(
        [sys.executable, "manage.py", "move_media", "--from", str(source), "--jobs", "1", "--no-progress"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not ledger.exists() or len(ledger.read_text().splitlines()) < 5:
        assert mover.poll() is None and time.monotonic() < deadline, mover.stderr.read().decode()[-2000:]
        time.sleep(0.02)
    os.killpg(mover.pid, signal.SIGKILL)
    mover.wait(10)
    recorded = len(ledger.read_text().splitlines())
    assert recorded < len(names), "the kill came too late to be part-way"

    use_object_store(settings, monkeypatch, s3_endpoint, bucket)
    out, err = _move("--from", source)
    moved = int(out.split(" moved")[0].split(": ")[-1])
    already = int(out.split(" already")[0].split(", ")[-1])
    print(f"\nmove_media killed after {recorded} verified files of {len(names)}; the resume moved {moved}")
    assert not err and already >= recorded and moved + already == len(names)
    assert moved <= len(names) - recorded  # nothing recorded was moved twice
    assert all(default_storage.open(n).read() == (source / n).read_bytes() for n in names)
    entries = [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()]
    assert {e["name"] for e in entries} == set(names)
