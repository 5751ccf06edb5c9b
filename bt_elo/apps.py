from django.apps import AppConfig


class BtEloConfig(AppConfig):
    name = "bt_elo"
    default_auto_field = "django.db.models.BigAutoField"
