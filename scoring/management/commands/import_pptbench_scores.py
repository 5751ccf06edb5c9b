from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.management.progress import line_progress, report_write
from scoring.services import pptbench_scores_import


class Command(BaseCommand):
    help = "Import PPTBench's published scores.csv (configurations <model>__<effort>). Idempotent."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, file: Path, no_progress: bool, **options):
        if not file.is_file():
            raise CommandError(f"{file}: not found")
        with line_progress(self, path=file, desc="import_pptbench_scores", disable=no_progress) as progress:
            report = pptbench_scores_import(path=file, progress=progress)
        report_write(self, report)
