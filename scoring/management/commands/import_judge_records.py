from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.management.progress import line_progress, report_write
from scoring.services import judge_records_import


class Command(BaseCommand):
    help = "Import judge records (JSON Lines, DESIGN contract 3) produced elsewhere. Idempotent."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--rubric", default="refig-v1", help="rubric whose maxima the subscores are checked against"
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, file: Path, rubric: str, no_progress: bool, **options):
        if not file.is_file():
            raise CommandError(f"{file}: not found")
        with line_progress(self, path=file, desc="import_judge_records", disable=no_progress) as progress:
            report = judge_records_import(path=file, rubric_version=rubric, progress=progress)
        report_write(self, report)
