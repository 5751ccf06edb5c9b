from urllib.parse import urlencode

from django.http import Http404, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.html import format_html
from django.views.generic import TemplateView, View

from agents import selectors as agent_selectors
from annotation import selectors as annotation_selectors
from core.errors import AppError, NotFound
from core.permissions import RoleRequiredMixin
from core.roles import COORDINATOR, RESEARCHER
from core.tables import TABLES, frame_html, table_frame
from scoring import selectors as scoring_selectors

from . import selectors, services, tasks

AUTOMATED_TABLES = (
    "config-scores",
    "paired-effects",
    "effort-sweep",
    "harness-effects",
    "domain-scores",
    "structural-audit",
    "judge-runs",
    "judge-families",
    "judge-run-status",
    "pptbench-leaderboard",
    "gate-repeatability",
    "gate-policies",
    "pptbench-generation",
    "pptbench-issue-penalties",
    "pptbench-high-vs-highest",
    "pptbench-menus",
    "pptbench-outcomes",
    "pptbench-stability",
    "pptbench-stability-pairs",
    "score-stability",
    "score-stability-pairs",
)
ELO_TABLES = ("elo", "rank-probabilities", "win-rates", "coverage", "elo-stability", "elo-adjacent")
# The tables a gate-review or rating study has (the others are about pairwise votes, which such a study has none of).
TABLES_OF_STUDY_KIND = {
    "gate_review": ("gate-review-agreement", "gate-review-vs-automated"),
    "rating": ("rating-agreement", "rating-consistency"),
}
AGREEMENT_TABLES = (
    "agreement-margin",
    "agreement-3class",
    "agreement-matchup",
    "iaa",
    "weight-sensitivity",
    "weight-sensitivity-effects",
    "annotator-quality",
    "gate-review-agreement",
    "gate-review-vs-automated",
    "rating-agreement",
    "rating-consistency",
)


def _plots():
    """The plot module, imported with the first plot: matplotlib costs about 0.6 s at every process start otherwise."""
    from . import plots

    return plots


# Which plot draws which table, on the pages and at /results/plot/<name>.<fmt>.
PLOT_OF_TABLE = {
    "config-scores": "scores",
    "paired-effects": "paired-effects",
    "judge-runs": "judge-runs",
    "elo": "elo",
    "coverage": "coverage",
    "agreement-margin": "agreement",
}
PLOTS_NEEDING_STUDY = ("elo", "coverage", "agreement")


def study_choice(request, kinds: tuple[str, ...] | None = None) -> tuple[str | None, list[str]]:
    """The study the results are about: ?study= when it names one, else the latest study (of these kinds) with data,
    or the only one; None when there is none (the page asks). With every study's name for the picker."""
    names = list(annotation_selectors.study_list().values_list("name", flat=True))
    chosen = request.GET.get("study") or None
    if chosen not in names:
        chosen = annotation_selectors.study_with_data(kinds=kinds)
    return chosen, names


def _params(request, kinds: tuple[str, ...] | None = None) -> dict:
    params = {k: request.GET.get(k) or None for k in ("judge", "run")}
    params["study"] = study_choice(request, kinds)[0]
    return params


def _table_blocks(names, params) -> list[dict]:
    blocks = []
    for name in names:
        if name not in TABLES:
            continue
        # Downloads carry only what the table takes: the table API refuses a parameter a table does not take.
        query = urlencode({k: v for k, v in params.items() if v and k in TABLES[name].parameters})
        needs_study = "study" in TABLES[name].parameters and name not in AUTOMATED_TABLES
        if needs_study and not params.get("study"):
            blocks.append({"name": name, "title": TABLES[name].title, "html": "", "query": query, "needs_study": True})
            continue
        notes = []
        try:
            frame = table_frame(name, **params)
            html = frame_html(frame)
            notes = frame.attrs.get("notes", [])  # what the table includes and excludes, and why
        except AppError as error:  # no study yet, no judge scores yet: say so in place of the table
            html = format_html("<p>{}</p>", str(error))
        block = {"name": name, "title": TABLES[name].title, "html": html, "query": query, "notes": notes}
        if name in PLOT_OF_TABLE:
            plot = PLOT_OF_TABLE[name]
            block["plot"] = {
                fmt: reverse("bt_elo:plot", kwargs={"name": plot, "fmt": fmt}) + f"?{query}" for fmt in _plots().FORMATS
            }
        blocks.append(block)
    return blocks


class ResultsPage(RoleRequiredMixin, TemplateView):
    """A results page: tables of the chosen study (the picker is shared by every page), each with its downloads."""

    roles = (COORDINATOR, RESEARCHER)
    template_name = "results/tables.html"
    heading = intro = ""
    tables: tuple[str, ...] = ()
    page = ""
    study_kinds: tuple[str, ...] | None = None  # the kinds of study this page is about, to open on one with data

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        study, names = study_choice(self.request, self.study_kinds)
        params = _params(self.request, self.study_kinds)
        context.update(
            heading=self.heading,
            intro=self.intro,
            page=self.page,
            study=study,
            study_names=names,
            study_query=urlencode({"study": study}) if study else "",
            tables=_table_blocks(self._tables_for(study), params),
        )
        return context

    def _tables_for(self, study: str | None) -> tuple[str, ...]:
        """Only the tables that apply to the study's kind: a pairwise study has none of the gate-review or rating
        tables, and those studies have only their own."""
        kind = annotation_selectors.study_kind(study=study) if study else None
        if kind in TABLES_OF_STUDY_KIND:
            return tuple(name for name in self.tables if name in TABLES_OF_STUDY_KIND[kind])
        other_kinds = {name for names in TABLES_OF_STUDY_KIND.values() for name in names}
        return tuple(name for name in self.tables if name not in other_kinds)


class ResultsView(ResultsPage):
    heading = "Automated scores"
    intro = (
        "Final score s = g·min(Q, c); gate failures count 0 and stay in every mean; artifacts without a judge record "
        "are reported as missing. These tables cover every artifact of the corpus, whatever the study."
    )
    tables = AUTOMATED_TABLES
    page = "results"


class EloView(ResultsPage):
    heading = "Bradley–Terry Elo from blinded human comparisons"
    intro = (
        "The chosen study's counted votes only (withdrawn and superseded votes excluded). Ties count half a win to "
        "each side; 95 % intervals from 2,000 cluster-bootstrap refits over source figures (seed 20260720)."
    )
    tables = ELO_TABLES
    page = "elo"
    study_kinds = ("pairwise",)


class AgreementView(ResultsPage):
    heading = "Judge–human agreement"
    intro = (
        "The chosen study's counted votes against every judge run. Direction agreement on decisive votes; 95 % CIs "
        "from 5,000 cluster-bootstrap resamples over figures (seed 20260721). The dashed line is human–human "
        "agreement on overlap items."
    )
    tables = AGREEMENT_TABLES
    page = "agreement"


def _human_baseline(study):
    try:
        iaa = selectors.iaa_table(study=study)
    except AppError:
        return None
    return float(iaa["raw_agreement"].iloc[0]) if len(iaa) and "raw_agreement" in iaa else None


class PlotView(RoleRequiredMixin, View):
    roles = (COORDINATOR, RESEARCHER)

    def get(self, request, name: str, fmt: str):
        if fmt not in _plots().FORMATS:
            raise Http404("format")
        p = _params(request)
        asked = request.GET.get("study")
        if asked and asked != p["study"]:  # a plot is a link to one study's figure: an unknown name is not found
            raise Http404("no such study")
        if name in PLOTS_NEEDING_STUDY and not p["study"]:
            raise Http404("name a study with ?study=")
        try:
            body = self._study_plan(request, fmt) if name == "study-plan" else self.draw(name, p, fmt)
        except NotFound as error:  # an unknown study or judge
            raise Http404(error.detail) from None
        except AppError as error:  # no data to draw yet: say so in the image
            body = _plots().message_plot(str(error), fmt)
        response = HttpResponse(body, content_type=_plots().FORMATS[fmt])
        if request.GET.get("download"):
            suffix = f"-{p['study']}" if p["study"] and name in PLOTS_NEEDING_STUDY else ""
            response["Content-Disposition"] = f'attachment; filename="{name}{suffix}.{fmt}"'
        return response

    @staticmethod
    def _study_plan(request, fmt: str) -> bytes:
        plan = selectors.study_plan(**request.GET.dict())  # the planner's query (its bounds checked there)
        return _plots().study_plan_plot(plan.summary, plan.swaps, fmt)

    @staticmethod
    def draw(name: str, p: dict, fmt: str) -> bytes:
        if name == "elo":
            configurations = agent_selectors.configuration_frame().rename(columns={"slug": "configuration"})
            return _plots().elo_plot(selectors.elo_table(study=p["study"]), configurations, fmt)
        if name == "coverage":
            return _plots().coverage_plot(annotation_selectors.coverage_frame(study=p["study"]), fmt)
        if name == "agreement":
            return _plots().agreement_plot(selectors.agreement_margin_table(**p), _human_baseline(p["study"]), fmt)
        if name == "scores":
            return _plots().score_distribution_plot(scoring_selectors.scores_frame(judge=p["judge"]), fmt)
        if name == "judge-runs":
            return _plots().judge_runs_plot(scoring_selectors.judge_runs_table(judge=p["judge"]), fmt)
        if name == "paired-effects":
            return _plots().paired_effects_plot(
                scoring_selectors.paired_effects_table(judge=p["judge"], run=p["run"]), fmt
            )
        from .paper import Unsupported, figure_draw

        try:  # a figure of a paper's reproduction bundle, drawn as the bundle draws it
            return figure_draw(name, fmt=fmt, study=p["study"], judge=p["judge"])
        except LookupError:
            raise Http404("unknown plot") from None
        except Unsupported as error:  # e.g. a rating figure asked of a pairwise study: say so in the image
            return _plots().message_plot(str(error), fmt)


class LiveLeaderboardView(RoleRequiredMixin, View):
    """The coordinator dashboard's leaderboard: the study's one Elo computation (the elo table's numbers). When the
    votes changed since it was last computed, one refresh is queued on the analysis queue (never two at once) and
    the page polls until it lands."""

    roles = (COORDINATOR, RESEARCHER)

    def get(self, request):
        study = request.GET.get("study") or None
        try:
            elo = selectors.study_elo(study=study, cached_only=True)
            if elo is None:
                signature = annotation_selectors.votes_signature(study=study)
                if services.leaderboard_refresh_claim(study=signature[0]):
                    tasks.leaderboard_refresh.delay(signature[0])
                elo = selectors.study_elo(study=study, cached_only=True)
        except AppError as error:
            return JsonResponse({"status": "unavailable", "detail": str(error), "rows": []}, status=error.status)
        if elo is None:
            return JsonResponse({"status": "computing", "rows": []})
        return JsonResponse(selectors.leaderboard(elo))


class StabilityPanelView(RoleRequiredMixin, View):
    """The dashboard's stability panel: elo-adjacent rows and the study's stopping rule (cached per vote set)."""

    roles = (COORDINATOR, RESEARCHER)

    def get(self, request):
        try:
            panel = selectors.stability_panel(study=request.GET.get("study") or None)
        except AppError as error:
            return JsonResponse({"error": error.code, "detail": error.detail}, status=error.status)
        return JsonResponse(panel)


class PaperBundleView(RoleRequiredMixin, View):
    """A paper's reproduction bundle (the `paper` command's tables, figures and REPRODUCTION.md) as one .zip, for
    the chosen study (?study=)."""

    roles = (COORDINATOR, RESEARCHER)

    def get(self, request, paper: str):
        import tempfile
        from pathlib import Path

        from .paper import PAPERS, build_bundle, bundle_zip

        if paper not in PAPERS:
            raise Http404("unknown paper")
        study = request.GET.get("study") or None
        with tempfile.TemporaryDirectory(prefix="paper-") as directory:
            try:
                judge = request.GET.get("judge") or None
                bundle = build_bundle(paper, study=study, judge=judge, out_dir=Path(directory))
            except NotFound as error:
                raise Http404(error.detail) from None
            body = bundle_zip(bundle)
        response = HttpResponse(body, content_type="application/zip")
        name = f"{paper}-{study}" if study else paper
        response["Content-Disposition"] = f'attachment; filename="{name}.zip"'
        return response


class ReleaseDownloadView(RoleRequiredMixin, View):
    """A study's public release as a zip (bt_elo.release): the newest one in the media storage (bt_elo.release_store),
    built on the first download, so every web server serves the same. Annotators appear by pseudonym only."""

    roles = (COORDINATOR, RESEARCHER)

    def get(self, request, study: str):
        import posixpath

        from django.core.files.storage import default_storage
        from django.http import FileResponse

        from .release_store import release_store, release_stored_latest

        try:
            annotation_selectors.study_resolve(study=study)  # an unknown study is a 404, never a folder
            name = release_stored_latest(study=study) or release_store(study=study)
        except AppError as error:
            return HttpResponse(error.detail, status=error.status, content_type="text/plain")
        return FileResponse(default_storage.open(name, "rb"), as_attachment=True, filename=posixpath.basename(name))
