"""What every import command shares: a progress bar over the file's lines, and the report written the same way."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.imports import ImportReport, Progress
from core.readers import count_lines


@contextlib.contextmanager
def line_progress(command: BaseCommand, *, path: Path, desc: str, disable: bool = False) -> Iterator[Progress]:
    bar = tqdm(total=count_lines(path), unit="line", desc=desc, disable=disable, file=command.stderr._out)
    try:
        yield bar.update
    finally:
        bar.close()


def report_write(command: BaseCommand, report: ImportReport) -> None:
    """Notes and the summary to stdout, warnings and rejections to stderr. Every importer's exit status (README,
    "Importing"): 0 when the file was read and its good rows are stored (imported now or already), whatever rows were
    rejected beside them — those are listed, and counted in the summary; non-zero only when rows were rejected and none
    is stored (nothing of the file could be used). A file that cannot be found or opened fails before this."""
    for note in report.notes:
        command.stdout.write(note)
    for message in report.warnings:
        command.stderr.write(f"warning: {message}")
    for message in report.rejected:
        command.stderr.write(message)
    command.stdout.write(report.summary())
    if report.rejected and not (report.created or report.unchanged):
        raise CommandError(f"all {len(report.rejected)} {report.noun} rejected; nothing was imported")
