"""Regenerate the bundled demo study (demo/bundle): generate, audit, render with LibreOffice."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from agents import render
from demo import bundled
from demo.build import build_demo_bundle
from demo.generator.configurations import DEFAULT_FIGURES, DEFAULT_SEED


class Command(BaseCommand):
    help = "Regenerate demo/bundle/ (synthetic demo study) with the app's audit and LibreOffice renderer."

    def add_arguments(self, parser):
        parser.add_argument(
            "--out", default=str(bundled.BUNDLE_DIR), help="bundle directory (default: the bundled one)"
        )
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument("--figures", type=int, default=DEFAULT_FIGURES)

    def handle(self, *args, out, seed, figures, **options):
        renderer = render.LibreOfficeRenderer(
            soffice=settings.REFIG["SOFFICE_BINARY"],
            timeout=settings.REFIG["RENDER_TIMEOUT_SECONDS"],
            long_edge=bundled.RENDER_LONG_EDGE,
        )
        with renderer:
            built = build_demo_bundle(Path(out), renderer=renderer, seed=seed, figures=figures)
        self.stdout.write(
            f"demo bundle in {built.out_dir}: {built.artifacts} artifacts, {built.audited_ok} pass the audit, "
            f"{built.rendered} rendered, {built.total_bytes / 1e6:.1f} MB"
        )
