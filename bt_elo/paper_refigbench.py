"""ReFigBench's evaluation section as the reproduction bundle declares it (bt_elo.paper): every table, in the paper's
order with its caption, judge run and seed, and every figure the app draws. Pure data."""

from __future__ import annotations

from .paper_items import PAIRWISE, SEED_AGREEMENT, SEED_ELO, SEED_SCORES, FigureItem, Paper, TableItem

STRUCTURAL_SHARES = (
    "share_any_picture",
    "share_largest_ge_85",
    "share_no_connector",
    "share_s_lt_15",
    "share_final_lt_50",
)

REFIGBENCH = Paper(
    title="ReFigBench",
    tables=(
        TableItem("corpus-stats", "Corpus image statistics (Tables 1, 9)"),
        TableItem("corpus-fields", "Tasks and file sizes per source field (Tables 1, 10)", percent=("share",)),
        TableItem(
            "config-scores",
            "Final score per configuration: mean with 95% CI, quartiles, shares, rubric means (Tables 2, 12)",
            seed=SEED_SCORES,
            percent=("share_ge_80", "share_lt_50"),
        ),
        TableItem(
            "rubric-means",
            "Rubric means per configuration with 95% bootstrap CIs, each task's mean over the judge's runs (the "
            "rubric-means figure's data; Tables 2, 12)",
            run="mean",
            seed=SEED_SCORES,
            columns=("configuration", "judge", "axis", "maximum", "n", "mean", "ci_low", "ci_high"),
        ),
        TableItem("paired-effects", "Paired workflow effect, specialized - direct (Table 13)", seed=SEED_SCORES),
        TableItem("harness-effects", "Harness effect within each workflow", seed=SEED_SCORES),
        TableItem("domain-scores", "Scores per source field (Table 14)"),
        TableItem("effort-sweep", "Effort sweeps with the paired change from the effort below", seed=SEED_SCORES),
        TableItem(
            "structural-audit",
            "Structural audit per configuration, judge run 1 (Tables 3, 15)",
            run="1",
            percent=STRUCTURAL_SHARES,
        ),
        TableItem("weight-sensitivity", "Rubric-weight sensitivity, judge run 1 (Table 21)", run="1", seed=SEED_SCORES),
        TableItem(
            "weight-sensitivity-effects",
            "Paired effects under each weight vector, judge run 1 (Table 21)",
            run="1",
            seed=SEED_SCORES,
        ),
        TableItem("economics", "Run-log effort and cost per configuration (Tables 22, 23)"),
        TableItem(
            "workflow-economics",
            "Workflow economics per model and harness, direct to specialized (Table 4)",
            seed=SEED_SCORES,
        ),
        TableItem(
            "elo",
            "Bradley-Terry Elo with 95% cluster-bootstrap CIs (Table 16)",
            seed=SEED_ELO,
            kinds=PAIRWISE,
            columns=("configuration", "elo", "ci_low", "ci_high", "wins", "losses", "ties", "n"),
        ),
        TableItem(
            "agreement-margin",
            "Judge-human direction agreement by |margin| (Tables 6, 17, 19)",
            seed=SEED_AGREEMENT,
            kinds=PAIRWISE,
        ),
        TableItem("agreement-3class", "Three-class agreement and Cohen's kappa (Appendix K)", kinds=PAIRWISE),
        TableItem(
            "agreement-matchup",
            "Agreement on within- vs across-pair comparisons",
            seed=SEED_AGREEMENT,
            kinds=PAIRWISE,
        ),
        TableItem("iaa", "Human-human agreement on overlap items", kinds=PAIRWISE),
        TableItem("judge-runs", "Judge repeatability across runs (Table 18)"),
        TableItem("judge-families", "Configuration means under each judge family (Table 20)"),
    ),
    figures=(
        FigureItem(
            "elo",
            "Human preference Elo by configuration with 95% cluster-bootstrap CIs (Fig. 5)",
            draw="elo",
            inputs=("elo", "configurations"),
            seed=SEED_ELO,
            kinds=PAIRWISE,
        ),
        FigureItem(
            "corpus-fields",
            "Corpus: tasks per source field with their share",
            draw="corpus_fields",
            inputs=("corpus-fields",),
        ),
        FigureItem(
            "corpus-file-size",
            "Corpus: image file size by source field, median (line) and mean (diamond) marked",
            draw="file_size",
            inputs=("corpus-images",),
        ),
        FigureItem(
            "corpus-area",
            "Corpus: decoded image area (megapixels) by percentile, median, P95 and maximum marked (Tables 1, 9)",
            draw="area_percentiles",
            inputs=("corpus-images",),
        ),
        FigureItem(
            "score-distribution",
            "Final score per configuration over tasks (each task's mean over the judge's runs): box P25-P75, median "
            "line, mean marker (Tables 2, 12)",
            draw="score_distribution",
            inputs=("final-scores",),
            one_judge=True,
        ),
        FigureItem(
            "rubric-means",
            "Rubric means per model and harness, direct and specialized side by side, with 95% bootstrap CIs "
            "(each task's mean over the judge's runs; Tables 2, 12)",
            draw="rubric_means",
            inputs=("rubric-means",),
            run="mean",
            seed=SEED_SCORES,
            one_judge=True,
        ),
        FigureItem(
            "workflow-effect",
            "Paired workflow effect (specialized - direct) overall and by rubric component, judge run 1",
            draw="workflow_effect",
            inputs=("paired-effects",),
            run="1",
            seed=SEED_SCORES,
            one_judge=True,
        ),
        FigureItem(
            "agreement-margin",
            "Judge-human direction agreement by |margin|, every judge and run, human-human baseline dashed",
            draw="agreement",
            inputs=("agreement-margin", "iaa"),
            seed=SEED_AGREEMENT,
            kinds=PAIRWISE,
        ),
        FigureItem(
            "coverage",
            "Counted comparisons per configuration pair",
            draw="coverage",
            inputs=("coverage",),
            kinds=PAIRWISE,
        ),
        FigureItem(
            "judge-runs",
            "Configuration means per judge run with ICC(2,1)",
            draw="judge_runs",
            inputs=("judge-runs",),
        ),
    ),
)
