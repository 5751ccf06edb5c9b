"""The agents part of a whole-study export (core.study_exchange): configurations.json (with their provenance) and the
run layout runs/<slug>/<task_id>/{output.pptx, output.py|output.js, output.jsonl, error.log} (DESIGN contract 2).
Renderings are not exported: the import runs the gate, the audit and the rendering again, as for any run layout (each
rendering then records the importing installation's renderer)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from django.core.files.storage import default_storage

from core.errors import Invalid
from core.imports import ImportReport

from . import render, selectors, services
from .configurations import ATTRIBUTES_FIELD, CONFIGURATION_FIELDS, PROVENANCE_FIELDS, ConfigurationFileError
from .models import Artifact

CONFIGURATIONS, RUNS = "configurations.json", "runs"
LANGUAGE_FILES = {"python": "output.py", "javascript": "output.js"}


def _copy(name: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(name, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)


def artifacts_export(*, study: str, out_dir: Path) -> list[str]:
    configurations = [
        {
            **{f: getattr(c, f) for f in CONFIGURATION_FIELDS},
            **({ATTRIBUTES_FIELD: c.attributes} if c.attributes else {}),
            **{f: getattr(c, f) for f in PROVENANCE_FIELDS if getattr(c, f)},
        }
        for c in selectors.configuration_list()
    ]
    if not configurations:  # an installation of votes or screening only: nothing for this part (and no empty file)
        return ["no agent configurations: no configurations.json and no runs/"]
    (out_dir / CONFIGURATIONS).write_text(json.dumps({"configurations": configurations}, indent=1), encoding="utf-8")
    count = 0
    for artifact in selectors.artifact_list().filter(configuration__suite="refig").order_by("pk"):
        folder = out_dir / RUNS / artifact.configuration.slug / artifact.figure.task_id
        folder.mkdir(parents=True, exist_ok=True)  # a run covers its folders: a missing deck is a folder without one
        files = [
            (artifact.pptx, "output.pptx"),
            (artifact.code, LANGUAGE_FILES.get(artifact.code_language, "output.py")),
            (artifact.run_log, "output.jsonl"),
            (artifact.error_log, "error.log"),
        ]
        for field, filename in files:
            if field:
                _copy(field.name, folder / filename)
        count += 1
    return [f"{len(configurations)} configurations -> {CONFIGURATIONS}", f"{count} artifacts -> {RUNS}/"]


def artifacts_load(*, in_dir: Path) -> list[ImportReport]:
    if not (in_dir / CONFIGURATIONS).exists() and not (in_dir / RUNS).exists():
        return []  # exported without agent configurations
    try:
        report = services.artifacts_import(run_root=in_dir / RUNS, configurations_file=in_dir / CONFIGURATIONS)
    except ConfigurationFileError as error:  # names the file and the field; nothing of this part is stored
        raise Invalid(str(error)) from None
    ids = selectors.artifact_ids_pending_audit()
    with services.renderer_create() as renderer:
        for start in range(0, len(ids), render.DEFAULT_BATCH_SIZE):
            batch = Artifact.objects.filter(pk__in=ids[start : start + render.DEFAULT_BATCH_SIZE]).order_by("pk")
            audited = services.artifacts_audit(artifacts=batch)
            services.artifacts_render(artifacts=audited, renderer=renderer)
    report.notes.append(f"{len(ids)} artifacts audited and rendered")
    return [report]
