from django.urls import path

from . import views

app_name = "bt_elo"

urlpatterns = [
    path("results/", views.ResultsView.as_view(), name="results"),
    path("results/elo", views.EloView.as_view(), name="elo"),
    path("results/elo/live.json", views.LiveLeaderboardView.as_view(), name="live-leaderboard"),
    path("results/elo/stability.json", views.StabilityPanelView.as_view(), name="stability-panel"),
    path("results/agreement", views.AgreementView.as_view(), name="agreement"),
    path("results/plot/<str:name>.<str:fmt>", views.PlotView.as_view(), name="plot"),
    path("results/paper/<str:paper>.zip", views.PaperBundleView.as_view(), name="paper-bundle"),
    path("results/release/<str:study>.zip", views.ReleaseDownloadView.as_view(), name="release-download"),
]
