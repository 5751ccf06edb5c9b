from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.gate_reviews import DEFAULT_GATE_REVIEW_STUDY, gate_reviews_import
from core.errors import AppError
from core.management.progress import line_progress, report_write


class Command(BaseCommand):
    help = (
        "Import human gate reviews (PPTBench) from CSV: task_id, configuration, reviewer, gate_fail (true/false), "
        "reason. Idempotent on (study, artifact, reviewer)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--study", default=DEFAULT_GATE_REVIEW_STUDY, help="gate-review study (created if new)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, file: Path, study: str, no_progress, **options):
        if not file.is_file():
            raise CommandError(f"{file}: not found")
        try:
            with line_progress(self, path=file, desc="import_gate_reviews", disable=no_progress) as progress:
                report = gate_reviews_import(path=file, study=study, progress=progress)
        except AppError as error:  # e.g. --study names a study of another kind
            raise CommandError(error.detail) from error
        report_write(self, report)
