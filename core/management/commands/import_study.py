from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import AppError
from core.management.progress import report_write
from core.study_exchange import study_import


class Command(BaseCommand):
    help = (
        "Import a folder `export_study` wrote, through the real importers: the corpus, the artifacts (gate, audit and "
        "rendering run again), the judge records, then the study of its kind with its settings and status, and its "
        "human data — battle rows (pairwise; imported battles for a votes-only study), gate reviews, ratings, "
        "screening decisions, the stratified sample. Idempotent: importing the same folder again creates nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("dir", type=Path)

    def handle(self, *args, dir: Path, **options):
        if not dir.is_dir():
            raise CommandError(f"{dir}: not found")
        try:
            reports = study_import(in_dir=dir)
        except AppError as error:  # a file the parts cannot read at all (study.json, a missing data file)
            raise CommandError(error.detail) from error
        failed = None
        for report in reports:
            try:
                report_write(self, report)
            except CommandError as error:  # every part's report is written before the command fails
                failed = failed or error
        if failed:
            raise failed
