from django.urls import path

from . import api, views

app_name = "agents"

urlpatterns = [
    path("artifacts/", views.ConfigurationOverviewView.as_view(), name="overview"),
    path("artifacts/item/<int:pk>/", views.ArtifactDetailView.as_view(), name="artifact-detail"),
    path("artifacts/item/<int:pk>/<str:kind>", views.ArtifactRenderView.as_view(), name="artifact-file"),
    path("artifacts/<slug:slug>/", views.ArtifactListView.as_view(), name="artifact-list"),
    path("api/configurations/", api.ConfigurationListApi.as_view(), name="api-configuration-list"),
    path("api/artifacts/", api.ArtifactListApi.as_view(), name="api-artifact-list"),
    path("api/artifacts/<int:pk>/", api.ArtifactDetailApi.as_view(), name="api-artifact-detail"),
]
