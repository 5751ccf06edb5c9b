from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services import battles_import
from core.errors import AppError
from core.management.progress import line_progress, report_write


class Command(BaseCommand):
    help = (
        "Import a votes-only study from battle rows between named systems: CSV (*.csv) or JSON Lines (any other name), "
        "columns config_a/model_a, config_b/model_b, outcome/winner (a, b, tie, tie_success, tie_failure, or the "
        "Arena's model_a, model_b, tie (bothbad)); optional cluster, id, annotator/judge, reason, created_at/tstamp. "
        "Names are kept as given. No corpus or artifacts needed. Idempotent on the battle id."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--study", required=True, help="the votes-only study (created when new)")
        parser.add_argument(
            "--cluster-column",
            help="the column the Elo bootstrap resamples (default: the first of cluster, task_id, question_id, "
            "prompt_id in the file; without one each battle is its own cluster)",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, file: Path, study: str, cluster_column, no_progress, **options):
        if not file.is_file():
            raise CommandError(f"{file}: not found")
        try:
            with line_progress(self, path=file, desc="import_battles", disable=no_progress) as progress:
                report = battles_import(path=file, study=study, cluster_column=cluster_column, progress=progress)
        except AppError as error:
            raise CommandError(error.detail) from error
        report_write(self, report)
