from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from agents.phantoms import phantoms_delete, phantoms_find


class Command(BaseCommand):
    help = (
        "Delete the 'missing' artifacts an earlier import made for figures its run had no folder for: gate reason "
        "missing, no file stored, nothing (vote, rating, gate review, judge record, lease) naming it, and no folder "
        "<run_root>/<slug>/<task_id>/. Lists them only, unless --apply."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run-root", required=True, type=Path, help="the run the rows were imported from")
        parser.add_argument("--apply", action="store_true", help="delete them (without it: a dry run)")

    def handle(self, *args, run_root: Path, apply: bool, **options):
        if not run_root.is_dir():
            raise CommandError(f"{run_root}: run root not found")
        phantoms = phantoms_find(run_root=run_root)
        for slug in phantoms.configurations_absent:
            self.stderr.write(
                f"warning: {run_root / slug}: no folder for configuration {slug}; all its tasks are absent"
            )
        listed = phantoms_delete(phantoms=phantoms) if apply else phantoms.unreferenced
        for pk, slug, task_id in listed:
            self.stdout.write(f"{'deleted' if apply else 'would delete'} artifact {pk} {slug}/{task_id}")
        if phantoms.referenced:
            self.stdout.write(
                f"{len(phantoms.referenced)} missing artifacts without a folder kept: a vote, rating, gate review, "
                "judge record or lease names them"
            )
        if apply:
            self.stdout.write(f"{len(listed)} phantom artifacts deleted")
        else:
            self.stdout.write(
                f"{len(phantoms.unreferenced)} phantom artifacts would be deleted (dry run; --apply deletes)"
            )
