import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bt_elo.paper import FIGURE_FORMATS, PAPERS, Unsupported, build_bundle
from core.errors import AppError


class Command(BaseCommand):
    help = (
        "Write a paper's reproduction bundle: its tables as CSV + LaTeX, its figures as PDF (or PNG / SVG), and "
        "REPRODUCTION.md (what each file is, from which inputs, and the command that remakes it)."
    )

    def add_arguments(self, parser):
        parser.add_argument("paper", choices=sorted(PAPERS))
        parser.add_argument("--study", help="study name (the human-vote, rating or gate-review tables are about it)")
        parser.add_argument(
            "--judge", help="judge model id (default: every judge; one-judge figures take the judge that ran first)"
        )
        parser.add_argument("--out", type=Path, required=True, help="directory to write the bundle into")
        parser.add_argument("--only", action="append", default=[], help="only this table or figure (repeatable)")
        parser.add_argument(
            "--figure-format",
            action="append",
            choices=FIGURE_FORMATS,
            dest="figure_formats",
            help="write each figure in this format (repeatable; default pdf)",
        )

    def handle(self, *args, paper, study, judge, out, only, figure_formats, **options):
        started = time.monotonic()

        def progress(done: int, total: int, what: str) -> None:
            elapsed = time.monotonic() - started
            bar = "#" * (20 * done // total) + "." * (20 - 20 * done // total)
            self.stderr.write(f"[{bar}] {done}/{total} {done / max(elapsed, 1e-9):.1f}/s {what}")

        try:
            bundle = build_bundle(
                paper,
                study=study,
                judge=judge,
                out_dir=out,
                only=tuple(only),
                progress=progress,
                figure_formats=tuple(figure_formats or ("pdf",)),
            )
        except (AppError, Unsupported) as error:
            raise CommandError(str(error)) from error
        missing = [e.name for e in bundle.entries if e.reason]
        self.stdout.write(
            f"{paper}: {len(bundle.files)} files written to {out}"
            + (f"; not supported by this study's data (see REPRODUCTION.md): {', '.join(missing)}" if missing else "")
        )
