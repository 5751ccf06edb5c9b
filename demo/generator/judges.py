"""The demo's judge records (DESIGN contract 3): two judge families x three runs over the artifacts that pass the
gate, each subscore the artifact's true one plus the family's bias and per-run noise, clipped to the rubric maxima,
with major and minor errors named after the injected defects and every reason starting with "synthetic demo judge".
Pure: no Django."""

from __future__ import annotations

from .configurations import CONFIGURATIONS, RUBRIC_MAXIMA, seeded_rng
from .figures import FigureModel
from .plans import ArtifactPlan

JUDGES: tuple[tuple[str, str, float, float], ...] = (
    # judge model id, family, bias per axis (rubric points), noise sd per axis
    ("synthetic-judge-pinned-2026-06", "synthetic-proprietary", 0.0, 0.9),
    ("synthetic-judge-open-32b", "synthetic-open-weight", -0.8, 1.5),
)
JUDGE_RUNS = 3
DEFECT_TEXT = {
    "pasted_raster": ("the slide is one pasted picture of the source", "major"),
    "freeform_connectors": ("arrows are freeform lines, not connectors", "major"),
    "unattached_connectors": ("connectors are not attached to the boxes", "minor"),
    "shifted_layout": ("boxes are displaced and resized relative to the source", "minor"),
    "dropped_groups": ("the dashed containers are missing", "major"),
    "reversed_edges": ("{n} arrow(s) point the wrong way", "major"),
    "dropped_edges": ("{n} arrow(s) are missing", "major"),
    "missing_labels": ("{n} module label(s) are missing", "major"),
    "misspelled_labels": ("{n} label(s) are misspelled", "minor"),
}


def defect_notes(plan: ArtifactPlan) -> tuple[list[str], list[str]]:
    major, minor = [], []
    for name in plan.behaviours:
        if name in DEFECT_TEXT:
            text, kind = DEFECT_TEXT[name]
            value = getattr(plan, name)
            note = text.format(n=len(value) if isinstance(value, tuple) else 1)
            (major if kind == "major" else minor).append(note)
    return major, minor


def judge_records(figures: list[FigureModel], plans: dict, seed: int) -> list[dict]:
    records = []
    for j_index, (judge, family, bias, sd) in enumerate(JUDGES):
        for run in range(1, JUDGE_RUNS + 1):
            for c_index, configuration in enumerate(CONFIGURATIONS):
                for f_index, figure in enumerate(figures):
                    plan = plans[(configuration.slug, figure.task_id)]
                    if plan.gate:  # the judge sees only artifacts that pass the gate
                        continue
                    rng = seeded_rng(seed, 6, j_index, run, c_index, f_index)
                    subscores = {
                        axis: int(min(top, max(0, round(plan.subscores[axis] + bias + rng.normal(0, sd)))))
                        for axis, top in RUBRIC_MAXIMA.items()
                    }
                    major, minor = defect_notes(plan)
                    if plan.pasted_raster:
                        assessment = "a single full-slide picture; nothing is editable"
                    elif plan.freeform_connectors:
                        assessment = "native boxes and text; arrows are freeform shapes"
                    else:
                        assessment = "native text boxes, shapes and connectors"
                    worst = major[0] if major else minor[0] if minor else "close to the source"
                    records.append(
                        {
                            "task_id": figure.task_id,
                            "configuration": configuration.slug,
                            "judge": judge,
                            "judge_family": family,
                            "run": run,
                            "subscores": subscores,
                            "score": sum(subscores.values()),
                            "major_errors": major,
                            "minor_errors": minor,
                            "editability_assessment": assessment,
                            "reason": f"synthetic demo judge: {worst}",
                        }
                    )
    return records
