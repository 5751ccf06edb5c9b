"""Bradley–Terry Elo, judge–human agreement, ranking stability and study-planning tables (declared here, gathered
by core.tables.collect_tables)."""

from core.tables import Table
from corpus.protocol import ELO_BOOTSTRAP_RESAMPLES, ELO_BOOTSTRAP_SEED

STUDY_JUDGE_RUN = ("study", "judge", "run")
PLAN_PARAMETERS = ("configurations", "figures", "strength_spread", "tie_rate", "cluster_sd", "budgets")
PLAN_PARAMETERS += ("simulations", "allocation")

TABLES = (
    Table(
        "elo",
        "bt_elo.selectors.elo_table",
        title="Bradley–Terry Elo with 95 % cluster-bootstrap CIs (Table 16)",
        parameters=STUDY_JUDGE_RUN,
    ),
    Table(
        "rank-probabilities",
        "bt_elo.selectors.rank_probability_table",
        title="Bootstrap distribution of ranks",
        parameters=("study",),
    ),
    Table(
        "win-rates",
        "bt_elo.selectors.win_rate_table",
        title="Win rate of row over column (ties half) and votes per cell",
        parameters=("study",),
    ),
    Table(
        "agreement-margin",
        "bt_elo.selectors.agreement_margin_table",
        title="Judge–human direction agreement by |margin| (Tables 6, 17, 19)",
        parameters=STUDY_JUDGE_RUN,
    ),
    Table(
        "agreement-3class",
        "bt_elo.selectors.agreement_3class_table",
        title="Three-class agreement and Cohen's κ",
        parameters=STUDY_JUDGE_RUN,
    ),
    Table(
        "agreement-matchup",
        "bt_elo.selectors.agreement_matchup_table",
        title="Agreement on within- vs across-pair comparisons",
        parameters=STUDY_JUDGE_RUN,
    ),
    Table("iaa", "bt_elo.selectors.iaa_table", title="Human–human agreement on overlap items", parameters=("study",)),
    Table(
        "weight-sensitivity",
        "bt_elo.selectors.weight_sensitivity_table",
        title="Rubric-weight sensitivity (Table 21; judge run 1 unless run= says otherwise)",
        parameters=STUDY_JUDGE_RUN,
    ),
    Table(
        "weight-sensitivity-effects",
        "bt_elo.selectors.weight_sensitivity_effects_table",
        title="Paired effects under each weight vector (Table 21; judge run 1 unless run= says otherwise)",
        parameters=STUDY_JUDGE_RUN,
    ),
    Table(
        "elo-stability",
        "bt_elo.selectors.elo_stability_table",
        title="Elo ranking stability at 10…100 % of the study's source figures (figures resampled with all their "
        f"counted votes; {ELO_BOOTSTRAP_RESAMPLES:,} refits per fraction, seed {ELO_BOOTSTRAP_SEED})",
        parameters=("study",),
    ),
    Table(
        "elo-adjacent",
        "bt_elo.selectors.elo_adjacent_table",
        title="Adjacent configurations in the Elo order: 95 % cluster-bootstrap difference interval, rank-flip "
        "probability, and votes to separate (Fisher-information projection at the current gap)",
        parameters=("study",),
    ),
    Table(
        "study-plan",
        "bt_elo.selectors.study_plan_table",
        title="Study plan from simulated studies: expected 95 % CI half-width and P(true order) per vote budget "
        "(Bradley–Terry with ties and per-figure effects; sandwich intervals, no bootstrap)",
        parameters=PLAN_PARAMETERS,
    ),
    Table(
        "study-plan-swaps",
        "bt_elo.selectors.study_plan_swaps_table",
        title="Study plan: probability that each truly adjacent pair comes out swapped, per vote budget",
        parameters=PLAN_PARAMETERS,
    ),
)
