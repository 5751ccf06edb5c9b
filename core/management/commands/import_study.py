from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.management.progress import report_write
from core.study_exchange import study_import


class Command(BaseCommand):
    help = (
        "Import a folder `export_study` wrote, through the real importers (corpus, artifacts with the gate, audit and "
        "rendering, judge records, the study and its battle rows). Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("dir", type=Path)

    def handle(self, *args, dir: Path, **options):
        if not dir.is_dir():
            raise CommandError(f"{dir}: not found")
        reports = study_import(in_dir=dir)
        failed = None
        for report in reports:
            try:
                report_write(self, report)
            except CommandError as error:  # every part's report is written before the command fails
                failed = failed or error
        if failed:
            raise failed
