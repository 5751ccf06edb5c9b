from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import study_exchange

        from . import exchange, signals

        signals.connect()

        study_exchange.register_study_part(
            "annotation", export=exchange.study_export, load=exchange.study_load, order=study_exchange.ORDER_STUDIES
        )
