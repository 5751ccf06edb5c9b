"""Whole-study export and import in the app's own data contracts (DESIGN "Data contracts"), part by part: each app
registers the part it owns from AppConfig.ready() (corpus manifest + images, configurations + run layout, judge
records, study settings + battle rows), and `export_study` / `import_study` run the parts in order. Import runs the
real importers, so an exported folder is also what a user would bring. The folder leaves the app, so every part names
annotators by their pseudonym (core.pseudonyms.pseudonymise_frame), never by username."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .imports import ImportReport

# The corpus and the artifacts first, then what refers to them.
ORDER_CORPUS = 10
ORDER_ARTIFACTS = 20
ORDER_SCORES = 30
ORDER_STUDIES = 40


@dataclass(frozen=True)
class StudyPart:
    order: int
    name: str
    export: Callable[..., list[str]]  # (study=, out_dir=) -> notes on what was written
    load: Callable[..., list[ImportReport]]  # (in_dir=) -> the importers' reports


STUDY_PARTS: dict[str, StudyPart] = {}


def register_study_part(name: str, *, export: Callable, load: Callable, order: int) -> None:
    STUDY_PARTS[name] = StudyPart(order=order, name=name, export=export, load=load)


def study_parts() -> list[StudyPart]:
    return sorted(STUDY_PARTS.values(), key=lambda part: (part.order, part.name))


def study_export(*, study: str, out_dir: Path) -> list[str]:
    out_dir.mkdir(parents=True, exist_ok=True)
    return [note for part in study_parts() for note in part.export(study=study, out_dir=out_dir)]


def study_import(*, in_dir: Path) -> list[ImportReport]:
    return [report for part in study_parts() for report in part.load(in_dir=in_dir)]
