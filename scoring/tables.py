"""Rubric-score, judge and PPTBench tables (declared here, gathered by core.tables.collect_tables)."""

from core.tables import Table
from corpus.protocol import STABILITY_ITERATIONS, STABILITY_SAMPLE_SIZES, STABILITY_SEED

JUDGE_RUN = ("judge", "run")
PPTBENCH_SOURCE = ("source",)  # published scores.csv rows (default) or a PPTBench judge run, "<judge>/<run>"
PPTBENCH_SCOPE = (
    f"task-resampling bootstrap, {STABILITY_ITERATIONS:,} draws per sample size "
    f"({STABILITY_SAMPLE_SIZES[0]}…{STABILITY_SAMPLE_SIZES[-1]} tasks, with replacement), seed {STABILITY_SEED}"
)
FIGURE_SCOPE = (
    "per judge and run and over runs (run 'mean'); resampling source figures scored for every configuration, "
    f"{STABILITY_ITERATIONS:,} draws per sample size, seed {STABILITY_SEED}; gate failures score 0"
)

TABLES = (
    Table(
        "final-scores",
        "scoring.selectors.final_scores_table",
        title="Final score s = g·min(Q, c) per artifact and judge run",
        parameters=JUDGE_RUN,
    ),
    Table(
        "config-scores",
        "scoring.selectors.config_scores_table",
        title="Scores per configuration (Tables 2, 12)",
        parameters=JUDGE_RUN,
    ),
    Table(
        "paired-effects",
        "scoring.selectors.paired_effects_table",
        title="Workflow effect, specialized − direct (Table 13)",
        parameters=JUDGE_RUN,
    ),
    Table(
        "rubric-means",
        "scoring.selectors.rubric_means_table",
        title="Rubric means per configuration and axis with 95% bootstrap CIs (Tables 2, 12; the rubric-means figure)",
        parameters=JUDGE_RUN,
    ),
    Table(
        "workflow-economics",
        "scoring.selectors.workflow_economics_table",
        title="Workflow economics per model and harness, direct → specialized: median turns, mean cost per "
        "artifact, paired score effect Δ (Table 4)",
        parameters=(*JUDGE_RUN, "price_input", "price_output"),
    ),
    Table(
        "effort-sweep",
        "scoring.selectors.effort_sweep_table",
        title="Effort sweeps: each family's efforts in order, with the paired change from the effort below",
        parameters=JUDGE_RUN,
    ),
    Table(
        "harness-effects",
        "scoring.selectors.harness_effects_table",
        title="Harness effect within each workflow",
        parameters=JUDGE_RUN,
    ),
    Table(
        "domain-scores",
        "scoring.selectors.domain_scores_table",
        title="Scores per source field (Table 14)",
        parameters=JUDGE_RUN,
    ),
    Table(
        "structural-audit",
        "scoring.selectors.structural_audit_table",
        title="Structural audit per configuration (Tables 3, 15; judge run 1 unless run= says otherwise)",
        parameters=JUDGE_RUN,
    ),
    Table(
        "judge-runs",
        "scoring.selectors.judge_runs_table",
        title="Judge repeatability across runs (Table 18)",
        parameters=("judge",),
    ),
    Table(
        "judge-families",
        "scoring.selectors.judge_families_table",
        title="Configuration means under each judge family (Table 20; each task's mean over runs unless run=N)",
        parameters=("run",),
    ),
    Table("judge-run-status", "scoring.selectors.judge_run_summary", title="Judge runs: records ok / failed, cost"),
    Table(
        "pptbench-leaderboard",
        "scoring.pptbench_selectors.leaderboard_table",
        title="PPTBench leaderboard (recomputed from scores.csv)",
        parameters=PPTBENCH_SOURCE,
    ),
    Table(
        "gate-repeatability",
        "scoring.pptbench_selectors.gate_repeatability_table",
        title="PPTBench gate repeatability over three judge rounds: unanimous rate, Fleiss' κ, flipped tasks",
        parameters=PPTBENCH_SOURCE,
    ),
    Table(
        "gate-policies",
        "scoring.pptbench_selectors.gate_policies_table",
        title="PPTBench passing tasks and mean score (non-passing = 0) under each gate policy",
        parameters=PPTBENCH_SOURCE,
    ),
    Table(
        "pptbench-stability",
        "scoring.pptbench_selectors.stability_table",
        title=f"PPTBench ranking stability per sample size: Kendall τ to the full order, top-k sets ({PPTBENCH_SCOPE})",
    ),
    Table(
        "pptbench-stability-models",
        "scoring.pptbench_selectors.stability_models_table",
        title=f"PPTBench per-model 95 % intervals and P(top 3) per sample size ({PPTBENCH_SCOPE})",
    ),
    Table(
        "pptbench-stability-pairs",
        "scoring.pptbench_selectors.stability_pairs_table",
        title=f"PPTBench adjacent pairs: difference interval and rank-flip probability ({PPTBENCH_SCOPE})",
    ),
    # Issue 29: PPTBench's own analyses (scoring.pptbench_tables), each attributed to PPTBench (CC BY 4.0).
    Table(
        "pptbench-issue-penalties",
        "scoring.pptbench_selectors.issue_penalties_table",
        title="PPTBench largest aggregate detail penalties by issue type (paper Table 7)",
    ),
    Table(
        "pptbench-high-vs-highest",
        "scoring.pptbench_selectors.high_vs_highest_table",
        title="PPTBench high versus highest effort on the tasks both pass: N, Δ detail (95 % CI), Δ pass rate (Table 8)",
        parameters=PPTBENCH_SOURCE,
    ),
    Table(
        "pptbench-menus",
        "scoring.pptbench_selectors.configuration_menus_table",
        title="PPTBench aggregate score under configuration menus: mean (95 % CI), median (paper Table 9)",
        parameters=PPTBENCH_SOURCE,
    ),
    Table(
        "pptbench-gate-rounds",
        "scoring.pptbench_selectors.gate_rounds_table",
        title="PPTBench judge rounds triggering a hard gate (paper Figure 4, left)",
        parameters=PPTBENCH_SOURCE,
    ),
    Table(
        "pptbench-effort-sweep",
        "scoring.pptbench_selectors.effort_sweep_table",
        title="PPTBench effort sweeps: mean score, gate-pass rate, mean on passed tasks (paper Figure 5)",
        parameters=PPTBENCH_SOURCE,
    ),
    Table(
        "pptbench-outcomes",
        "scoring.pptbench_selectors.outcomes_table",
        title="PPTBench outcomes per configuration and model: artifact failure, gate failure, pass (paper Figure 6)",
        parameters=PPTBENCH_SOURCE,
    ),
    Table(
        "pptbench-generation",
        "scoring.pptbench_selectors.generation_table",
        title="PPTBench generation metrics: valid artifacts, failed tasks, tokens, cost",
    ),
    Table(
        "pptbench-judge-repeatability",
        "scoring.pptbench_selectors.judge_repeatability_table",
        title="PPTBench gate repeatability per judge: unanimous rate, Fleiss' κ, flipped cases (paper Table 3)",
    ),
    Table(
        "pptbench-process-correlations",
        "scoring.pptbench_selectors.process_correlations_table",
        title="PPTBench mean score against review and revision turns (paper Table 10)",
    ),
    Table(
        "pptbench-domains",
        "scoring.pptbench_selectors.domain_results_table",
        title="PPTBench results per domain (paper Table 10)",
    ),
    Table(
        "pptbench-detail-sensitivity",
        "scoring.pptbench_judge_selectors.pptbench_detail_sensitivity_table",
        title="PPTBench detail-policy variants against the published policy: Kendall τ, median and largest change of "
        "configuration means, reversed pairs (paper Table 13; from a PPTBench judge run's stored findings)",
        parameters=PPTBENCH_SOURCE,
    ),
    Table(
        "score-stability",
        "scoring.selectors.score_stability_table",
        title=f"Rubric-score ranking stability ({FIGURE_SCOPE})",
        parameters=JUDGE_RUN,
    ),
    Table(
        "score-stability-models",
        "scoring.selectors.score_stability_models_table",
        title=f"Rubric-score per-configuration intervals and P(top 3) ({FIGURE_SCOPE})",
        parameters=JUDGE_RUN,
    ),
    Table(
        "score-stability-pairs",
        "scoring.selectors.score_stability_pairs_table",
        title=f"Rubric-score adjacent pairs: difference interval and rank-flip probability ({FIGURE_SCOPE})",
        parameters=JUDGE_RUN,
    ),
)
