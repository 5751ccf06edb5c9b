import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.errors import AppError
from core.tables import FORMATS, TABLES, render_table, table_frame, table_notes, table_parameters_check


class Command(BaseCommand):
    help = "Export one analysis table (see --list) as CSV, JSON or LaTeX."

    def add_arguments(self, parser):
        parser.add_argument("table", nargs="?")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--study", help="study name (default: the only study)")
        parser.add_argument("--judge", help="judge model id (default: every judge and run)")
        parser.add_argument("--run", help="judge run number or 'mean' (default: the table's; see its notes)")
        parser.add_argument("--price-input", type=float, help="economics: USD per million input tokens (cached too)")
        parser.add_argument("--price-output", type=float, help="economics: USD per million output tokens")
        parser.add_argument("--out", type=Path)
        parser.add_argument("--list", action="store_true", help="list the tables")

    def handle(self, *args, table, format, out, list, **options):
        if list or not table:
            for name in sorted(TABLES):
                self.stdout.write(f"{name:28s} {TABLES[name].title}")
            return
        given = {k: options[k] for k in ("study", "judge", "run", "price_input", "price_output")}
        try:
            params = table_parameters_check(table, given)  # one the table does not take is refused, never ignored
            frame = table_frame(table, **params)
            text = render_table(frame, format, name=table, notes=table_notes(table, **params))
        except AppError as error:
            raise CommandError(error.detail) from error
        for note in frame.attrs.get("notes", []):  # what the table leaves out, and why (CSV has no place for it)
            self.stderr.write(f"{table}: {note}")
        if out:
            out.write_text(text, encoding="utf-8")
            self.stderr.write(f"{table}: {len(frame)} rows written to {out}")
        else:
            sys.stdout.write(text)
