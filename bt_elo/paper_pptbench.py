"""PPTBench's evaluation section as the reproduction bundle declares it (bt_elo.paper), and the draw functions of its
figures (mixed into bt_elo.paper.Figures). Every table and figure built from PPTBench's released results carries
its attribution, "PPTBench (Wang et al., 2026), CC BY 4.0" (the tables in their notes, the figures in a corner).
Pure: no Django; matplotlib is imported when a figure is drawn."""

from __future__ import annotations

from corpus.protocol import (
    PPTBENCH_CI_RESAMPLES,
    PPTBENCH_CI_SEED,
    STABILITY_ITERATIONS,
    STABILITY_SEED,
)

from .paper_items import GATE_REVIEW, FigureItem, Paper, TableItem

SEED_PPTBENCH = f"seed {PPTBENCH_CI_SEED}, {PPTBENCH_CI_RESAMPLES:,} bootstrap resamples over tasks"
SEED_STABILITY = f"seed {STABILITY_SEED}, {STABILITY_ITERATIONS:,} task-resampling draws per sample size"

PPTBENCH = Paper(
    title="PPTBench",
    tables=(
        TableItem("pptbench-leaderboard", "Leaderboard per configuration, recomputed from scores.csv"),
        TableItem(
            "pptbench-generation",
            "Generation metrics: valid artifacts, failed tasks, tokens and cost per configuration",
            columns=("candidate_id", "valid", "failed_tasks", "total_tokens", "total_cost_usd", "usage_status"),
        ),
        TableItem(
            "pptbench-judge-repeatability",
            "Gate repeatability per judge: unanimous rate, Fleiss' kappa, flipped cases (Table 3)",
            percent=("unanimous_rate", "gate_rate"),
        ),
        TableItem(
            "gate-repeatability",
            "Gate repeatability over the three judge rounds per configuration, from gate_count",
            percent=("unanimous_rate",),
        ),
        TableItem("pptbench-issue-penalties", "Largest aggregate detail penalties (Table 7)"),
        TableItem(
            "pptbench-high-vs-highest",
            "High versus highest effort on the tasks both pass: N, Delta detail (95% CI), Delta pass rate (Table 8)",
            seed=SEED_PPTBENCH,
        ),
        TableItem(
            "pptbench-menus",
            "Aggregate score under configuration menus: mean (95% CI), median (Table 9)",
            seed=SEED_PPTBENCH,
        ),
        TableItem("pptbench-process-correlations", "Mean score against review and revision turns (Table 10)"),
        TableItem("pptbench-domains", "Results per domain (Table 10)", percent=("pass_rate",)),
        TableItem("gate-policies", "Passing tasks and mean score under each gate vote (Table 12)"),
        TableItem("pptbench-effort-sweep", "Effort sweeps by family (Figure 5)", percent=("gate_pass_rate",)),
        TableItem(
            "pptbench-outcomes",
            "Outcome shares per configuration and model (Figure 6)",
            percent=("artifact_failure", "gate_failure", "pass"),
        ),
        TableItem("pptbench-gate-rounds", "Judge rounds triggering a hard gate (Figure 4, left)", percent=("share",)),
        TableItem("pptbench-stability", "Ranking stability per sample size (Figure 11)", seed=SEED_STABILITY),
        TableItem(
            "pptbench-stability-models", "Per-model 95% intervals and P(top 3) per sample size", seed=SEED_STABILITY
        ),
        TableItem(
            "pptbench-stability-pairs",
            "Adjacent pairs: difference interval and rank-flip probability",
            seed=SEED_STABILITY,
        ),
        TableItem(
            "gate-review-agreement",
            "Human gate review: pairwise agreement and Cohen's kappa, Fleiss' kappa",
            kinds=GATE_REVIEW,
        ),
        TableItem(
            "gate-review-vs-automated", "Human gate review against the automated gate per reviewer", kinds=GATE_REVIEW
        ),
    ),
    figures=(
        FigureItem(
            "pptbench-gate-rounds",
            "Judge rounds triggering a hard gate, share of every (task, configuration) (Figure 4, left)",
            draw="pptbench_gate_rounds",
            inputs=("pptbench-gate-rounds",),
        ),
        FigureItem(
            "pptbench-effort-sweep",
            "Effort sweeps by family: mean score, gate-pass rate, mean on passed tasks (Figure 5)",
            draw="pptbench_effort_sweep",
            inputs=("pptbench-effort-sweep",),
        ),
        FigureItem(
            "pptbench-outcomes",
            "Outcomes by model averaged over efforts, each configuration's pass rate marked (Figure 6)",
            draw="pptbench_outcomes",
            inputs=("pptbench-outcomes",),
        ),
        FigureItem(
            "pptbench-stability",
            "Kendall tau to the full ranking with its 5-95% band, and exact top-k recovery, over sample sizes "
            "(Figure 11)",
            draw="pptbench_stability",
            inputs=("pptbench-stability",),
            seed=SEED_STABILITY,
        ),
        FigureItem(
            "gate-confusion",
            "Human gate review against the automated gate: confusion matrix (Figure 10c)",
            draw="gate_confusion",
            inputs=("gate-reviews",),
            kinds=GATE_REVIEW,
        ),
    ),
)


class PptbenchFigures:
    """PPTBench's draw functions, by FigureItem.draw (bt_elo.paper.Figures inherits them)."""

    @staticmethod
    def pptbench_gate_rounds(rounds, fmt="pdf"):
        from . import pptbench_plots

        return pptbench_plots.gate_rounds_plot(rounds, fmt)

    @staticmethod
    def pptbench_effort_sweep(sweep, fmt="pdf"):
        from . import pptbench_plots

        return pptbench_plots.effort_sweep_plot(sweep, fmt)

    @staticmethod
    def pptbench_outcomes(outcomes, fmt="pdf"):
        from . import pptbench_plots

        return pptbench_plots.outcomes_plot(outcomes, fmt)

    @staticmethod
    def pptbench_stability(stability, fmt="pdf"):
        from . import pptbench_plots

        return pptbench_plots.stability_plot(stability, fmt)
