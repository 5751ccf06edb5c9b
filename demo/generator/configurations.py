"""The demo's stated world: its seed, fields and annotators, the ten fictional configurations with their true
strengths, and each configuration's per-artifact defect rates. Pure (numpy only): every other generator module draws
from `seeded_rng(seed, ...)`, one independent stream per purpose, so the same seed gives the same bundle."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_SEED = 20260713
DEFAULT_FIGURES = 30  # enough for every pair and overlap, small enough to bundle with renderings
STUDY = "demo"
FIELDS: tuple[str, ...] = ("cs.AI", "cs.CL", "cs.CV", "cs.LG")
ANNOTATORS: tuple[str, ...] = ("annotator", "demo-ann-2", "demo-ann-3", "demo-ann-4")
# Rubric maxima, as corpus.protocol.RUBRIC_MAXIMA states them (copied: this module imports no app code).
RUBRIC_MAXIMA: dict[str, int] = {
    "text": 20,
    "semantic_structure": 30,
    "layout": 15,
    "editability": 25,
    "visual_detail": 10,
}
GATE_FAILURES: tuple[str, ...] = ("missing", "corrupt", "multi_slide")


@dataclass(frozen=True)
class DemoConfiguration:
    slug: str
    model: str
    harness: str
    workflow: str
    reasoning_effort: str
    label: str
    strength: float  # the true Bradley-Terry strength on the Elo scale (mean 1000 over the ten)


def _configuration(model: str, harness: str, workflow: str, strength: float) -> DemoConfiguration:
    name = model.replace("synth-", "").capitalize()
    return DemoConfiguration(
        slug=f"{model}-{harness}-{workflow}",
        model=model,
        harness=harness,
        workflow=workflow,
        reasoning_effort="high",
        label=f"{name} · {harness} · {workflow}",
        strength=strength,
    )


# Four fictional models x two workflows, synth-alpha also in a second harness: ten configurations (REFERENCE 2).
# Strengths are 80 Elo apart, so ~160 votes per configuration recover their order.
# The model names are invented on purpose: synthetic scores must not be read as claims about real models.
CONFIGURATIONS: tuple[DemoConfiguration, ...] = (
    _configuration("synth-alpha", "codex", "direct", 1360),
    _configuration("synth-alpha", "codex", "specialized", 1120),
    _configuration("synth-alpha", "claude-code", "direct", 1200),
    _configuration("synth-alpha", "claude-code", "specialized", 1280),
    _configuration("synth-beta", "claude-code", "direct", 1040),
    _configuration("synth-beta", "claude-code", "specialized", 960),
    _configuration("synth-gamma", "gemini-cli", "direct", 880),
    _configuration("synth-gamma", "gemini-cli", "specialized", 800),
    _configuration("synth-delta", "opencode", "direct", 720),
    _configuration("synth-delta", "opencode", "specialized", 640),
)
PRICE_PER_MTOK = {
    "synth-alpha": (3.0, 15.0),
    "synth-beta": (1.25, 10.0),
    "synth-gamma": (1.0, 8.0),
    "synth-delta": (0.4, 1.6),
}


def defect_rates(configuration: DemoConfiguration) -> dict[str, float]:
    """Per-artifact probability of each behaviour; weakness w in [0, 1] grows as the strength falls."""
    w = min(1.0, max(0.0, (1200.0 - configuration.strength) / 400.0))
    specialized = configuration.workflow == "specialized"
    return {
        "missing": round(0.005 + 0.04 * w, 4),
        "corrupt": round(0.005 + 0.02 * w, 4),
        "multi_slide": round(0.005 + (0.02 if specialized else 0.04) * w, 4),
        "pasted_raster": round(0.01 + (0.03 if specialized else 0.10) * w, 4),
        "freeform_connectors": round(0.45 + 0.25 * w if specialized else 0.03 + 0.07 * w, 4),
        "unattached_connectors": round(0.08 + 0.30 * w, 4),
        "reversed_arrows": round(0.05 + 0.30 * w, 4),
        "dropped_edges": round(0.04 + 0.25 * w, 4),
        "missing_labels": round(0.04 + 0.30 * w, 4),
        "misspelled_labels": round(0.05 + 0.25 * w, 4),
        "dropped_groups": round(0.03 + 0.25 * w, 4),
        "shifted_layout": round(0.06 + 0.40 * w, 4),
        "truncated_log": round(0.01 + 0.03 * w, 4),
    }


def seeded_rng(seed: int, *keys: int) -> np.random.Generator:
    """The random stream the keys name (a purpose, then indices), independent of every other stream of the seed."""
    return np.random.default_rng([seed, *keys])
