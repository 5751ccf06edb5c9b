"""Screening pages: the annotator's screening screen and its image, and the coordinator's pages with the screening kind
(/coordinate/ creates a screening study; a screening study's dashboard shows its counts and agreement and seeds a
study from its accepted figures). The coordinator's pages extend views.CoordinateView and views.StudyDashboardView,
as views.StudyScreenView extends the annotator's page, so every other kind is served exactly as before."""

from __future__ import annotations

import re

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.safestring import mark_safe
from django.views.generic import TemplateView, View

from agents import selectors as agent_selectors
from core.errors import AppError
from core.permissions import RoleRequiredMixin
from core.roles import ANNOTATOR, COORDINATOR, user_has_role
from core.tables import frame_html
from corpus import selectors as corpus_selectors

from . import selectors, services, views
from .models import Study, StudyKind

SCREENING_ACTION = "screening-study"  # the /coordinate/ form that creates a screening study
SEED_ACTION = "seed"  # the screening dashboard's form that seeds a study from the accepted figures


class ScreeningView(views._TaskScreen):
    """/annotate/screen/: accept or reject candidate figures, from every screening study assigned to the annotator."""

    template_name = "annotation/screening.html"

    def study(self):
        """The study named by ?study= (opened from the annotator's list), else the one the screen would serve next."""
        user, named = self.request.user, self.request.GET.get("study") or None
        study = selectors.screening_study_for_annotator(user=user, name=named) if named else None
        return study or selectors.screening_study_for_annotator(user=user)


class ScreeningImageView(RoleRequiredMixin, View):
    """/annotate/screen/img/<token>: the candidate figure the token addresses, for its screener only, never cached."""

    roles = (ANNOTATOR,)

    def get(self, request, token: str):
        found = selectors.screening_token_read(token=token, user=request.user)
        figure = selectors.screening_figure(figure_id=found[1]) if found else None
        if figure is None:
            raise Http404("no such image")
        response = HttpResponse(selectors.source_png(figure), content_type="image/png")
        response["Cache-Control"] = "private, no-store"
        return response


class ScreeningStudyForm(forms.Form):
    """A screening study: its candidates are figures of the corpus (task ids, source fields, a seeded sample; none:
    every figure)."""

    name = forms.SlugField(max_length=80, error_messages={"invalid": views.STUDY_NAME_RULE})
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    figure_fields = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, label="source fields", help_text="none ticked: every field"
    )
    figures = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "task ids, one per line"}),
        help_text="empty: every figure of the corpus",
    )
    figure_sample = forms.IntegerField(required=False, min_value=1, max_value=10_000_000, label="sample size")
    seed = forms.IntegerField(initial=0, min_value=-(2**63), max_value=2**63 - 1)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "screening_%s")  # beside the other create forms on /coordinate/
        super().__init__(*args, **kwargs)
        self.fields["figure_fields"].choices = [(f, f) for f in corpus_selectors.figure_fields()]

    def clean_figures(self) -> list[str]:
        return [t for t in re.split(r"[\s,;]+", self.cleaned_data["figures"]) if t]


class SeedStudyForm(forms.Form):
    """A study of any kind over exactly the screening study's figures accepted by majority."""

    name = forms.SlugField(max_length=80, error_messages={"invalid": views.STUDY_NAME_RULE})
    kind = forms.ChoiceField(
        choices=[(k, label) for k, label in StudyKind.choices if k != StudyKind.SCREENING], initial=StudyKind.PAIRWISE
    )
    configurations = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "seed_%s")  # beside the invite form on the dashboard
        super().__init__(*args, **kwargs)
        choices = [(c.slug, f"{c.label} ({c.slug})") for c in agent_selectors.configuration_list()]
        self.fields["configurations"].choices = choices
        self.fields["configurations"].initial = [slug for slug, _ in choices]


def _coordinator(request) -> None:
    if not user_has_role(request.user, COORDINATOR):
        raise PermissionDenied("only coordinators change studies")


class StudiesView(views.CoordinateView):
    """/coordinate/ with the screening study form beside those of the other kinds."""

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs) | {
            "screening_form": kwargs.get("screening_form") or ScreeningStudyForm(),
            "screening_action": SCREENING_ACTION,
        }

    def post(self, request):
        if request.POST.get("action") != SCREENING_ACTION:
            return super().post(request)
        _coordinator(request)
        form = ScreeningStudyForm(request.POST)
        if form.is_valid():
            try:
                study = services.study_create(kind=StudyKind.SCREENING, **form.cleaned_data)
            except AppError as error:
                form.add_error(None, error.detail)
            else:
                return self.created(request, study)
        return self.render_to_response(self.get_context_data(screening_form=form))


class StudyBoardView(views.StudyDashboardView):
    """/coordinate/<study>/: a screening study's dashboard (what is left, its candidates accepted, rejected and
    undecided, its screeners and their agreement, seeding a study from the accepted figures); every other kind's
    is views.StudyDashboardView's."""

    def study(self) -> Study:
        return get_object_or_404(Study, name=self.kwargs["name"])

    def get_context_data(self, **kwargs):
        study = self.study()
        if study.kind != StudyKind.SCREENING:
            return super().get_context_data(**kwargs)
        context = TemplateView.get_context_data(self, **kwargs)
        assigned = set(study.annotators.values_list("pk", flat=True))
        board = selectors.screening_dashboard(study=study)
        # frame_html escapes every cell itself.
        board["agreement"] = [
            {"title": title, "table": table, "html": mark_safe(frame_html(frame)), "rows": len(frame)}  # noqa: S308
            for title, table, frame in board["agreement"]
        ]
        context.update(
            study=study,
            board=board,
            progress=selectors.study_progress(study=study),
            invite_form=views.InviteForm(),
            users=[(u, u.pk in assigned) for u in views.annotator_users()],
            statuses=Study.Status.values,
            assign_anchor=views.ASSIGN_ANCHOR,
            seed_form=kwargs.get("seed_form") or SeedStudyForm(),
            seed_action=SEED_ACTION,
        )
        return context

    def post(self, request, name: str):
        if request.POST.get("action") != SEED_ACTION:
            return super().post(request, name)
        _coordinator(request)
        study = get_object_or_404(Study, name=name, kind=StudyKind.SCREENING)
        form = SeedStudyForm(request.POST)
        if form.is_valid():
            try:
                seeded = services.study_create(from_screening=study.name, **form.cleaned_data)
            except AppError as error:
                form.add_error(None, error.detail)
            else:
                return views.CoordinateView.created(request, seeded)
        return self.render_to_response(self.get_context_data(seed_form=form))
