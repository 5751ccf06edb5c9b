"""Pages: the blinded comparison screen, its per-lease images, the coordinator's studies and dashboard."""

import re

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
from .models import Item, Lease, Purpose, Study, StudyKind
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

    name = forms.SlugField(max_length=80, error_messages={"invalid": STUDY_NAME_RULE})
    kind = forms.ChoiceField(choices=[(StudyKind.GATE_REVIEW, "gate review"), (StudyKind.RATING, "rating")])
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    configurations = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    figures = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "task ids, one per line"}),
        help_text="empty: every figure of the corpus",
    )
    figure_sample = forms.IntegerField(required=False, min_value=1, max_value=10_000_000, label="sample size")
    stratify = forms.ChoiceField(
        required=False,
        label="stratify by",
        choices=[
            ("", "no: sample figures"),
            ("field", "figure field"),
            ("orientation", "figure orientation"),
            ("image_format", "figure image format"),
            ("license", "figure licence"),
            ("configuration", "configuration"),
        ],
        help_text="with a sample size: a seeded sample of that many artifacts keeping each stratum's share",
    )
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


# The dashboard's assign box: where creating a study lands, and what a study without annotators points to.
ASSIGN_ANCHOR = "assign"


def annotator_users():
    return get_user_model().objects.filter(groups__name=ANNOTATOR).order_by("username")


class CoordinateView(RoleRequiredMixin, TemplateView):
    roles = (COORDINATOR, RESEARCHER)
    template_name = "annotation/coordinate.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        # Pairwise studies first, then gate-review and rating studies; the newest first within each.
        studies = selectors.study_list().prefetch_related("configurations", "annotators")
        context["studies"] = sorted(studies, key=lambda s: s.kind != StudyKind.PAIRWISE)
        context.setdefault("form", StudyForm())
        context.setdefault("artifact_form", ArtifactStudyForm())
        context["assign_anchor"] = ASSIGN_ANCHOR
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
                return self.created(request, study)
        return self.render_to_response(self.get_context_data(form=form))

    def artifact_study(self, request):
        form = ArtifactStudyForm(request.POST)
        if form.is_valid():
            try:
                study = services.study_create(**form.cleaned_data)
            except AppError as error:
                form.add_error(None, error.detail)
            else:
                return self.created(request, study)
        return self.render_to_response(self.get_context_data(artifact_form=form))

    @staticmethod
    def created(request, study: Study):
        """To the new study's dashboard, at its assign box: nobody works in a study until it has annotators."""
        kind = "Study" if study.kind == StudyKind.PAIRWISE else f"{study.get_kind_display().capitalize()} study"
        messages.success(request, f"{kind} {study.name} created. Next: assign its annotators (below).")
        return redirect(reverse("annotation:study-dashboard", kwargs={"name": study.name}) + f"#{ASSIGN_ANCHOR}")


class StudyDashboardView(RoleRequiredMixin, TemplateView):
    roles = (COORDINATOR, RESEARCHER)
    template_name = "annotation/dashboard.html"

    def get_context_data(self, **kwargs):
        """Every kind: what is left (selectors.study_progress) and the manage box. Pairwise: coverage, leaderboard and
        overlap (selectors.study_dashboard); gate review and rating: artifacts, judgements and agreement so far."""
        context = super().get_context_data(**kwargs)
        study = get_object_or_404(Study, name=self.kwargs["name"])
        assigned = set(study.annotators.values_list("pk", flat=True))
        if study.kind == StudyKind.PAIRWISE:
            board = selectors.study_dashboard(study=study)
        else:
            board = selectors.artifact_study_dashboard(study=study)
            # frame_html escapes every cell itself.
            board["agreement"] = [
                {"title": title, "table": table, "html": mark_safe(frame_html(frame)), "rows": len(frame)}  # noqa: S308
                for title, table, frame in board["agreement"]
            ]
        context.update(
            study=study,
            board=board,
            progress=selectors.study_progress(study=study),
            invite_form=InviteForm(),
            users=[(u, u.pk in assigned) for u in annotator_users()],
            statuses=Study.Status.values,
            assign_anchor=ASSIGN_ANCHOR,
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
class _TaskScreen(RoleRequiredMixin, TemplateView):
    """A blinded single-item screen (gate review, rating, calibration), built like the comparison screen: the page
    carries its API's URLs and the study's name only; every item arrives through the API by opaque token."""

    roles = (ANNOTATOR,)
    kind = ""

    def study(self):
        """The study named by ?study= (opened from the annotator's list: its items are served), else the one the
        screen would serve next."""
        named = self.request.GET.get("study") or None
        study = selectors.study_of_kind_for_annotator(user=self.request.user, kind=self.kind, name=named)
        return study or selectors.study_of_kind_for_annotator(user=self.request.user, kind=self.kind)

    def get_context_data(self, **kwargs):
        study = self.study()
        pinned = study is not None and study.name == self.request.GET.get("study")
        return super().get_context_data(**kwargs) | {"study": study, "pinned": pinned}

    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response["Cache-Control"] = "private, no-store"
        return response


class GateReviewView(_TaskScreen):
    template_name = "annotation/gate_review.html"
    kind = StudyKind.GATE_REVIEW


class RatingView(_TaskScreen):
    template_name = "annotation/rating.html"
    kind = StudyKind.RATING

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs) | {
            "scale": range(quality_rules.RATING_MIN, quality_rules.RATING_MAX + 1)
        }


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


class CalibrationView(_TaskScreen):
    """Onboarding: the practice items of the annotator's pairwise study, the expert's answer and explanation shown after
    each answer. Never counted, never a Comparison."""

    template_name = "annotation/calibration.html"

    def study(self):
        state = selectors.study_for_annotator(user=self.request.user)
        return state.study if state is not None else None


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

    def get(self, request, *args, **kwargs):
        study = get_object_or_404(Study, name=self.kwargs["name"])
        if study.kind != StudyKind.PAIRWISE:
            # A gate-review or rating study's quality is its raters' agreement, on its dashboard.
            return redirect(reverse("annotation:study-dashboard", kwargs={"name": study.name}) + "#agreement")
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        study = get_object_or_404(Study, name=self.kwargs["name"], kind=StudyKind.PAIRWISE)
        frame = selectors.annotator_quality_frame(study=study.name)
        context.update(
            study=study,
            quality_html=frame_html(frame),
            notes=frame.attrs.get("notes", []),
            annotators=list(frame["annotator"]),
            disagreements=selectors.adjudication_rows(study=study),
            labels=selectors.ADJUDICATION_CHOICES,
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
                result = quality_services.attention_items_set(study=study, count=count)
                kept = f" ({result.served_kept} already served are kept: their votes measure attention)"
                messages.success(
                    request, f"{result.items} attention items in the study{kept if result.served_kept else ''}."
                )
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


class AdjudicationImageView(RoleRequiredMixin, View):
    """/coordinate/<study>/quality/img/<item>/<source|x|y>: an adjudicated item's images, for coordinators."""

    roles = (COORDINATOR, RESEARCHER)

    def get(self, request, name: str, pk: int, side: str):
        items = Item.objects.select_related("figure", "artifact_x", "artifact_y")
        item = get_object_or_404(items, study__name=name, pk=pk)
        if side not in selectors.ADJUDICATION_IMAGE_SIDES:
            raise Http404("no such image")
        response = HttpResponse(selectors.adjudication_image(item=item, side=side), content_type="image/png")
        response["Cache-Control"] = "private, no-store"
        return response


class StudyScreenView(AnnotateView):
    """/annotate/ and /annotate/<name>/ over studies of every kind (AnnotateView's pages: the annotator's studies, or
    one study's comparison screen): a gate-review or rating study, chosen by name or as the annotator's only study,
    opens its own screen."""

    def get(self, request, *args, name: str | None = None, **kwargs):
        studies = selectors.annotator_study_list(user=request.user)
        if name is not None:
            chosen = next((s for s in studies if s["name"] == name), None)
        else:
            chosen = studies[0] if len(studies) == 1 else None
        if chosen is not None and chosen["kind"] != StudyKind.PAIRWISE:
            return redirect(chosen["url"])
        return super().get(request, *args, name=name, **kwargs)
