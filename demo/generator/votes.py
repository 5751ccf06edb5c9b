"""The demo's blinded human comparisons (DESIGN contract 5, study `demo`): every one of the 45 configuration pairs on
sampled figures (a few pairs sparse), four simulated annotators, 50 overlap items voted twice, and each outcome drawn
from the stated model: gate failures decide first, then a fixed tie rate, then Bradley–Terry on the sides'
strengths (the configuration's plus the artifact's own quality). Reasons name what the losing side got wrong.
Pure: no Django."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, datetime, timedelta

import numpy as np

from .configurations import ANNOTATORS, CONFIGURATIONS, STUDY, seeded_rng
from .figures import FigureModel
from .judges import defect_notes
from .plans import ArtifactPlan

VOTES_START = datetime(2026, 7, 6, 9, 0, 0, tzinfo=UTC)
# Human vote model (stated in summary.json): ties among two gate-passing artifacts, and the sides' strengths.
HUMAN_TIE_RATE = 0.25
ELO_PER_RUBRIC_POINT = 3.0  # an artifact's own quality moves its side's strength around the configuration's
TIE_SUCCESS_MIN_SCORE = 60
DENSE_PAIR_ITEMS, SPARSE_PAIR_ITEMS, SPARSE_PAIRS, OVERLAP_ITEMS = 20, 4, 9, 50


def _loser_reason(plan: ArtifactPlan) -> str:
    if plan.gate == "missing":
        return "there is no slide at all"
    if plan.gate == "corrupt":
        return "the file does not open"
    if plan.gate == "multi_slide":
        return "it is split over two slides"
    major, minor = defect_notes(plan)
    return (major or minor or ["it is a little less tidy"])[0]


def _vote(
    plan_a: ArtifactPlan, plan_b: ArtifactPlan, ra: float, rb: float, rng: np.random.Generator
) -> tuple[str, str]:
    """The stated human model: BT on the sides' strengths, fixed tie rate, gate failures shortcut."""
    fail_a, fail_b = bool(plan_a.gate), bool(plan_b.gate)
    u = float(rng.random())
    if fail_a and fail_b:
        outcome = "tie_failure" if u < 0.9 else ("a" if u < 0.95 else "b")
    elif fail_a or fail_b:
        winner = "b" if fail_a else "a"
        outcome = winner if u < 0.92 else "tie_failure"
    elif u < HUMAN_TIE_RATE:
        good = min(plan_a.true_score, plan_b.true_score) >= TIE_SUCCESS_MIN_SCORE
        outcome = "tie_success" if good else "tie_failure"
    else:
        p_a = 1.0 / (1.0 + 10 ** ((rb - ra) / 400.0))
        outcome = "a" if rng.random() < p_a else "b"
    if outcome == "tie_success":
        return outcome, "both are faithful, editable reconstructions"
    if outcome == "tie_failure":
        return outcome, f"neither is usable: A — {_loser_reason(plan_a)}; B — {_loser_reason(plan_b)}"
    loser = plan_b if outcome == "a" else plan_a
    side = "A" if outcome == "a" else "B"
    return outcome, f"{side} is closer to the source; the other: {_loser_reason(loser)}"


def battles(figures: list[FigureModel], plans: dict, seed: int) -> list[dict]:
    rng = seeded_rng(seed, 7)
    by_slug = {c.slug: c for c in CONFIGURATIONS}
    mean_q = {c.slug: float(np.mean([plans[(c.slug, f.task_id)].true_score for f in figures])) for c in CONFIGURATIONS}

    def side_strength(plan: ArtifactPlan) -> float:
        return by_slug[plan.configuration].strength + ELO_PER_RUBRIC_POINT * (
            plan.true_score - mean_q[plan.configuration]
        )

    pairs = list(itertools.combinations([c.slug for c in CONFIGURATIONS], 2))
    sparse = {int(i) for i in rng.choice(len(pairs), size=SPARSE_PAIRS, replace=False)}
    items = []
    for p_index, (x, y) in enumerate(pairs):
        n = SPARSE_PAIR_ITEMS if p_index in sparse else DENSE_PAIR_ITEMS
        for f_index in sorted(rng.choice(len(figures), size=n, replace=False)):
            items.append((figures[int(f_index)].task_id, x, y))
    order = rng.permutation(len(items))
    items = [items[i] for i in order]
    votes = []
    for i, (task_id, x, y) in enumerate(items):
        votes.append((task_id, x, y, ANNOTATORS[i % len(ANNOTATORS)]))
    for i in sorted(rng.choice(len(items), size=OVERLAP_ITEMS, replace=False)):
        task_id, x, y = items[int(i)]
        first = ANNOTATORS[int(i) % len(ANNOTATORS)]
        others = [a for a in ANNOTATORS if a != first]
        votes.append((task_id, x, y, others[int(rng.integers(len(others)))]))
    clocks = {a: VOTES_START + timedelta(hours=2 * k) for k, a in enumerate(ANNOTATORS)}
    rows = []
    for task_id, x, y, annotator in votes:
        a, b = (x, y) if rng.random() < 0.5 else (y, x)
        plan_a, plan_b = plans[(a, task_id)], plans[(b, task_id)]
        outcome, reason = _vote(plan_a, plan_b, side_strength(plan_a), side_strength(plan_b), rng)
        dwell = int(min(600_000, rng.lognormal(math.log(22_000), 0.5)))
        clocks[annotator] += timedelta(milliseconds=dwell + int(rng.integers(2_000, 15_000)))
        rows.append(
            {
                "study": STUDY,
                "task_id": task_id,
                "annotator": annotator,
                "config_a": a,
                "config_b": b,
                "left_config": a,
                "outcome": outcome,
                "reason": reason,
                "created_at": clocks[annotator].isoformat().replace("+00:00", "Z"),
                "dwell_ms": dwell,
                "render_sha256_a": "",
                "render_sha256_b": "",
                "audit_sha256_a": "",
                "audit_sha256_b": "",
            }
        )
    rows.sort(key=lambda r: (r["created_at"], r["annotator"]))
    return [{"comparison_id": f"demo-{n + 1:05d}", **row} for n, row in enumerate(rows)]
