"""Pages: the blinded comparison screen, its per-lease images, the coordinator's studies and dashboard."""

import re
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.generic import TemplateView, View

from agents import selectors as agent_selectors
from core.errors import AppError
from core.permissions import RoleRequiredMixin
from core.roles import ANNOTATOR, COORDINATOR, RESEARCHER, user_has_role
from core.tables import frame_html, table_frame
from corpus import selectors as corpus_selectors
from corpus.protocol import ALLOCATIONS, PAPER_CONFIGURATIONS, PAPER_FIGURES, PAPER_TIE_RATE, PAPER_VOTES

from . import quality as quality_rules
from . import selectors, services
from .models import GateReview, Lease, Purpose, Study, StudyKind
from .services import artifact_studies, gate_reviews, ratings
from .services import quality as quality_services


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
# Settings added after the first studies: optional on the form, a form posted without them keeps the model defaults.
OPTIONAL_SETTINGS = ("attention_rate", "repeat_rate", "allocation", "adaptive_floor", "stop_when_flip_below")


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
        for name in OPTIONAL_SETTINGS:
            self.fields[name].required = False

    def clean(self):
        cleaned = super().clean()
        for name in OPTIONAL_SETTINGS:
            if cleaned.get(name) in (None, ""):
                cleaned[name] = Study._meta.get_field(name).default
        return cleaned

    def clean_figures(self) -> list[str]:
        return [t for t in re.split(r"[\s,;]+", self.cleaned_data["figures"]) if t]


class ArtifactStudyForm(forms.Form):
    """A gate-review or rating study (issue 15): one artifact at a time."""

    name = forms.SlugField(max_length=80)
    kind = forms.ChoiceField(choices=[(StudyKind.GATE_REVIEW, "gate review"), (StudyKind.RATING, "rating")])
    configurations = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    figure_sample = forms.IntegerField(required=False, min_value=1, max_value=10_000_000, label="sample size")
    rating_axes = forms.CharField(
        required=False,
        help_text="rating studies: axes separated by commas; empty: instruction_following, visual_quality",
    )
    seed = forms.IntegerField(initial=0, min_value=-(2**63), max_value=2**63 - 1)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(c.slug, f"{c.label} ({c.slug})") for c in agent_selectors.configuration_list()]
        self.fields["configurations"].choices = choices
        self.fields["configurations"].initial = [slug for slug, _ in choices]

    def clean_rating_axes(self) -> list[str] | None:
        return [a for a in re.split(r"[\s,;]+", self.cleaned_data["rating_axes"]) if a] or None


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
        context.setdefault("artifact_form", ArtifactStudyForm())
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
        if request.POST.get("action") == "artifact-study":
            return self.artifact_study(request)
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

    def artifact_study(self, request):
        form = ArtifactStudyForm(request.POST)
        if form.is_valid():
            try:
                study = artifact_studies.artifact_study_create(**form.cleaned_data)
            except AppError as error:
                form.add_error(None, error.detail)
            else:
                messages.success(request, f"{study.kind} study {study.name} created.")
                return redirect("annotation:study-dashboard", name=study.name)
        return self.render_to_response(self.get_context_data(artifact_form=form))


class StudyDashboardView(RoleRequiredMixin, TemplateView):
    roles = (COORDINATOR, RESEARCHER)
    template_name = "annotation/dashboard.html"

    def get(self, request, *args, **kwargs):
        study = get_object_or_404(Study, name=self.kwargs["name"])
        if study.kind != StudyKind.PAIRWISE:
            # Coverage, leaderboard and overlap belong to pairwise studies; a gate-review or rating study's picture is
            # its agreement tables.
            return redirect(f"{reverse('bt_elo:agreement')}?{urlencode({'study': study.name})}")
        return super().get(request, *args, **kwargs)

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


# --- issue 15: gate review, rating and calibration screens; quality control and adjudication -----------------------
class _ArtifactScreen(RoleRequiredMixin, TemplateView):
    """A single-artifact screen (gate review or rating): the annotator's open artifact lease, submitted by a form.
    Only the opaque token and token-addressed images reach the page."""

    roles = (ANNOTATOR,)
    kind = ""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        study = selectors.study_of_kind_for_annotator(user=self.request.user, kind=self.kind)
        context["study_status"] = study.status if study else None
        context["item"] = None
        if study is not None and study.status == Study.Status.ACTIVE:
            lease = artifact_studies.artifact_next(study=study, annotator=self.request.user)
            context["item"] = selectors.artifact_lease_payload(lease=lease) if lease else None
        return context

    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response["Cache-Control"] = "private, no-store"
        return response

    def post(self, request):
        try:
            self.submit(request)
        except AppError as error:
            messages.error(request, error.detail)
        return redirect(request.path)


class GateReviewView(_ArtifactScreen):
    template_name = "annotation/gate_review.html"
    kind = StudyKind.GATE_REVIEW

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs) | {"gates": (GateReview.Gate.SEMANTIC, GateReview.Gate.RENDERING)}

    def submit(self, request):
        verdict = request.POST.get("verdict", "")
        gate_reviews.gate_review_submit(
            token=request.POST.get("token", ""),
            annotator=request.user,
            gate_fail=verdict != "pass",
            gate="" if verdict == "pass" else verdict,
            reason=request.POST.get("reason", ""),
        )


class RatingView(_ArtifactScreen):
    template_name = "annotation/rating.html"
    kind = StudyKind.RATING

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs) | {
            "scale": range(quality_rules.RATING_MIN, quality_rules.RATING_MAX + 1)
        }

    def submit(self, request):
        axes = [key.removeprefix("axis-") for key in request.POST if key.startswith("axis-")]
        ratings.rating_submit(
            token=request.POST.get("token", ""),
            annotator=request.user,
            ratings={axis: request.POST[f"axis-{axis}"] for axis in axes},
        )


class ArtifactImageView(RoleRequiredMixin, View):
    """/annotate/artifact-img/<token>/<source|a>: only the lease's annotator, re-encoded PNG, never cached."""

    roles = (ANNOTATOR,)

    def get(self, request, token: str, side: str):
        lease = selectors.artifact_lease_owned(token=token, user=request.user)
        if lease is None or side not in selectors.ARTIFACT_IMAGE_SIDES:
            raise Http404("no such image")
        response = HttpResponse(selectors.artifact_lease_image(lease=lease, side=side), content_type="image/png")
        response["Cache-Control"] = "private, no-store"
        return response


class CalibrationView(RoleRequiredMixin, TemplateView):
    """Onboarding: calibration items of the annotator's pairwise study, the expert's answer and explanation shown after
    each vote. Never counted, never a Comparison."""

    roles = (ANNOTATOR,)
    template_name = "annotation/calibration.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        state = selectors.study_for_annotator(user=self.request.user)
        token = self.request.GET.get("answered", "")
        answer = selectors.calibration_owned(token=token, user=self.request.user) if token else None
        if answer is None and state is not None:
            answer = quality_services.calibration_next(study=state.study, annotator=self.request.user)
        context["item"] = selectors.calibration_payload(answer=answer) if answer else None
        return context

    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response["Cache-Control"] = "private, no-store"
        return response

    def post(self, request):
        token = request.POST.get("token", "")
        try:
            quality_services.calibration_answer(
                token=token, annotator=request.user, outcome=request.POST.get("outcome", "")
            )
        except AppError as error:
            messages.error(request, error.detail)
            return redirect("annotation:calibration")
        return redirect(f"{reverse('annotation:calibration')}?answered={token}")


class CalibrationImageView(RoleRequiredMixin, View):
    roles = (ANNOTATOR,)

    def get(self, request, token: str, side: str):
        answer = selectors.calibration_owned(token=token, user=request.user)
        if answer is None or side not in selectors.IMAGE_SIDES:
            raise Http404("no such image")
        response = HttpResponse(selectors.calibration_image(answer=answer, side=side), content_type="image/png")
        response["Cache-Control"] = "private, no-store"
        return response


class StudyQualityView(RoleRequiredMixin, TemplateView):
    """A pairwise study's quality control: annotator quality, exclusions, attention items, and the adjudication of
    overlap items where annotators disagree."""

    roles = (COORDINATOR, RESEARCHER)
    template_name = "annotation/quality.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        study = get_object_or_404(Study, name=self.kwargs["name"], kind=StudyKind.PAIRWISE)
        frame = selectors.annotator_quality_frame(study=study.name)
        context.update(
            study=study,
            quality_html=frame_html(frame),
            notes=frame.attrs.get("notes", []),
            annotators=list(frame["annotator"]),
            disagreements=selectors.disagreements(study=study),
            labels=quality_services.LABELS,
            attention_items=study.items.filter(purpose=Purpose.ATTENTION).count(),
            attention_candidates=len(quality_services.attention_candidates(study=study)),
        )
        return context

    def post(self, request, name: str):
        if not user_has_role(request.user, COORDINATOR):
            raise PermissionDenied("only coordinators change studies")
        study = get_object_or_404(Study, name=name, kind=StudyKind.PAIRWISE)
        action, who = request.POST.get("action"), request.user.get_username()
        try:
            if action == "exclude":
                n = quality_services.annotator_exclude(
                    study=study,
                    annotator=request.POST.get("annotator", ""),
                    reason=request.POST.get("reason", ""),
                    decided_by=who,
                )
                messages.success(request, f"{n} votes excluded (kept and flagged).")
            elif action == "include":
                quality_services.annotator_include(study=study, annotator=request.POST.get("annotator", ""))
                messages.success(request, "Exclusion lifted.")
            elif action == "attention":
                count = int(request.POST.get("count") or 0)
                added = quality_services.attention_items_add(study=study, count=count)
                messages.success(request, f"{len(added)} attention items in the study.")
            elif action == "adjudicate":
                item_id = request.POST.get("item", "")
                quality_services.adjudication_save(
                    study=study,
                    item_id=int(item_id) if item_id.isdigit() else 0,
                    label=request.POST.get("label", ""),
                    note=request.POST.get("note", ""),
                    decided_by=who,
                )
                messages.success(request, "Decision stored; the votes are unchanged.")
            elif action == "calibrate":
                item_id = request.POST.get("item", "")
                adjudication = study.adjudications.filter(item_id=int(item_id) if item_id.isdigit() else 0).first()
                if adjudication is None:
                    raise ValueError("decide the item first: its decision becomes the expert's answer")
                quality_services.calibration_item_add(
                    study=study, item=adjudication.item, label=adjudication.label, explanation=adjudication.note
                )
                messages.success(request, "Calibration item added: the decision and its note are the expert's answer.")
        except (AppError, ValueError) as error:
            messages.error(request, getattr(error, "detail", str(error)))
        return redirect("annotation:study-quality", name=study.name)
