from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from bt_elo.release import DEFAULT_LICENCE, STEPS, release_build, release_zip
from core.errors import AppError


class Command(BaseCommand):
    help = (
        "Write a versioned public release of a study into DIR/<study>-release-<n>/ (datasheet README.md, provenance, "
        "redistributable images only, withheld.jsonl + fetch_withheld.py, audits, renderings, judge records, "
        "pseudonymised votes, the study's tables, SHA256SUMS) and a zip of it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--out", type=Path, required=True, help="folder that holds the releases")
        parser.add_argument(
            "--licence", default=DEFAULT_LICENCE, help="the release's own licence (metadata, annotations)"
        )
        parser.add_argument(
            "--include-licence",
            action="append",
            default=[],
            dest="include_licences",
            metavar="NAME",
            help="redistribute figures under this licence too (e.g. CC-BY-NC-4.0); repeatable",
        )
        parser.add_argument(
            "--release-version", dest="release_version", help="version string instead of the next number"
        )
        parser.add_argument("--no-zip", action="store_true")

    def handle(self, *args, study, out, licence, include_licences, release_version, no_zip, **options):
        bar = tqdm(total=len(STEPS), unit="part", desc="release", file=self.stderr._out)
        try:
            release = release_build(
                study=study,
                out_dir=out,
                licence=licence,
                include_licences=tuple(include_licences),
                version=release_version,
                progress=lambda name: (bar.set_postfix_str(name), bar.update()),
            )
        except AppError as error:
            raise CommandError(error.detail) from error
        finally:
            bar.close()
        counts = ", ".join(f"{n} {name}" for name, n in release.counts.items())
        self.stdout.write(f"{release.path}: {counts}")
        for name, n in sorted(release.withheld_by_licence.items()):
            self.stdout.write(f"withheld under {name}: {n} figures")
        if not no_zip:
            self.stdout.write(f"zip: {release_zip(release.path)}")
