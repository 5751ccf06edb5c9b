"""The demo's human gate reviews (the PPTBench protocol, `import_gate_reviews`): three reviewers judge every
configuration's artifact on a seeded sample of figures, failing the rendering gate for a missing, corrupt or
multi-slide deck and the semantic gate for a rendered slide whose true score is too low, each slipping now and then.
Pure: no Django."""

from __future__ import annotations

from .configurations import CONFIGURATIONS, seeded_rng
from .figures import FigureModel
from .plans import ArtifactPlan

# Issue 15: who takes part, how often they slip, which figures.
GATE_REVIEWERS: tuple[str, ...] = ("demo-reviewer-1", "demo-reviewer-2", "demo-reviewer-3")
GATE_REVIEW_FIGURES = 8  # a seeded sample of figures; every configuration's artifact on each
GATE_REVIEW_SLIP = 0.08  # chance that a reviewer's verdict disagrees with the artifact's true gate
SEMANTIC_GATE_BELOW = 30.0  # a rendered slide whose true score is below this fails the semantic gate
GATE_REVIEW_COLUMNS = ("task_id", "configuration", "reviewer", "gate_fail", "reason")


def _true_gate_fail(plan: ArtifactPlan) -> str:
    """'' when the artifact passes; otherwise the gate it fails (rendering for a broken deck, semantic for a poor one)."""
    if plan.gate:
        return "rendering"
    return "semantic" if plan.true_score < SEMANTIC_GATE_BELOW else ""


def gate_review_rows(figures: list[FigureModel], plans: dict, seed: int) -> list[dict]:
    rng = seeded_rng(seed, 11)
    chosen = sorted(
        int(i) for i in rng.choice(len(figures), size=min(GATE_REVIEW_FIGURES, len(figures)), replace=False)
    )
    rows = []
    for f_index in chosen:
        task_id = figures[f_index].task_id
        for configuration in CONFIGURATIONS:
            gate = _true_gate_fail(plans[(configuration.slug, task_id)])
            for reviewer in GATE_REVIEWERS:
                fail = bool(gate) != (rng.random() < GATE_REVIEW_SLIP)
                reason = (f"fails the {gate or 'semantic'} gate" if fail else "") + (" (synthetic)" if fail else "")
                rows.append(
                    {
                        "task_id": task_id,
                        "configuration": configuration.slug,
                        "reviewer": reviewer,
                        "gate_fail": "true" if fail else "false",
                        "reason": reason,
                    }
                )
    return rows
