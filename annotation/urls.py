from django.urls import path

from . import api, views, views_screening
from .models import StudyKind

app_name = "annotation"

urlpatterns = [
    path("annotate/", views.StudyScreenView.as_view(), name="annotate"),
    path("annotate/img/<str:token>/<str:side>", views.LeaseImageView.as_view(), name="lease-image"),
    path("api/annotate/next/", api.ItemNextApi.as_view(), name="api-next"),
    path("api/annotate/submit/", api.ComparisonSubmitApi.as_view(), name="api-submit"),
    path("api/annotate/skip/", api.LeaseSkipApi.as_view(), name="api-skip"),
    path("api/annotate/undo/", api.ComparisonUndoApi.as_view(), name="api-undo"),
    path("api/annotate/summary/", api.SessionSummaryApi.as_view(), name="api-summary"),
    path("api/annotate/studies/", api.AnnotatorStudiesApi.as_view(), name="api-studies"),
    # The coordinator's pages with the screening kind (views_screening extends views' for it).
    path("coordinate/", views_screening.StudiesView.as_view(), name="coordinate"),
    path("coordinate/<slug:name>/", views_screening.StudyBoardView.as_view(), name="study-dashboard"),
    path("api/studies/", api.StudyListApi.as_view(), name="api-study-list"),
    path("api/studies/<slug:name>/", api.StudyDetailApi.as_view(), name="api-study-detail"),
    path("api/studies/<slug:name>/coverage/", api.StudyCoverageApi.as_view(), name="api-study-coverage"),
    path("annotate/review/", views.GateReviewView.as_view(), name="gate-review"),
    path("annotate/rate/", views.RatingView.as_view(), name="rating"),
    path("annotate/artifact-img/<str:token>/<str:side>", views.ArtifactImageView.as_view(), name="artifact-image"),
    path("annotate/calibration/", views.CalibrationView.as_view(), name="calibration"),
    path(
        "annotate/calibration/img/<str:token>/<str:side>",
        views.CalibrationImageView.as_view(),
        name="calibration-image",
    ),
    path("coordinate/<slug:name>/quality/", views.StudyQualityView.as_view(), name="study-quality"),
    path(
        "coordinate/<slug:name>/quality/img/<int:pk>/<str:side>",
        views.AdjudicationImageView.as_view(),
        name="adjudication-image",
    ),
    # The gate-review, rating and calibration screens' API: the comparison screen's next / submit / skip / undo.
    path("api/annotate/review/next/", api.ArtifactNextApi.as_view(kind=StudyKind.GATE_REVIEW), name="api-review-next"),
    path(
        "api/annotate/review/submit/",
        api.GateReviewSubmitApi.as_view(kind=StudyKind.GATE_REVIEW),
        name="api-review-submit",
    ),
    path("api/annotate/review/skip/", api.ArtifactSkipApi.as_view(kind=StudyKind.GATE_REVIEW), name="api-review-skip"),
    path("api/annotate/review/undo/", api.ArtifactUndoApi.as_view(kind=StudyKind.GATE_REVIEW), name="api-review-undo"),
    path("api/annotate/rate/next/", api.ArtifactNextApi.as_view(kind=StudyKind.RATING), name="api-rate-next"),
    path("api/annotate/rate/submit/", api.RatingSubmitApi.as_view(kind=StudyKind.RATING), name="api-rate-submit"),
    path("api/annotate/rate/skip/", api.ArtifactSkipApi.as_view(kind=StudyKind.RATING), name="api-rate-skip"),
    path("api/annotate/rate/undo/", api.ArtifactUndoApi.as_view(kind=StudyKind.RATING), name="api-rate-undo"),
    path("api/annotate/calibration/next/", api.CalibrationNextApi.as_view(), name="api-calibration-next"),
    path("api/annotate/calibration/answer/", api.CalibrationAnswerApi.as_view(), name="api-calibration-answer"),
    path("api/annotate/calibration/skip/", api.CalibrationSkipApi.as_view(), name="api-calibration-skip"),
    path("api/annotate/calibration/undo/", api.CalibrationUndoApi.as_view(), name="api-calibration-undo"),
    # The screening screen and its API: next / decide / skip / undo, a figure addressed by its signed token.
    path("annotate/screen/", views_screening.ScreeningView.as_view(), name="screening"),
    path("annotate/screen/img/<str:token>", views_screening.ScreeningImageView.as_view(), name="screening-image"),
    path("api/annotate/screen/next/", api.ScreeningNextApi.as_view(), name="api-screen-next"),
    path("api/annotate/screen/decide/", api.ScreeningDecideApi.as_view(), name="api-screen-decide"),
    path("api/annotate/screen/skip/", api.ScreeningSkipApi.as_view(), name="api-screen-skip"),
    path("api/annotate/screen/undo/", api.ScreeningUndoApi.as_view(), name="api-screen-undo"),
    # Last of the annotate/ paths: a study's own screen, by its name.
    path("annotate/<slug:name>/", views.StudyScreenView.as_view(), name="annotate-study"),
]
