"""Constants the study protocol fixes, in one place (sources: ../shared/REFERENCE.md sections).

Pure: no Django. Every app reads these from here, never from a literal.
"""

# REFERENCE 3 — rubric axes and their maxima; Q = T + S + L + E + V.
RUBRIC_AXES: tuple[str, ...] = ("text", "semantic_structure", "layout", "editability", "visual_detail")
RUBRIC_MAXIMA: dict[str, int] = {
    "text": 20,
    "semantic_structure": 30,
    "layout": 15,
    "editability": 25,
    "visual_detail": 10,
}

# REFERENCE 3 — flattening cap: one picture covering >= 85 % of the canvas with few native objects.
FLATTEN_PICTURE_SHARE = 0.85
FLATTEN_CAP = 50
NO_CAP = 100
# "Few" native objects: a pasted raster plus at most this many native text boxes / shapes / lines /
# connectors (a title and a caption, say) still reads as a flattened slide.
FLATTEN_MAX_NATIVE_OBJECTS = 3

# REFERENCE 4 — automated-score bootstraps over tasks.
SCORE_BOOTSTRAP_RESAMPLES = 5_000
SCORE_BOOTSTRAP_SEED = 7
# REFERENCE 10 — the judge run ReFigBench's structural audit (Tables 3, 15) and weight sensitivity (Table 21) are
# computed on; runs 2 and 3 are its reproducibility check.
PAPER_JUDGE_RUN = 1

# REFERENCE 6 — Bradley–Terry Elo cluster bootstrap over source figures.
ELO_BOOTSTRAP_RESAMPLES = 2_000
ELO_BOOTSTRAP_SEED = 20260720
ELO_BASE = 1000.0

# REFERENCE 7 — judge–human agreement cluster bootstrap over source figures.
AGREEMENT_BOOTSTRAP_RESAMPLES = 5_000
AGREEMENT_BOOTSTRAP_SEED = 20260721
MARGIN_BUCKETS: tuple[tuple[float, float], ...] = ((0, 2), (2, 5), (5, 10), (10, float("inf")))
THREE_CLASS_TIE_THRESHOLDS: tuple[float, ...] = (0, 2, 5)

# REFERENCE 5 — sparse pairs on the coverage heatmap.
SPARSE_PAIR_THRESHOLD = 20

# Human comparison outcomes (DESIGN 5).
OUTCOMES: tuple[str, ...] = ("a", "b", "tie_success", "tie_failure")
# A tie whose kind the source does not say (issue 30: imported battles, e.g. a judge's plain "tie"): half a win to each
# side like the others, counted in `ties` but in neither ties_success nor ties_failure. Annotators never cast one.
PLAIN_TIE = "tie"
BATTLE_OUTCOMES: tuple[str, ...] = (*OUTCOMES, PLAIN_TIE)
TIE_OUTCOMES: frozenset[str] = frozenset({"tie_success", "tie_failure", PLAIN_TIE})

# Image sizes shown to people: the side-by-side rendering's long edge and every thumbnail's (source figures and slides).
RENDER_LONG_EDGE = 1600
THUMBNAIL_LONG_EDGE = 320

# Issue 16 — ranking stability (source: PPTBench results/bootstrap.json — "seed": 20260816,
# "iterations": 10000, sample sizes 50…500 — from scripts/vlm_judge/bootstrap_ranking_stability.py,
# Einsia/PPTBench d64c09f). The task-resampling bootstrap of a leaderboard, reproduced value for value.
STABILITY_ITERATIONS = 10_000
STABILITY_SEED = 20260816
STABILITY_SAMPLE_SIZES: tuple[int, ...] = (50, 100, 200, 300, 400, 500)
STABILITY_CI_QUANTILES: tuple[float, float] = (0.025, 0.975)
STABILITY_TAU_QUANTILES: tuple[float, float] = (0.05, 0.95)
# Top-k sets whose exact membership is reported (top 1 is reported as "the same winner").
STABILITY_TOP_SETS: tuple[int, ...] = (2, 3, 5)
# The per-model "in the top k" probability PPTBench reports.
STABILITY_TOP_MEMBERSHIP = 3
# Fractions of a study's source figures resampled for Elo stability (1.0 = the usual cluster bootstrap).
ELO_STABILITY_FRACTIONS: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 1.0)

# Issue 16 — how a study spends its votes. "coverage": every pair to its target (REFERENCE 5);
# "adaptive": every pair to a floor, then the pairs whose next vote most reduces ranking uncertainty.
ALLOCATION_COVERAGE = "coverage"
ALLOCATION_ADAPTIVE = "adaptive"
ALLOCATIONS: tuple[str, ...] = (ALLOCATION_COVERAGE, ALLOCATION_ADAPTIVE)
# The adaptive floor defaults to the sparse-pair line: no pair is left sparse by adaptive serving.
ADAPTIVE_PAIR_FLOOR = SPARSE_PAIR_THRESHOLD

# REFERENCE 5/7 — ReFigBench's snapshot, the study planner's defaults: 4,270 valid annotations of which
# 2,990 decisive (so 1,280 ties) over 10 configurations and 1,000 figures.
PAPER_CONFIGURATIONS = 10
PAPER_FIGURES = 1000
PAPER_VOTES = 4270
PAPER_TIE_RATE = (4270 - 2990) / 4270

# Human comparisons as battle rows (DESIGN 5, the Chatbot Arena convention extended), in export order.
BATTLE_COLUMNS = (
    "comparison_id",
    "study",
    "task_id",
    "annotator",
    "config_a",
    "config_b",
    "left_config",
    "outcome",
    "reason",
    "created_at",
    "dwell_ms",
    "render_sha256_a",
    "render_sha256_b",
    "audit_sha256_a",
    "audit_sha256_b",
)

# Issue 29 — PPTBench's own analyses (its Tables 7-9). Intervals: percentile bootstrap over tasks, the seed of its
# published bootstrap.json (results/bootstrap.json, Einsia/PPTBench d64c09f); Table 7 prints the 15 largest penalties.
PPTBENCH_CI_RESAMPLES = 10_000
PPTBENCH_CI_SEED = 20260816
PPTBENCH_TOP_ISSUES = 15
# The attribution its result files ask for (CC BY 4.0): on every page, table and export built from them.
PPTBENCH_ATTRIBUTION = "PPTBench (Wang et al., 2026), CC BY 4.0"
