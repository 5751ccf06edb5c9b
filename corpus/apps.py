from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CorpusConfig(AppConfig):
    name = "corpus"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import roles, tables

        post_migrate.connect(roles.role_groups_ensure, dispatch_uid="refig-role-groups")
        tables.register_corpus_tables()
