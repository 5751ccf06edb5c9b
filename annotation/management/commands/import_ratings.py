from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.ratings import DEFAULT_RATING_STUDY, ratings_import
from core.errors import AppError
from core.management.progress import line_progress, report_write


class Command(BaseCommand):
    help = (
        "Import 0-5 ratings (PPTArena) from CSV: task_id, configuration, rater, rater_kind (human | judge), run, axis, "
        "rating. Idempotent on (study, artifact, rater, rater_kind, run, axis)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--study", default=DEFAULT_RATING_STUDY, help="rating study (created if new)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, file: Path, study: str, no_progress, **options):
        if not file.is_file():
            raise CommandError(f"{file}: not found")
        try:
            with line_progress(self, path=file, desc="import_ratings", disable=no_progress) as progress:
                report = ratings_import(path=file, study=study, progress=progress)
        except AppError as error:  # e.g. --study names a study of another kind
            raise CommandError(error.detail) from error
        report_write(self, report)
