"""PPTArena's evaluation section as the reproduction bundle declares it (bt_elo.paper): the rating study's tables and
figures and the gate-review study's. Pure data."""

from __future__ import annotations

from .paper_items import GATE_REVIEW, RATING, FigureItem, Paper, TableItem

PPTARENA = Paper(
    title="PPTArena",
    tables=(
        TableItem(
            "rating-agreement",
            "Human-judge correlation of 0-5 ratings per axis (Table 8)",
            kinds=RATING,
        ),
        TableItem(
            "rating-consistency",
            "Judge consistency over repeated runs: majority agreement and SD (% of the scale)",
            kinds=RATING,
            percent=("majority_agreement",),
            columns=("axis", "judge", "n", "runs", "majority_agreement", "sd_pct"),
        ),
        TableItem(
            "rating-table8",
            "Human-judge correlation, judge majority agreement and SD (%) per axis (Table 8)",
            kinds=RATING,
            percent=("majority_agreement",),
        ),
        TableItem(
            "rating-system-means",
            "Mean 0-5 rating per system, human and judge, overall and per category",
            kinds=RATING,
        ),
        TableItem(
            "rating-cross-judge",
            "Cross-judge ranking check: Kendall tau between judge families' system orders",
            kinds=RATING,
        ),
        TableItem(
            "gate-review-agreement",
            "Human gate review: pairwise agreement and Cohen's kappa, Fleiss' kappa",
            kinds=GATE_REVIEW,
        ),
        TableItem(
            "gate-review-vs-automated",
            "Human gate review against the automated gate per reviewer",
            kinds=GATE_REVIEW,
        ),
    ),
    figures=(
        FigureItem(
            "rating-agreement",
            "Ratings: human-judge correlation and judge majority agreement per axis",
            draw="rating_agreement",
            inputs=("rating-agreement", "rating-consistency"),
            kinds=RATING,
        ),
        FigureItem(
            "rating-categories",
            "Ratings: mean 0-5 rating per system, human and each judge family, overall and per category",
            draw="rating_categories",
            inputs=("rating-system-means",),
            kinds=RATING,
        ),
        FigureItem(
            "gate-confusion",
            "Human gate review against the automated gate: confusion matrix over every review",
            draw="gate_confusion",
            inputs=("gate-reviews",),
            kinds=GATE_REVIEW,
        ),
    ),
)
