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
        from core.tables import register_table

        from . import selectors

        register_table("configurations", selectors.configurations_table, title="Agent configurations")
        register_table(
            "configuration-pairs", selectors.configuration_pairs_frame, title="Configuration pairs (within / across)"
        )
        register_table("artifact-audit", selectors.artifact_audit_frame, title="Gate and object audit per artifact")
        register_table(
            "economics",
            selectors.economics_frame,
            title="Run-log economics (Tables 22–23): effort over recovered logs; cost recorded, or priced from tokens "
            "(price_input / price_output, USD per million tokens) as an upper bound",
            parameters=("price_input", "price_output"),
        )
