"""The annotation part of a whole-study export (core.study_exchange): study.json (name, status, settings,
configurations, figures) and battles.csv, the study's counted votes as battle rows (DESIGN contract 5) with the stored
provenance hashes. Import creates the study with those settings, then runs the battle-row importer."""

from __future__ import annotations

import json
from pathlib import Path

from core.errors import NotFound
from core.imports import ImportReport
from core.pseudonyms import pseudonymise_frame

from . import selectors, services
from .services.studies import STUDY_SETTINGS

STUDY, BATTLES = "study.json", "battles.csv"


def study_export(*, study: str, out_dir: Path) -> list[str]:
    resolved = selectors.study_resolve(study=study)
    document = {
        "name": resolved.name,
        "status": resolved.status,
        "settings": {name: getattr(resolved, name) for name in STUDY_SETTINGS},
        "configurations": list(resolved.configurations.order_by("position", "slug").values_list("slug", flat=True)),
        "figures": list(resolved.figures.order_by("task_id").values_list("task_id", flat=True)),
    }
    (out_dir / STUDY).write_text(json.dumps(document, indent=1), encoding="utf-8")
    # The folder leaves the app: annotators by their stable pseudonym (an import keeps them as names).
    battles = pseudonymise_frame(selectors.comparisons_frame(study=resolved.name)[selectors.BATTLE_COLUMNS])
    battles.to_csv(out_dir / BATTLES, index=False)
    return [f"study {resolved.name} -> {STUDY}", f"{len(battles)} votes -> {BATTLES}"]


def study_load(*, in_dir: Path) -> list[ImportReport]:
    document = json.loads((in_dir / STUDY).read_text(encoding="utf-8"))
    report = ImportReport(source=str(in_dir / STUDY), noun="studies")
    try:
        selectors.study_resolve(study=document["name"])
        report.unchanged += 1
    except NotFound:
        services.study_create(
            name=document["name"],
            configurations=document["configurations"],
            figures=document["figures"] or None,
            **document["settings"],
        )
        report.created += 1
    comparisons = services.comparisons_import(path=in_dir / BATTLES)
    study = selectors.study_resolve(study=document["name"])
    if study.status != document["status"]:
        services.study_status_set(study=study, status=document["status"])
    return [report, comparisons]
