from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import study_exchange

        from . import exchange

        study_exchange.register_study_part(
            "agents",
            export=exchange.artifacts_export,
            load=exchange.artifacts_load,
            order=study_exchange.ORDER_ARTIFACTS,
        )
