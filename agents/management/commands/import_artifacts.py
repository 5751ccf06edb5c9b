from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from agents.configurations import ConfigurationFileError
from agents.services import ConfigurationConflict, artifacts_import
from core.management.progress import report_write


class Command(BaseCommand):
    help = (
        "Import agent outputs from <run_root>/<slug>/<task_id>/ for the declared configurations: the task folders the "
        "run holds (with --tasks, the listed tasks: one without a folder is missing). Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run-root", required=True, type=Path)
        parser.add_argument("--configurations", required=True, type=Path, help="JSON or TOML declaration")
        parser.add_argument(
            "--tasks",
            type=Path,
            help="the tasks this run was given, one task id per line (blank lines and # comments ignored): "
            "a listed task without a folder is a missing artifact",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, run_root: Path, configurations: Path, tasks: Path | None, no_progress: bool, **options):
        if not run_root.is_dir():
            raise CommandError(f"{run_root}: run root not found")
        if not configurations.is_file():
            raise CommandError(f"{configurations}: configuration file not found")
        if tasks is not None and not tasks.is_file():
            raise CommandError(f"{tasks}: task list not found")
        bar = tqdm(unit="artifact", desc="import_artifacts", disable=no_progress, file=self.stderr._out)
        try:
            report = artifacts_import(
                run_root=run_root, configurations_file=configurations, tasks_file=tasks, progress=bar.update
            )
        except (ConfigurationFileError, ConfigurationConflict) as error:
            raise CommandError(str(error)) from error
        finally:
            bar.close()
        report_write(self, report)
