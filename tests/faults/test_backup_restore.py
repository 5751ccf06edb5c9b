"""The backup and restore procedure of docs/operations.md, end to end once on PostgreSQL: pg_dump -Fc + a tar of
MEDIA_ROOT; pg_restore into an empty database + untar; then `manage.py export` of every table from the restored copy
equals the export from the original, and every stored file the database names is back."""

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from django.db import connection

from tests.annotation.data import SLUGS, annotator, build_corpus

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
TABLES = ("comparisons", "coverage", "elo", "artifact-audit", "corpus-fields", "configurations", "iaa")


def database_url(name: str) -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db.get('USER') or 'postgres'}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{name}"


def run(cmd: list[str], **env) -> str:
    done = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{cmd[:3]} failed: {done.stderr[-2000:]}"
    return done.stdout


def files_line(output: str) -> list[str]:
    return next(line.split()[1:] for line in output.splitlines() if line.startswith("FILES "))


def exports(url: str, media: Path, out: Path) -> dict[str, str]:
    from core.tables import TABLES as REGISTERED

    out.mkdir()
    for table in TABLES:
        study = ["--study", "backup"] if "study" in REGISTERED[table].parameters else []  # refused where not taken
        run(
            [sys.executable, "manage.py", "export", table, "--format", "csv", *study, "--out", str(out / table)],
            DATABASE_URL=url,
            DJANGO_MEDIA_ROOT=str(media),
        )
    return {table: (out / table).read_text() for table in TABLES}


def test_pg_dump_and_media_tar_restore_into_an_empty_database(tmp_path, settings):
    from annotation import services

    if connection.vendor != "postgresql":
        pytest.skip("the backup procedure is for PostgreSQL: set DATABASE_URL")
    for tool in ("pg_dump", "pg_restore", "psql"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    build_corpus(figures=5)
    study = services.study_create(name="backup", configurations=SLUGS, min_dwell_ms=0, overlap_rate=0.5)
    for name in ("backup-a", "backup-b"):
        user = annotator(name)
        study.annotators.add(user)
        for n in range(8):
            served = services.item_next(study=study, annotator=user)
            services.comparison_submit(token=served.lease.token, annotator=user, outcome="ab"[n % 2], dwell_ms=3000)
    source_url = database_url(connection.settings_dict["NAME"])
    restored_db = f"{connection.settings_dict['NAME']}_restored"

    # Backup (docs/operations.md): the database in pg_dump's custom format, the media folder as a tar.
    dump, media_tar = tmp_path / "refig.dump", tmp_path / "media.tar.gz"
    run(["pg_dump", "--format=custom", "--file", str(dump), source_url])
    with tarfile.open(media_tar, "w:gz") as tar:
        tar.add(settings.MEDIA_ROOT, arcname=".")

    # Restore into an empty database and an empty media folder.
    admin_url = database_url("postgres")
    run(["psql", admin_url, "-c", f'DROP DATABASE IF EXISTS "{restored_db}"'])
    run(["psql", admin_url, "-c", f'CREATE DATABASE "{restored_db}"'])
    try:
        run(["pg_restore", "--no-owner", "--exit-on-error", "--dbname", database_url(restored_db), str(dump)])
        restored_media = tmp_path / "restored-media"
        restored_media.mkdir()
        with tarfile.open(media_tar) as tar:
            tar.extractall(restored_media, filter="data")

        # Verify: the app on the restored copy answers every table as the original does, and finds its files.
        original = exports(source_url, settings.MEDIA_ROOT, tmp_path / "original")
        restored = exports(database_url(restored_db), restored_media, tmp_path / "restored")
        assert restored == original
        assert original["comparisons"].count("\n") == 1 + 16
        check = (
            "from agents.selectors import artifact_list; import sys; from django.core.files.storage import default_storage;"
            "names = [a.render_png.name for a in artifact_list() if a.render_png];"
            "missing = [n for n in names if not default_storage.exists(n)];"
            "print('FILES', len(names), len(missing))"
        )
        found = run(
            [sys.executable, "manage.py", "shell", "-c", check],
            DATABASE_URL=database_url(restored_db),
            DJANGO_MEDIA_ROOT=str(restored_media),
        )
        expected = run(
            [sys.executable, "manage.py", "shell", "-c", check],
            DATABASE_URL=source_url,
            DJANGO_MEDIA_ROOT=str(settings.MEDIA_ROOT),
        )
        found, expected = files_line(found), files_line(expected)
        assert found == expected and int(found[0]) > 0 and found[1] == "0"
        print(
            f"\nbackup {dump.stat().st_size} B dump + {media_tar.stat().st_size} B media: restored, {len(TABLES)} tables equal"
        )
    finally:
        run(["psql", admin_url, "-c", f'DROP DATABASE IF EXISTS "{restored_db}"'])
