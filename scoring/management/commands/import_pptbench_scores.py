from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from scoring.services import pptbench_scores_import


class Command(BaseCommand):
    help = "Import PPTBench's published scores.csv (configurations <model>__<effort>). Idempotent."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options):
        if not file.is_file():
            raise CommandError(f"{file}: not found")
        report = pptbench_scores_import(path=file)
        for message in report.rejected:
            self.stderr.write(message)
        self.stdout.write(report.summary().replace("records", "scores"))
        if report.rejected:
            raise CommandError(f"{len(report.rejected)} row(s) rejected; the other rows were imported")
