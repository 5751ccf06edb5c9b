from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.services import comparisons_import


def count_lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


class Command(BaseCommand):
    help = ("Import human comparisons as battle rows (DESIGN 5) from CSV (*.csv), the JSON document `export --format json` writes "
            "(*.json) or JSON Lines (any other name). Idempotent on comparison_id.")

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, file: Path, no_progress, **options):
        if not file.is_file():
            raise CommandError(f"{file}: not found")
        bar = tqdm(total=count_lines(file), unit="row", desc="import_comparisons", disable=no_progress, file=self.stderr._out)
        report = comparisons_import(path=file, progress=bar.update)
        bar.close()
        for name in report.studies_created:
            self.stdout.write(f"created study {name}")
        for message in report.warnings:
            self.stderr.write(f"warning: {message}")
        for message in report.rejected:
            self.stderr.write(message)
        self.stdout.write(report.summary())
        if report.rejected:
            raise CommandError(f"{len(report.rejected)} rows rejected (the good rows are stored)")
