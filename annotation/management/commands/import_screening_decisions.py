from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.screening import DEFAULT_SCREENING_STUDY, screening_decisions_import
from core.errors import AppError
from core.management.progress import line_progress, report_write


class Command(BaseCommand):
    help = (
        "Import screening decisions from CSV: task_id, annotator, decision (accept, reject or skip), reason (needed to "
        "reject or skip), decided_at (ISO 8601, optional) — the screening-decisions table's columns. A screener without "
        "an account gets an annotator account without a password. Idempotent on (study, figure, screener)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--study", default=DEFAULT_SCREENING_STUDY, help="screening study (created if new)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, file: Path, study: str, no_progress, **options):
        if not file.is_file():
            raise CommandError(f"{file}: not found")
        try:
            with line_progress(self, path=file, desc="import_screening_decisions", disable=no_progress) as progress:
                report = screening_decisions_import(path=file, study=study, progress=progress)
        except AppError as error:  # e.g. --study names a study of another kind
            raise CommandError(error.detail) from error
        report_write(self, report)
