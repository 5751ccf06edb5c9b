from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import AppError
from core.study_exchange import study_export


class Command(BaseCommand):
    help = (
        "Write a whole study in the app's own data contracts into DIR: manifest.jsonl + images/, configurations.json + "
        "runs/ (the run layout with the PPTX files), judge.jsonl, study.json (name, kind, status, settings, "
        "configurations, figures; a rating study's axes) and the study's human data, by kind: battles.csv (pairwise: "
        "the counted votes; votes-only: the imported battles), gate_reviews.csv (gate review), ratings.csv (rating: "
        "human and judge ratings with category, judge family and item texts), screening_decisions.csv (screening: "
        "decisions and skips), sample.csv (gate review or rating: the stratified sample). People by pseudonym only. "
        "Not carried: leases and sessions, assignments, exclusions, adjudications, calibration answers, votes "
        "withdrawn or superseded by an undo, renderings (made again on import). `import_study DIR` reads it."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="study name")
        parser.add_argument("dir", type=Path)

    def handle(self, *args, study: str, dir: Path, **options):
        if dir.exists() and any(dir.iterdir()):
            raise CommandError(f"{dir}: not empty; export into a new folder")
        try:
            notes = study_export(study=study, out_dir=dir)
        except AppError as error:
            raise CommandError(error.detail) from error
        for note in notes:
            self.stdout.write(note)
