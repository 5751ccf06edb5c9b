from django.apps import AppConfig


class BtEloConfig(AppConfig):
    name = "bt_elo"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Adaptive studies ask bt_elo (which fits the ratings) where their next votes should go.
        from annotation.services.allocation import register_pair_planner

        from . import services

        register_pair_planner(services.adaptive_pair_plan)
