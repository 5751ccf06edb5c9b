from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.management.progress import line_progress, report_write
from scoring.pptbench_import import IMPORTERS, OPTIONAL_FILES, RESULT_FILES
from scoring.pptbench_selectors import published_check

OPTIONS = {"gate-repeats.csv": "gate_repeats", "process.csv": "process", "domains.csv": "domains"}


class Command(BaseCommand):
    help = (
        "Import a PPTBench results/ folder (scores.csv, issue-summary.csv, generation-metrics.csv; idempotent), then "
        "compare the leaderboard and ranking bootstrap the app computes with its leaderboard.csv and bootstrap.json. "
        "Optional inputs this app defines (CSV; see scoring/pptbench_import.py): --gate-repeats, --process, --domains, "
        "also read from the folder under the names gate-repeats.csv, process.csv and domains.csv."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder", type=Path)
        parser.add_argument("--gate-repeats", type=Path, help="judge, task_id, candidate_id, repeat, gate")
        parser.add_argument("--process", type=Path, help="task_id, candidate_id, review_turns, revision_turns")
        parser.add_argument("--domains", type=Path, help="task_id, domain")
        parser.add_argument("--no-check", action="store_true", help="skip the comparison with the published files")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, folder: Path, no_check: bool, no_progress: bool, **options):
        if not folder.is_dir():
            raise CommandError(f"{folder}: not a folder")
        if not (folder / "scores.csv").is_file():
            raise CommandError(f"{folder}: no scores.csv (a PPTBench results/ folder holds it)")
        files = {name: folder / name for name in RESULT_FILES}
        for name in OPTIONAL_FILES:
            given = options.get(OPTIONS[name])
            if given is not None and not given.is_file():
                raise CommandError(f"{given}: not found")
            files[name] = given or folder / name
        failures = []
        for name, path in files.items():
            if not path.is_file():
                if name in RESULT_FILES:
                    self.stdout.write(f"{name}: absent, not imported")
                continue
            with line_progress(self, path=path, desc=name, disable=no_progress) as progress:
                report = IMPORTERS[name](path=path, progress=progress)
            try:  # the importers' exit rule (report_write): fails only when none of a file's rows could be used
                report_write(self, report)
            except CommandError as error:
                failures.append(f"{name}: {error}")
        mismatched = []
        if not no_check:
            for name, matches, sentence in published_check(folder):
                self.stdout.write(f"{name}: {sentence}")
                if not matches and "absent" not in sentence:
                    mismatched.append(name)
        if mismatched:
            failures.append(f"{', '.join(mismatched)} not reproduced")
        if failures:
            raise CommandError("; ".join(failures))
