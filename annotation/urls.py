from django.urls import path

from . import api, views

app_name = "annotation"

urlpatterns = [
    path("annotate/", views.AnnotateView.as_view(), name="annotate"),
    path("annotate/img/<str:token>/<str:side>", views.LeaseImageView.as_view(), name="lease-image"),
    path("annotate/<slug:name>/", views.AnnotateView.as_view(), name="annotate-study"),
    path("api/annotate/next/", api.ItemNextApi.as_view(), name="api-next"),
    path("api/annotate/submit/", api.ComparisonSubmitApi.as_view(), name="api-submit"),
    path("api/annotate/skip/", api.LeaseSkipApi.as_view(), name="api-skip"),
    path("api/annotate/undo/", api.ComparisonUndoApi.as_view(), name="api-undo"),
    path("api/annotate/summary/", api.SessionSummaryApi.as_view(), name="api-summary"),
    path("api/annotate/studies/", api.AnnotatorStudiesApi.as_view(), name="api-studies"),
    path("coordinate/", views.CoordinateView.as_view(), name="coordinate"),
    path("coordinate/<slug:name>/", views.StudyDashboardView.as_view(), name="study-dashboard"),
    path("api/studies/", api.StudyListApi.as_view(), name="api-study-list"),
    path("api/studies/<slug:name>/", api.StudyDetailApi.as_view(), name="api-study-detail"),
    path("api/studies/<slug:name>/coverage/", api.StudyCoverageApi.as_view(), name="api-study-coverage"),
]
