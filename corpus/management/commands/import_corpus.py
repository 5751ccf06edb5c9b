from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from corpus.services import corpus_import


def count_lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


class Command(BaseCommand):
    help = "Import figures from a JSON Lines manifest (ORBIT provenance) and an image folder. Idempotent."

    def add_arguments(self, parser):
        parser.add_argument("--manifest", required=True, type=Path)
        parser.add_argument("--images", required=True, type=Path, help="folder the manifest's image paths are relative to")
        parser.add_argument("--field", action="append", default=[], dest="fields", help="declare a field beyond cs.AI/cs.CL/cs.CV/cs.LG (repeatable)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, manifest: Path, images: Path, fields, no_progress, **options):
        if not manifest.is_file():
            raise CommandError(f"{manifest}: manifest not found")
        if not images.is_dir():
            raise CommandError(f"{images}: image folder not found")
        bar = tqdm(total=count_lines(manifest), unit="row", desc="import_corpus", disable=no_progress, file=self.stderr._out)
        last = [0]

        def advance(line_number: int) -> None:
            bar.update(line_number - last[0])
            last[0] = line_number

        report = corpus_import(manifest=manifest, images_dir=images, extra_fields=fields, on_line=advance)
        bar.close()
        for message in report.rejected:
            self.stderr.write(message)
        self.stdout.write(report.summary())
        if report.rejected:
            raise CommandError(f"{len(report.rejected)} row(s) rejected; the other rows were imported")
