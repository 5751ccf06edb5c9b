from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import study_exchange

        from . import exchange

        study_exchange.register_study_part(
            "scoring",
            export=exchange.judge_records_export,
            load=exchange.judge_records_load,
            order=study_exchange.ORDER_SCORES,
        )
        from core.sample_data import ORDER_SCORES, register_sample_loader
        from core.tables import register_table

        from .sample_data import load_pptbench_sample

        register_sample_loader("scoring", load_pptbench_sample, order=ORDER_SCORES)

        from . import selectors as s

        jr = ("judge", "run")
        register_table(
            "final-scores",
            s.final_scores_table,
            title="Final score s = g·min(Q, c) per artifact and judge run",
            parameters=jr,
        )
        register_table(
            "config-scores", s.config_scores_table, title="Scores per configuration (Tables 2, 12)", parameters=jr
        )
        register_table(
            "paired-effects",
            s.paired_effects_table,
            title="Workflow effect, specialized − direct (Table 13)",
            parameters=jr,
        )
        register_table(
            "harness-effects", s.harness_effects_table, title="Harness effect within each workflow", parameters=jr
        )
        register_table(
            "domain-scores", s.domain_scores_table, title="Scores per source field (Table 14)", parameters=jr
        )
        register_table(
            "structural-audit",
            s.structural_audit_table,
            title="Structural audit per configuration (Tables 3, 15)",
            parameters=("judge",),
        )
        register_table(
            "judge-runs", s.judge_runs_table, title="Judge repeatability across runs (Table 18)", parameters=("judge",)
        )
        register_table(
            "judge-families", s.judge_families_table, title="Configuration means under each judge family (Table 20)"
        )
        register_table("judge-run-status", s.judge_run_summary, title="Judge runs: records ok / failed, cost")
        register_table(
            "pptbench-leaderboard",
            s.pptbench_leaderboard_table,
            title="PPTBench leaderboard (recomputed from scores.csv)",
        )
