from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import study_exchange

        from . import exchange, signals

        signals.connect()

        study_exchange.register_study_part(
            "annotation", export=exchange.study_export, load=exchange.study_load, order=study_exchange.ORDER_STUDIES
        )
        from core.tables import register_table

        from . import selectors

        register_table(
            "comparisons",
            selectors.comparisons_frame,
            title="Human comparisons as battle rows (DESIGN 5)",
            parameters=("study",),
        )
        register_table(
            "coverage",
            selectors.coverage_frame,
            title="Comparisons per configuration pair against target",
            parameters=("study",),
        )
        register_table(
            "annotator-quality",
            selectors.annotator_quality_frame,
            title="Annotator quality: attention pass rate, swapped-repeat self-consistency, position bias, exclusions",
            parameters=("study",),
        )
        register_table(
            "gate-review-agreement",
            selectors.gate_review_agreement_frame,
            title="Human gate review: pairwise agreement and Cohen's κ (failure positive); Fleiss' κ over all reviewers",
            parameters=("study",),
        )
        register_table(
            "gate-review-vs-automated",
            selectors.gate_review_vs_automated_frame,
            title="Human gate review against the automated gate: agreement and Cohen's κ per reviewer",
            parameters=("study",),
        )
        register_table(
            "rating-agreement",
            selectors.rating_agreement_frame,
            title="Ratings: human mean per artifact against each judge's mean over runs (Spearman, Pearson, MAD)",
            parameters=("study",),
        )
        register_table(
            "rating-consistency",
            selectors.rating_consistency_frame,
            title="Ratings: each judge's consistency over runs (share of examples with a majority, SD % of scale)",
            parameters=("study",),
        )
        from .selectors import quality_tables

        register_table(
            "rating-table8",
            quality_tables.rating_table8_frame,
            title="PPTArena Table 8: human-judge Spearman / Pearson, judge majority agreement and SD (%) per axis",
            parameters=("study",),
        )
        register_table(
            "rating-system-means",
            quality_tables.rating_system_means_frame,
            title="Ratings: per-configuration mean, human and each judge family, overall and per category",
            parameters=("study",),
        )
        register_table(
            "rating-cross-judge",
            quality_tables.rating_cross_judge_frame,
            title="Ratings: Kendall tau between two judge families' configuration orders, and the ranks that move",
            parameters=("study",),
        )
        register_table(
            "screening-decisions",
            selectors.screening_decisions_frame,
            title="Corpus screening: every screener's decision (accept / reject) with its reason, rejections kept",
            parameters=("study",),
        )
        register_table(
            "screening-summary",
            selectors.screening_summary_frame,
            title="Corpus screening: accepts, rejects and status per candidate figure (majority; ties undecided)",
            parameters=("study",),
        )
        register_table(
            "screening-agreement",
            selectors.screening_agreement_frame,
            title="Corpus screening: pairwise raw agreement and Cohen's κ between screeners on the figures both decided",
            parameters=("study",),
        )
