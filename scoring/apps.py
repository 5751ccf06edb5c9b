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
        from core.tables import register_table

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
            "workflow-economics",
            s.workflow_economics_table,
            title="Workflow economics per model and harness, direct → specialized: median turns, mean cost per "
            "artifact, paired score effect Δ (Table 4)",
            parameters=(*jr, "price_input", "price_output"),
        )
        register_table(
            "effort-sweep",
            s.effort_sweep_table,
            title="Effort sweeps: each family's efforts in order, with the paired change from the effort below",
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
            title="Structural audit per configuration (Tables 3, 15; judge run 1 unless run= says otherwise)",
            parameters=jr,
        )
        register_table(
            "judge-runs", s.judge_runs_table, title="Judge repeatability across runs (Table 18)", parameters=("judge",)
        )
        register_table(
            "judge-families",
            s.judge_families_table,
            title="Configuration means under each judge family (Table 20; each task's mean over runs unless run=N)",
            parameters=("run",),
        )
        register_table("judge-run-status", s.judge_run_summary, title="Judge runs: records ok / failed, cost")
        register_table(
            "pptbench-leaderboard",
            s.pptbench_leaderboard_table,
            title="PPTBench leaderboard (recomputed from scores.csv)",
        )
        register_table(
            "gate-repeatability",
            s.pptbench_gate_repeatability_table,
            title="PPTBench gate repeatability over three judge rounds: unanimous rate, Fleiss' κ, flipped tasks",
        )
        register_table(
            "gate-policies",
            s.pptbench_gate_policies_table,
            title="PPTBench passing tasks and mean score (non-passing = 0) under each gate policy",
        )
        # Issue 16: how settled the automated rankings are (PPTBench's bootstrap.json, reproduced; ReFigBench alike).
        scope = (
            "task-resampling bootstrap, 10,000 draws per sample size (50…500 tasks, with replacement), seed 20260816"
        )
        register_table(
            "pptbench-stability",
            s.pptbench_stability_table,
            title=f"PPTBench ranking stability per sample size: Kendall τ to the full order, top-k sets ({scope})",
        )
        register_table(
            "pptbench-stability-models",
            s.pptbench_stability_models_table,
            title=f"PPTBench per-model 95 % intervals and P(top 3) per sample size ({scope})",
        )
        register_table(
            "pptbench-stability-pairs",
            s.pptbench_stability_pairs_table,
            title=f"PPTBench adjacent pairs: difference interval and rank-flip probability ({scope})",
        )
        figure_scope = (
            "per judge and run and over runs (run 'mean'); resampling source figures scored for every configuration, "
            "10,000 draws per sample size, seed 20260816; gate failures score 0"
        )
        register_table(
            "score-stability",
            s.score_stability_table,
            title=f"Rubric-score ranking stability ({figure_scope})",
            parameters=jr,
        )
        register_table(
            "score-stability-models",
            s.score_stability_models_table,
            title=f"Rubric-score per-configuration intervals and P(top 3) ({figure_scope})",
            parameters=jr,
        )
        register_table(
            "score-stability-pairs",
            s.score_stability_pairs_table,
            title=f"Rubric-score adjacent pairs: difference interval and rank-flip probability ({figure_scope})",
            parameters=jr,
        )
