"""Pages: the blinded comparison screen, its per-lease images, the coordinator's studies and dashboard."""

import re

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.safestring import mark_safe
from django.views.generic import TemplateView, View

from agents import selectors as agent_selectors
from core.errors import AppError
from core.permissions import RoleRequiredMixin
from core.roles import ANNOTATOR, COORDINATOR, RESEARCHER, user_has_role
from core.tables import frame_html, table_frame
from corpus import selectors as corpus_selectors
from corpus.protocol import ALLOCATIONS, PAPER_CONFIGURATIONS, PAPER_FIGURES, PAPER_TIE_RATE, PAPER_VOTES

from . import selectors, services
from .models import Lease, Study


class AnnotateView(RoleRequiredMixin, TemplateView):
    """The comparison screen for one study (/annotate/<name>/), or at /annotate/ the annotator's studies when they
    have several (the screen itself when they have one). Everything item-specific arrives through the annotator API."""

    roles = (ANNOTATOR,)
    template_name = "annotation/annotate.html"

    def get_template_names(self):
        return ["annotation/my_studies.html" if self.study is None and len(self.studies) > 1 else self.template_name]

    def get(self, request, *args, name: str | None = None, **kwargs):
        self.studies = selectors.annotator_study_list(user=request.user)
        if name is None:
            self.study = self.studies[0] if len(self.studies) == 1 else None
        else:
            self.study = next((s for s in self.studies if s["name"] == name), None)
            if self.study is None:
                raise Http404("You are not assigned to this study.")
        response = super().get(request, *args, **kwargs)
        response["Cache-Control"] = "private, no-store"
        return response

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        others = [s for s in self.studies if self.study is None or s["name"] != self.study["name"]]
        context.update(study=self.study, studies=self.studies, other_studies=others)
        return context


class LeaseImageView(RoleRequiredMixin, View):
    """/annotate/img/<token>/<source|a|b>: only the lease's annotator, re-encoded PNG, never cached."""

    roles = (ANNOTATOR,)

    def get(self, request, token: str, side: str):
        if side not in selectors.IMAGE_SIDES:
            raise Http404("no such image")
        lease = selectors.lease_owned(token=token, user=request.user)
        if lease is None or lease.state not in (Lease.State.OPEN, Lease.State.SUBMITTED):
            raise Http404("no such image")
        response = HttpResponse(selectors.lease_image(lease=lease, side=side), content_type="image/png")
        response["Cache-Control"] = "private, no-store"
        return response


STUDY_NAME_RULE = "A study name uses letters, digits, hyphens and underscores only (no spaces), e.g. pilot-2."
ALLOCATION_SETTINGS = ("allocation", "adaptive_floor", "stop_when_flip_below")


class StudyForm(forms.ModelForm):
    """The study's settings come from the model (defaults, limits, labels, help): one place."""

    configurations = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    figure_fields = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, label="source fields", help_text="none ticked: every field"
    )
    figures = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "task ids, one per line"}),
        label="figures",
        help_text="empty: every figure of the corpus",
    )
    figure_sample = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=10_000_000,
        label="sample size",
        help_text="a seeded sample of this many of the chosen figures (a pilot); empty: all",
    )

    class Meta:
        model = Study
        fields = ("name", "configurations", *services.STUDY_SETTINGS, "figure_fields", "figures", "figure_sample")
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}
        error_messages = {"name": {"invalid": STUDY_NAME_RULE}}

    def validate_unique(self):
        """Uniqueness is the service's to check, with a message naming the study."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(c.slug, f"{c.label} ({c.slug})") for c in agent_selectors.configuration_list()]
        self.fields["configurations"].choices = choices
        self.fields["configurations"].initial = [slug for slug, _ in choices]
        self.fields["figure_fields"].choices = [(f, f) for f in corpus_selectors.figure_fields()]
        for name in ALLOCATION_SETTINGS:  # added later than the others: a form posted without them keeps the defaults
            self.fields[name].required = False

    def clean(self):
        cleaned = super().clean()
        for name in ALLOCATION_SETTINGS:
            if cleaned.get(name) in (None, ""):
                cleaned[name] = Study._meta.get_field(name).default
        return cleaned

    def clean_figures(self) -> list[str]:
        return [t for t in re.split(r"[\s,;]+", self.cleaned_data["figures"]) if t]


class PlannerForm(forms.Form):
    """The study planner's inputs (table `study-plan`, computed by bt_elo, which also checks the bounds)."""

    configurations = forms.IntegerField(initial=PAPER_CONFIGURATIONS, min_value=2)
    figures = forms.IntegerField(initial=PAPER_FIGURES, min_value=1)
    strength_spread = forms.FloatField(
        initial=300.0, min_value=0, label="strength spread (Elo)", help_text="best minus worst, equally spaced"
    )
    tie_rate = forms.FloatField(initial=round(PAPER_TIE_RATE, 3), min_value=0, max_value=0.95)
    cluster_sd = forms.FloatField(
        initial=100.0, min_value=0, label="per-figure sd (Elo)", help_text="how much figures shift the strengths"
    )
    budgets = forms.CharField(initial=f"1000,2000,{PAPER_VOTES},8000", help_text="vote counts, comma-separated")
    allocation = forms.ChoiceField(choices=[(a, a) for a in ALLOCATIONS])
    simulations = forms.IntegerField(initial=40, min_value=2, help_text="simulated studies per budget (≤ 200)")


class InviteForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)


def annotator_users():
    return get_user_model().objects.filter(groups__name=ANNOTATOR).order_by("username")


class CoordinateView(RoleRequiredMixin, TemplateView):
    roles = (COORDINATOR, RESEARCHER)
    template_name = "annotation/coordinate.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["studies"] = selectors.study_list().prefetch_related("configurations", "annotators")
        context.setdefault("form", StudyForm())
        context.update(self._plan())
        return context

    def _plan(self) -> dict:
        """The planner: unbound until asked (?plan=1), then its summary table and the plot's query."""
        if "plan" not in self.request.GET:
            return {"planner": PlannerForm()}
        planner = PlannerForm(self.request.GET)
        if not planner.is_valid():
            return {"planner": planner}
        try:
            frame = table_frame("study-plan", **planner.cleaned_data)
        except AppError as error:
            planner.add_error(None, error.detail)
            return {"planner": planner}
        # frame_html escapes every cell itself.
        table = mark_safe(frame_html(frame))  # noqa: S308
        return {"planner": planner, "plan_table": table, "plan_query": self.request.GET.urlencode()}

    def post(self, request):
        if not user_has_role(request.user, COORDINATOR):
            raise PermissionDenied("only coordinators change studies")
        form = StudyForm(request.POST)
        if form.is_valid():
            data = dict(form.cleaned_data)
            try:
                study = services.study_create(**data)
            except AppError as error:
                form.add_error(None, error.detail)
            else:
                messages.success(request, f"Study {study.name} created.")
                return redirect("annotation:study-dashboard", name=study.name)
        return self.render_to_response(self.get_context_data(form=form))


class StudyDashboardView(RoleRequiredMixin, TemplateView):
    roles = (COORDINATOR, RESEARCHER)
    template_name = "annotation/dashboard.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        study = get_object_or_404(Study, name=self.kwargs["name"])
        assigned = set(study.annotators.values_list("pk", flat=True))
        context.update(
            study=study,
            board=selectors.study_dashboard(study=study),
            invite_form=InviteForm(),
            users=[(u, u.pk in assigned) for u in annotator_users()],
            statuses=Study.Status.values,
        )
        return context

    def post(self, request, name: str):
        if not user_has_role(request.user, COORDINATOR):
            raise PermissionDenied("only coordinators change studies")
        study = get_object_or_404(Study, name=name)
        action = request.POST.get("action")
        if action == "status":
            try:
                services.study_status_set(study=study, status=request.POST.get("status", ""))
                messages.success(request, f"Study {study.name} is now {study.status}.")
            except AppError as error:
                messages.error(request, error.detail)
        elif action == "annotators":
            ids = [int(pk) for pk in request.POST.getlist("annotators") if pk.isdigit()]
            services.study_annotators_set(study=study, users=annotator_users().filter(pk__in=ids))
            messages.success(request, f"{len(ids)} annotator{'' if len(ids) == 1 else 's'} assigned.")
        elif action == "invite":
            form = InviteForm(request.POST)
            if not form.is_valid():
                messages.error(request, "Invite: " + " ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
                return redirect("annotation:study-dashboard", name=study.name)
            try:
                invitation = services.annotator_invite(study=study, **form.cleaned_data)
            except AppError as error:
                messages.error(request, f"Invite: {error.detail}")
            else:
                name = invitation.user.get_username()
                if invitation.set_password_path:
                    link = request.build_absolute_uri(invitation.set_password_path)
                    messages.success(
                        request,
                        f"{name} is invited to {study.name}. Send them this one-time link to choose a password: {link}",
                    )
                else:
                    messages.success(request, f"{name} already has an account and is now assigned to {study.name}.")
        return redirect("annotation:study-dashboard", name=study.name)
