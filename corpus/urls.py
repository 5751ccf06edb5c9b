from django.urls import path

from . import api, views

app_name = "corpus"

urlpatterns = [
    path("corpus/", views.FigureListView.as_view(), name="figure-list"),
    path("corpus/statistics/", views.CorpusStatisticsView.as_view(), name="statistics"),
    path("corpus/<str:task_id>/", views.FigureDetailView.as_view(), name="figure-detail"),
    path("corpus/<str:task_id>/image", views.FigureImageView.as_view(), name="figure-image"),
    path("api/figures/", api.FigureListApi.as_view(), name="api-figure-list"),
    path("api/figures/<str:task_id>/", api.FigureDetailApi.as_view(), name="api-figure-detail"),
    path("api/figures/<str:task_id>/image/", api.FigureImageApi.as_view(), name="api-figure-image"),
]
