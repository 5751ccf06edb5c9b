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
