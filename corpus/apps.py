from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "corpus"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import study_exchange

        from . import exchange

        study_exchange.register_study_part(
            "corpus", export=exchange.corpus_export, load=exchange.corpus_load, order=study_exchange.ORDER_CORPUS
        )
        from core.tables import register_table

        from . import selectors

        register_table("corpus-stats", selectors.corpus_stats, title="Corpus image statistics (Tables 1, 9)")
        register_table("corpus-fields", selectors.corpus_fields, title="Tasks and file sizes per field (Tables 1, 10)")
