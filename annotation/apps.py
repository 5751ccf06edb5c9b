from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import study_exchange

        from . import exchange

        study_exchange.register_study_part(
            "annotation", export=exchange.study_export, load=exchange.study_load, order=study_exchange.ORDER_STUDIES
        )
        from core.sample_data import ORDER_STUDIES, register_sample_loader
        from core.tables import register_table

        from . import selectors
        from .sample_data import load_sample_study

        register_sample_loader("annotation", load_sample_study, order=ORDER_STUDIES)

        register_table(
            "comparisons",
            selectors.comparisons_frame,
            title="Human comparisons as battle rows (DESIGN 5)",
            parameters=("study",),
        )
        register_table(
            "coverage",
            selectors.coverage_frame,
            title="Comparisons per configuration pair against target",
            parameters=("study",),
        )
