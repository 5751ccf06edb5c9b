from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.study_exchange import study_export


class Command(BaseCommand):
    help = (
        "Write a whole study in the app's own data contracts into DIR: manifest.jsonl + images/, configurations.json + "
        "runs/ (the run layout with the PPTX files), judge.jsonl, study.json and battles.csv. `import_study DIR` reads it."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="study name")
        parser.add_argument("dir", type=Path)

    def handle(self, *args, study: str, dir: Path, **options):
        if dir.exists() and any(dir.iterdir()):
            raise CommandError(f"{dir}: not empty; export into a new folder")
        for note in study_export(study=study, out_dir=dir):
            self.stdout.write(note)
