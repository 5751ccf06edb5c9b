from django.urls import path

from . import api

app_name = "core"

urlpatterns = [
    path("api/tables/<str:name>/", api.TableApi.as_view(), name="api-table"),
]
