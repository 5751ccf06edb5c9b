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
