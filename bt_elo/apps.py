from django.apps import AppConfig


class BtEloConfig(AppConfig):
    name = "bt_elo"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from importlib import import_module

        from core.tables import register_table

        class LazySelectors:
            """Resolve selectors at call time, so app loading never imports the other apps' modules."""

            def __getattr__(self, name):
                return lambda **params: getattr(import_module("bt_elo.selectors"), name)(**params)

        s = LazySelectors()

        sjr = ("study", "judge", "run")
        register_table(
            "elo", s.elo_table, title="Bradley–Terry Elo with 95 % cluster-bootstrap CIs (Table 16)", parameters=sjr
        )
        register_table(
            "rank-probabilities",
            s.rank_probability_table,
            title="Bootstrap distribution of ranks",
            parameters=("study",),
        )
        register_table(
            "win-rates",
            s.win_rate_table,
            title="Win rate of row over column (ties half) and votes per cell",
            parameters=("study",),
        )
        register_table(
            "agreement-margin",
            s.agreement_margin_table,
            title="Judge–human direction agreement by |margin| (Tables 6, 17, 19)",
            parameters=sjr,
        )
        register_table(
            "agreement-3class", s.agreement_3class_table, title="Three-class agreement and Cohen's κ", parameters=sjr
        )
        register_table(
            "agreement-matchup",
            s.agreement_matchup_table,
            title="Agreement on within- vs across-pair comparisons",
            parameters=sjr,
        )
        register_table("iaa", s.iaa_table, title="Human–human agreement on overlap items", parameters=("study",))
        register_table(
            "weight-sensitivity",
            s.weight_sensitivity_table,
            title="Rubric-weight sensitivity (Table 21; judge run 1 unless run= says otherwise)",
            parameters=sjr,
        )
        register_table(
            "weight-sensitivity-effects",
            s.weight_sensitivity_effects_table,
            title="Paired effects under each weight vector (Table 21; judge run 1 unless run= says otherwise)",
            parameters=sjr,
        )
        # Issue 16: how settled the human ranking is, where the next votes should go, and how many a study needs.
        register_table(
            "elo-stability",
            s.elo_stability_table,
            title="Elo ranking stability at 10…100 % of the study's source figures (figures resampled with all their "
            "counted votes; 2,000 refits per fraction, seed 20260720)",
            parameters=("study",),
        )
        register_table(
            "elo-adjacent",
            s.elo_adjacent_table,
            title="Adjacent configurations in the Elo order: 95 % cluster-bootstrap difference interval, rank-flip "
            "probability, and votes to separate (Fisher-information projection at the current gap)",
            parameters=("study",),
        )
        plan_parameters = ("configurations", "figures", "strength_spread", "tie_rate", "cluster_sd", "budgets")
        plan_parameters += ("simulations", "allocation")
        register_table(
            "study-plan",
            s.study_plan_table,
            title="Study plan from simulated studies: expected 95 % CI half-width and P(true order) per vote budget "
            "(Bradley–Terry with ties and per-figure effects; sandwich intervals, no bootstrap)",
            parameters=plan_parameters,
        )
        register_table(
            "study-plan-swaps",
            s.study_plan_swaps_table,
            title="Study plan: probability that each truly adjacent pair comes out swapped, per vote budget",
            parameters=plan_parameters,
        )
        # Adaptive studies ask bt_elo (which fits the ratings) where their next votes should go.
        from annotation.services.allocation import register_pair_planner

        from . import services

        register_pair_planner(services.adaptive_pair_plan)
