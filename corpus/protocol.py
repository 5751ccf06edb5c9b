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
TIE_OUTCOMES: frozenset[str] = frozenset({"tie_success", "tie_failure"})

# Image sizes shown to people: the side-by-side rendering's long edge and every thumbnail's (source figures and slides).
RENDER_LONG_EDGE = 1600
THUMBNAIL_LONG_EDGE = 320
