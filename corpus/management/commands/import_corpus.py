from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.management.progress import line_progress, report_write
from corpus.services import corpus_import


class Command(BaseCommand):
    help = "Import figures from a JSON Lines manifest (ORBIT provenance) and an image folder. Idempotent."

    def add_arguments(self, parser):
        parser.add_argument("--manifest", required=True, type=Path)
        parser.add_argument(
            "--images", required=True, type=Path, help="folder the manifest's image paths are relative to"
        )
        parser.add_argument(
            "--field",
            action="append",
            default=[],
            dest="fields",
            help="declare a field beyond cs.AI/cs.CL/cs.CV/cs.LG (repeatable)",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, manifest: Path, images: Path, fields, no_progress, **options):
        if not manifest.is_file():
            raise CommandError(f"{manifest}: manifest not found")
        if not images.is_dir():
            raise CommandError(f"{images}: image folder not found")
        with line_progress(self, path=manifest, desc="import_corpus", disable=no_progress) as progress:
            report = corpus_import(manifest=manifest, images_dir=images, extra_fields=fields, progress=progress)
        report_write(self, report)
