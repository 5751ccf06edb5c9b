"""The scoring part of a whole-study export (core.study_exchange): judge.jsonl, every stored judge score in the judge
record shape (DESIGN contract 3) with its provenance, the raw reply and the prompt hash (scoring.services.
JUDGE_RECORD_PROVENANCE), so an exported score can be recomputed and an import keeps them. Failed calls of the built-in
judge are not records of that contract and stay out."""

from __future__ import annotations

import json
from pathlib import Path

from core.imports import ImportReport
from corpus.protocol import RUBRIC_AXES

from . import services
from .models import JudgeRecord

JUDGE = "judge.jsonl"


def judge_records_export(*, study: str, out_dir: Path) -> list[str]:
    records = (
        JudgeRecord.objects.filter(status=JudgeRecord.Status.OK)
        .select_related("artifact__configuration", "artifact__figure", "judge_run")
        .order_by("judge_run__judge", "judge_run__run", "pk")
    )
    count = 0
    with open(out_dir / JUDGE, "w", encoding="utf-8") as out:
        for r in records.iterator():
            row = {
                "task_id": r.artifact.figure.task_id,
                "configuration": r.artifact.configuration.slug,
                "judge": r.judge_run.judge,
                "judge_family": r.judge_run.family,
                "run": r.judge_run.run,
                "subscores": {axis: getattr(r, axis) for axis in RUBRIC_AXES},
                "score": r.score,
                "major_errors": r.major_errors,
                "minor_errors": r.minor_errors,
                "editability_assessment": r.editability_assessment,
                "reason": r.reason,
                "raw_reply": r.raw_reply,
                "prompt_hash": r.prompt_hash,
            }
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return [f"{count} judge records -> {JUDGE}"]


def judge_records_load(*, in_dir: Path) -> list[ImportReport]:
    path = in_dir / JUDGE
    return [services.judge_records_import(path=path)] if path.is_file() else []
