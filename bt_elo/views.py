import time
from urllib.parse import urlencode

from django.core.cache import cache
from django.http import Http404, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.html import format_html
from django.views.generic import TemplateView, View

from agents import selectors as agent_selectors
from core.errors import AppError
from core.permissions import RoleRequiredMixin
from core.roles import COORDINATOR, RESEARCHER
from core.tables import TABLES, frame_html, table_frame
from scoring import selectors as scoring_selectors

from . import plots, selectors, services, tasks

AUTOMATED_TABLES = (
    "config-scores",
    "paired-effects",
    "harness-effects",
    "domain-scores",
    "structural-audit",
    "judge-runs",
    "judge-families",
    "judge-run-status",
    "pptbench-leaderboard",
)
ELO_TABLES = ("elo", "rank-probabilities", "win-rates", "coverage")
AGREEMENT_TABLES = (
    "agreement-margin",
    "agreement-3class",
    "agreement-matchup",
    "iaa",
    "weight-sensitivity",
    "weight-sensitivity-effects",
)


def _params(request) -> dict:
    return {k: request.GET.get(k) or None for k in ("study", "judge", "run")}


def _table_blocks(names, params, plots_for=None) -> list[dict]:
    blocks = []
    query = urlencode({k: v for k, v in params.items() if v})
    for name in names:
        if name not in TABLES:
            continue
        try:
            frame = table_frame(name, **params)
            html = frame_html(frame)
        except AppError as error:  # no study yet, no judge scores yet: say so in place of the table
            html = format_html("<p>{}</p>", str(error))
        block = {"name": name, "title": TABLES[name].title, "html": html, "query": query}
        if plots_for and name in plots_for:
            plot = reverse("bt_elo:plot", kwargs={"name": plots_for[name], "fmt": "png"})
            block["plot"] = f"{plot}?{query}"
        blocks.append(block)
    return blocks


class ResultsView(RoleRequiredMixin, TemplateView):
    roles = (COORDINATOR, RESEARCHER)
    template_name = "results/tables.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["heading"] = "Automated scores"
        context["intro"] = (
            "Final score s = g·min(Q, c); gate failures count 0 and stay in every mean; artifacts without a judge record are reported as missing. See also /results/elo and /results/agreement."
        )
        context["tables"] = _table_blocks(
            AUTOMATED_TABLES,
            _params(self.request),
            {"config-scores": "scores", "paired-effects": "paired-effects", "judge-runs": "judge-runs"},
        )
        return context


class EloView(RoleRequiredMixin, TemplateView):
    roles = (COORDINATOR, RESEARCHER)
    template_name = "results/tables.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["heading"] = "Bradley–Terry Elo from blinded human comparisons"
        context["intro"] = (
            "Ties count half a win to each side; 95 % intervals from 2,000 cluster-bootstrap refits over source figures (seed 20260720)."
        )
        context["tables"] = _table_blocks(ELO_TABLES, _params(self.request), {"elo": "elo"})
        return context


class AgreementView(RoleRequiredMixin, TemplateView):
    roles = (COORDINATOR, RESEARCHER)
    template_name = "results/tables.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["heading"] = "Judge–human agreement"
        context["intro"] = (
            "Direction agreement on decisive votes; 95 % CIs from 5,000 cluster-bootstrap resamples over figures (seed 20260721). The dashed line is human–human agreement on overlap items."
        )
        context["tables"] = _table_blocks(AGREEMENT_TABLES, _params(self.request), {"agreement-margin": "agreement"})
        return context


def _human_baseline(study):
    try:
        iaa = selectors.iaa_table(study=study)
    except AppError:
        return None
    return float(iaa["raw_agreement"].iloc[0]) if len(iaa) and "raw_agreement" in iaa else None


class PlotView(RoleRequiredMixin, View):
    roles = (COORDINATOR, RESEARCHER)

    def get(self, request, name: str, fmt: str):
        if fmt not in plots.FORMATS:
            raise Http404("format")
        p = _params(request)
        if name == "elo":
            configurations = agent_selectors.configuration_frame().rename(columns={"slug": "configuration"})
            body = plots.elo_plot(selectors.elo_table(study=p["study"]), configurations, fmt)
        elif name == "agreement":
            body = plots.agreement_plot(selectors.agreement_margin_table(**p), _human_baseline(p["study"]), fmt)
        elif name == "scores":
            body = plots.score_distribution_plot(scoring_selectors.scores_frame(judge=p["judge"]), fmt)
        elif name == "judge-runs":
            body = plots.judge_runs_plot(scoring_selectors.judge_runs_table(judge=p["judge"]), fmt)
        elif name == "study-plan":
            try:
                plan = selectors.study_plan(**request.GET.dict())
            except AppError as error:  # a hand-edited query: say what is wrong, in the image's place
                return HttpResponse(plots.empty_plot(error.detail, fmt), content_type=plots.FORMATS[fmt], status=400)
            body = plots.study_plan_plot(plan.summary, plan.swaps, fmt)
        elif name == "paired-effects":
            body = plots.paired_effects_plot(
                scoring_selectors.paired_effects_table(judge=p["judge"], run=p["run"]), fmt
            )
        else:
            raise Http404("unknown plot")
        response = HttpResponse(body, content_type=plots.FORMATS[fmt])
        if request.GET.get("download"):
            response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
        return response


class LiveLeaderboardView(RoleRequiredMixin, View):
    """Cached Elo for the coordinator dashboard; a stale or missing cache is refreshed on the analysis queue."""

    roles = (COORDINATOR, RESEARCHER)

    def get(self, request):
        study = request.GET.get("study") or None
        payload = cache.get(services.leaderboard_key(study))
        if payload is None or time.time() - payload["computed_at"] > services.LEADERBOARD_STALE_SECONDS:
            try:
                tasks.leaderboard_refresh.delay(study)
            except AppError as error:
                return JsonResponse({"status": "unavailable", "detail": str(error), "rows": []})
            payload = cache.get(services.leaderboard_key(study)) or payload
        if payload is None:
            return JsonResponse({"status": "computing", "rows": []})
        return JsonResponse({"status": "ok", **payload})


class StabilityPanelView(RoleRequiredMixin, View):
    """The dashboard's stability panel: elo-adjacent rows and the study's stopping rule (cached per vote set)."""

    roles = (COORDINATOR, RESEARCHER)

    def get(self, request):
        try:
            panel = selectors.stability_panel(study=request.GET.get("study") or None)
        except AppError as error:
            return JsonResponse({"error": error.code, "detail": error.detail}, status=error.status)
        return JsonResponse(panel)
