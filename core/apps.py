from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    name = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import roles, tables

        tables.collect_tables()

        post_migrate.connect(roles.role_groups_ensure, dispatch_uid="refig-role-groups")
