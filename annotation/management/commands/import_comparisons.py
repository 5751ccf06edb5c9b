from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services import comparisons_import
from core.management.progress import line_progress, report_write


class Command(BaseCommand):
    help = (
        "Import human comparisons as battle rows (DESIGN 5) from CSV (*.csv), the JSON document `export --format json` writes "
        "(*.json) or JSON Lines (any other name). Idempotent on comparison_id."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, file: Path, no_progress, **options):
        if not file.is_file():
            raise CommandError(f"{file}: not found")
        with line_progress(self, path=file, desc="import_comparisons", disable=no_progress) as progress:
            report = comparisons_import(path=file, progress=progress)
        report_write(self, report)
