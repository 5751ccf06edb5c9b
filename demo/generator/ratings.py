"""The demo's 0–5 ratings (the PPTArena protocol, `import_ratings`): two humans and three runs of a judge rate
instruction following and visual quality of every configuration's artifact on a seeded sample of figures, each rating
the artifact's true quality plus the rater's noise. Pure: no Django."""

from __future__ import annotations

from .configurations import CONFIGURATIONS, RUBRIC_MAXIMA, seeded_rng
from .figures import FigureModel

RATING_FIGURES = 6
RATING_AXES = ("instruction_following", "visual_quality")
RATING_RATERS: tuple[str, ...] = ("demo-rater-1", "demo-rater-2")
RATING_JUDGE, RATING_JUDGE_RUNS = "synthetic-judge-pinned-2026-06", 3
RATING_COLUMNS = ("task_id", "configuration", "rater", "rater_kind", "run", "axis", "rating")


def _rating(value: float) -> int:
    return int(min(5, max(0, round(value))))


def rating_rows(figures: list[FigureModel], plans: dict, seed: int) -> list[dict]:
    """Humans rate a stratified subset (every configuration on the same sampled figures); the judge rates it three
    times. Instruction following follows the true score, visual quality the layout and visual-detail subscores."""
    rng = seeded_rng(seed, 12)
    chosen = sorted(int(i) for i in rng.choice(len(figures), size=min(RATING_FIGURES, len(figures)), replace=False))
    rows = []
    for f_index in chosen:
        task_id = figures[f_index].task_id
        for configuration in CONFIGURATIONS:
            plan = plans[(configuration.slug, task_id)]
            layout = plan.subscores.get("layout", 0) / RUBRIC_MAXIMA["layout"]
            detail = plan.subscores.get("visual_detail", 0) / RUBRIC_MAXIMA["visual_detail"]
            truth = {
                "instruction_following": plan.true_score / 20.0,
                "visual_quality": 0.0 if plan.gate else 2.5 * (layout + detail),
            }
            raters = [(r, "human", 1, 0.6) for r in RATING_RATERS]
            raters += [(RATING_JUDGE, "judge", run, 0.5) for run in range(1, RATING_JUDGE_RUNS + 1)]
            for rater, kind, run, noise in raters:
                for axis in RATING_AXES:
                    rows.append(
                        {
                            "task_id": task_id,
                            "configuration": configuration.slug,
                            "rater": rater,
                            "rater_kind": kind,
                            "run": run,
                            "axis": axis,
                            "rating": _rating(truth[axis] + rng.normal(0, noise)),
                        }
                    )
    return rows
