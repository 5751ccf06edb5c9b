"""The one Celery app. Tasks carry explicit names and are routed to `render`, `judge`, `analysis`."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("refig")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
