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
    """Notes and the summary to stdout, warnings and rejections to stderr; rejections fail the command (the good rows
    are stored all the same)."""
    for note in report.notes:
        command.stdout.write(note)
    for message in report.warnings:
        command.stderr.write(f"warning: {message}")
    for message in report.rejected:
        command.stderr.write(message)
    command.stdout.write(report.summary())
    if report.rejected:
        raise CommandError(f"{len(report.rejected)} {report.noun} rejected; the others were imported")
