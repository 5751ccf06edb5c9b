"""Human-study tables: comparisons, coverage, annotator quality, gate review, ratings, screening (declared here,
gathered by core.tables.collect_tables)."""

from core.tables import Table

NOTES = ("annotation.selectors.battles.imported_battles_note",)

TABLES = (
    Table(
        "comparisons",
        "annotation.selectors.comparisons_frame",
        title="Human comparisons as battle rows (DESIGN 5)",
        parameters=("study",),
    ),
    Table(
        "coverage",
        "annotation.selectors.coverage_frame",
        title="Comparisons per configuration pair against target",
        parameters=("study",),
    ),
    Table(
        "annotator-quality",
        "annotation.selectors.annotator_quality_frame",
        title="Annotator quality: attention pass rate, swapped-repeat self-consistency, position bias, exclusions",
        parameters=("study",),
    ),
    Table(
        "gate-review-agreement",
        "annotation.selectors.gate_review_agreement_frame",
        title="Human gate review: pairwise agreement and Cohen's κ (failure positive); Fleiss' κ over all reviewers",
        parameters=("study",),
    ),
    Table(
        "gate-review-vs-automated",
        "annotation.selectors.gate_review_vs_automated_frame",
        title="Human gate review against the automated gate: agreement and Cohen's κ per reviewer",
        parameters=("study",),
    ),
    Table(
        "rating-agreement",
        "annotation.selectors.rating_agreement_frame",
        title="Ratings: human mean per artifact against each judge's mean over runs (Spearman, Pearson, MAD)",
        parameters=("study",),
    ),
    Table(
        "rating-consistency",
        "annotation.selectors.rating_consistency_frame",
        title="Ratings: each judge's consistency over runs (share of examples with a majority, SD % of scale)",
        parameters=("study",),
    ),
    Table(
        "rating-table8",
        "annotation.selectors.quality_tables.rating_table8_frame",
        title="PPTArena Table 8: human-judge Spearman / Pearson, judge majority agreement and SD (%) per axis",
        parameters=("study",),
    ),
    Table(
        "rating-system-means",
        "annotation.selectors.quality_tables.rating_system_means_frame",
        title="Ratings: per-configuration mean, human and each judge family, overall and per category",
        parameters=("study",),
    ),
    Table(
        "rating-cross-judge",
        "annotation.selectors.quality_tables.rating_cross_judge_frame",
        title="Ratings: Kendall tau between two judge families' configuration orders, and the ranks that move",
        parameters=("study",),
    ),
    Table(
        "screening-decisions",
        "annotation.selectors.screening_decisions_frame",
        title="Corpus screening: every screener's decision (accept / reject) with its reason, rejections kept",
        parameters=("study",),
    ),
    Table(
        "screening-summary",
        "annotation.selectors.screening_summary_frame",
        title="Corpus screening: accepts, rejects and status per candidate figure (majority; ties undecided)",
        parameters=("study",),
    ),
    Table(
        "screening-agreement",
        "annotation.selectors.screening_agreement_frame",
        title="Corpus screening: pairwise raw agreement and Cohen's κ between screeners on the figures both decided",
        parameters=("study",),
    ),
)
