from pathlib import Path

from django.conf import settings
from django.core.files.storage import FileSystemStorage, default_storage
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.media_move import LEDGER_NAME, media_files, media_move


class Command(BaseCommand):
    help = (
        "Copy an installation's media from a folder (the old MEDIA_ROOT) into the configured media storage (the object "
        "store: REFIG_MEDIA_STORAGE=s3) under the same names, each file verified by SHA-256 after upload. Resumable: "
        f"run it again after an interruption (verified files are listed in FOLDER/{LEDGER_NAME}). The folder is kept."
    )

    def add_arguments(self, parser):
        parser.add_argument("--from", dest="source", type=Path, default=None, help="the folder (default: MEDIA_ROOT)")
        parser.add_argument(
            "--ledger", type=Path, default=None, help=f"the record of verified files (FOLDER/{LEDGER_NAME})"
        )
        parser.add_argument("--jobs", type=int, default=8, help="files moved at once (default 8)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, source, ledger, jobs, no_progress, **options):
        source = (source or Path(settings.MEDIA_ROOT)).resolve()
        if not source.is_dir():
            raise CommandError(f"{source}: no such folder")
        # LazyObject proxies isinstance to the configured storage.
        if isinstance(default_storage, FileSystemStorage) and Path(default_storage.location).resolve() == source:
            raise CommandError(
                f"{source} is the media storage itself: set REFIG_MEDIA_STORAGE=s3 and the REFIG_S3_* variables for "
                "the object store to move the files into"
            )
        total = sum(1 for _ in media_files(source)) - (source / LEDGER_NAME).exists()
        bar = tqdm(total=total, unit="file", desc="move_media", disable=no_progress, file=self.stderr._out)
        try:
            report = media_move(source=source, ledger=ledger, jobs=jobs, progress=bar.update)
        finally:
            bar.close()
        self.stdout.write(
            f"{report.files} files: {report.moved} moved, {report.already} already in the store, "
            f"{len(report.skipped)} skipped (hidden: partial files of interrupted writes), {len(report.damaged)} damaged, "
            f"{len(report.failed)} failed; every copy verified by SHA-256"
        )
        self.stdout.write(
            f"the database names {report.referenced} files: "
            + (f"{len(report.missing)} not in the store" if report.missing else "all in the store")
        )
        problems = (
            [f"damaged (bytes do not match the name; not moved): {name}" for name in report.damaged]
            + [f"failed: {name}: {why}" for name, why in sorted(report.failed.items())]
            + [f"not in the store: {name}" for name in report.missing[:20]]
        )
        for line in problems[:50]:
            self.stderr.write(line)
        if not report.ok:
            raise CommandError("not every file is in the store; fix the above and run the command again to resume")
