"""What each artifact does: per configuration and figure, the behaviours drawn from the configuration's defect rates
(gate failures, pasted raster, freeform or unattached connectors, reversed or dropped arrows, missing or misspelled
labels, dropped containers, shifted layout), every promised behaviour forced in at least once, and the artifact's
true rubric subscores, which the judges, the human votes and the ratings all start from. Pure: no Django."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .configurations import CONFIGURATIONS, GATE_FAILURES, RUBRIC_MAXIMA, DemoConfiguration, defect_rates, seeded_rng
from .figures import FigureModel


@dataclass(frozen=True)
class ArtifactPlan:
    configuration: str
    task_id: str
    gate: str = ""  # "", or one of GATE_FAILURES
    pasted_raster: bool = False
    freeform_connectors: bool = False
    unattached_connectors: bool = False
    shifted_layout: bool = False
    dropped_groups: bool = False
    reversed_edges: tuple[int, ...] = ()
    dropped_edges: tuple[int, ...] = ()
    missing_labels: tuple[str, ...] = ()
    misspelled_labels: tuple[str, ...] = ()
    truncated_log: bool = False
    subscores: dict[str, int] = field(default_factory=dict)  # the artifact's true rubric subscores (0 when gated)

    @property
    def behaviours(self) -> tuple[str, ...]:
        names = [self.gate] if self.gate else []
        names += [
            n
            for n in (
                "pasted_raster",
                "freeform_connectors",
                "unattached_connectors",
                "shifted_layout",
                "dropped_groups",
            )
            if getattr(self, n)
        ]
        names += [
            n for n in ("reversed_edges", "dropped_edges", "missing_labels", "misspelled_labels") if getattr(self, n)
        ]
        return tuple(names) or ("faithful",)

    @property
    def true_score(self) -> float:
        """Final score s = g · min(Q, c) of the true subscores (the cap for a pasted raster)."""
        if self.gate:
            return 0.0
        total = float(sum(self.subscores.values()))
        return min(total, 50.0) if self.pasted_raster else total


def _subset(rng: np.random.Generator, items: list, low: int, high: int) -> tuple:
    if not items:
        return ()
    count = min(len(items), int(rng.integers(low, high + 1)))
    return tuple(items[i] for i in sorted(rng.choice(len(items), size=count, replace=False)))


def _true_subscores(plan: ArtifactPlan, configuration: DemoConfiguration, rng: np.random.Generator) -> dict[str, int]:
    offset = (configuration.strength - 1000.0) / 80.0
    if plan.pasted_raster:
        raw = {"text": 17, "semantic_structure": 22, "layout": 13, "editability": 2, "visual_detail": 8}
    else:
        raw = {
            "text": 19 - 2.5 * len(plan.missing_labels) - 1.5 * len(plan.misspelled_labels),
            "semantic_structure": 28
            - 3 * len(plan.reversed_edges)
            - 3 * len(plan.dropped_edges)
            - 4 * plan.dropped_groups
            - 3 * plan.freeform_connectors
            - 2 * plan.unattached_connectors,
            "layout": 13 - 6 * plan.shifted_layout - plan.dropped_groups + offset / 2,
            "editability": 23 - 8 * plan.freeform_connectors - 4 * plan.unattached_connectors,
            "visual_detail": 8 - 2 * plan.shifted_layout - plan.freeform_connectors + offset / 2,
        }
    return {
        axis: int(min(RUBRIC_MAXIMA[axis], max(0, round(raw[axis] + rng.normal(0, 1.0))))) for axis in RUBRIC_MAXIMA
    }


def plan_artifacts(figures: list[FigureModel], seed: int) -> dict[tuple[str, str], ArtifactPlan]:
    """Draw every artifact's behaviours from its configuration's rates; each gate failure and the raster appear."""
    plans: dict[tuple[str, str], ArtifactPlan] = {}
    for c_index, configuration in enumerate(CONFIGURATIONS):
        rates = defect_rates(configuration)
        for f_index, figure in enumerate(figures):
            rng = seeded_rng(seed, 2, c_index, f_index)
            draw = {name: bool(rng.random() < rate) for name, rate in rates.items()}
            gate = next((g for g in GATE_FAILURES if draw[g]), "")
            edges = list(range(len(figure.edges)))
            labelled = [n.id for n in figure.nodes]
            plans[(configuration.slug, figure.task_id)] = ArtifactPlan(
                configuration=configuration.slug,
                task_id=figure.task_id,
                gate=gate,
                pasted_raster=draw["pasted_raster"] and not gate,
                freeform_connectors=draw["freeform_connectors"],
                unattached_connectors=draw["unattached_connectors"] and not draw["freeform_connectors"],
                shifted_layout=draw["shifted_layout"],
                dropped_groups=draw["dropped_groups"] and bool(figure.groups),
                reversed_edges=_subset(rng, edges, 1, 2) if draw["reversed_arrows"] else (),
                dropped_edges=_subset(rng, edges, 1, 2) if draw["dropped_edges"] else (),
                missing_labels=_subset(rng, labelled, 1, 3) if draw["missing_labels"] else (),
                misspelled_labels=_subset(rng, labelled, 1, 2) if draw["misspelled_labels"] else (),
                truncated_log=draw["truncated_log"],
            )
    # Every behaviour the demo promises is present at least once: force the missing ones on the weakest configurations.
    forced = {
        "missing": CONFIGURATIONS[-1],
        "corrupt": CONFIGURATIONS[-2],
        "multi_slide": CONFIGURATIONS[-3],
        "pasted_raster": CONFIGURATIONS[-4],
    }
    for b_index, (behaviour, configuration) in enumerate(forced.items()):
        if any(behaviour in p.behaviours for p in plans.values()):
            continue
        slot = int(seeded_rng(seed, 3, b_index).integers(len(figures)))
        key = (configuration.slug, figures[slot].task_id)
        values = {
            **plans[key].__dict__,
            **({"gate": behaviour} if behaviour in GATE_FAILURES else {"pasted_raster": True, "gate": ""}),
        }
        plans[key] = ArtifactPlan(**values)
    by_slug = {c.slug: (i, c) for i, c in enumerate(CONFIGURATIONS)}
    for key, plan in plans.items():
        c_index, configuration = by_slug[plan.configuration]
        f_index = next(i for i, f in enumerate(figures) if f.task_id == plan.task_id)
        subscores = {} if plan.gate else _true_subscores(plan, configuration, seeded_rng(seed, 4, c_index, f_index))
        plans[key] = ArtifactPlan(**{**plan.__dict__, "subscores": subscores})
    return plans
