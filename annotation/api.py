"""REST API: annotators touch only their own leases and votes; coordinators read and create studies."""

import json

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound
from core.permissions import IsStaffResearcher, role_permission
from core.roles import ANNOTATOR, COORDINATOR
from core.tables import render_table

from . import screening as screening_rules
from . import selectors, services
from .models import GateReview, Study, StudyKind
from .services import artifact_studies, gate_reviews, ratings
from .services import quality as quality_services
from .services import screening as screening_services

IsAnnotator = role_permission(ANNOTATOR)
IsCoordinator = role_permission(COORDINATOR)


class AnnotatorApi(APIView):
    """Base: JSON only (no browsable pages that could echo more than the payload). The study is the one named in the
    body or query (`study`), else the annotator's first."""

    permission_classes = [IsAnnotator]
    renderer_classes = [JSONRenderer]

    @staticmethod
    def study_name(request) -> str | None:
        name = request.data.get("study") if hasattr(request.data, "get") else None
        return name or request.query_params.get("study") or None

    def study(self, request):
        name = self.study_name(request)
        state = selectors.study_for_annotator(user=request.user, name=name)
        if state is None:
            raise NotFound(
                f"You are not assigned to a study named {name!r}." if name else "You are not assigned to a study yet."
            )
        return state.study


class ItemNextApi(AnnotatorApi):
    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AnnotateNextInput"

        study = serializers.CharField(max_length=80, required=False, help_text="omitted: the next study with work")

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AnnotateNextOutput"

        state = serializers.ChoiceField(choices=["item", "done", "waiting", "none", "paused"])
        item = serializers.DictField(required=False)
        summary = serializers.DictField(required=False)
        study = serializers.DictField(required=False)
        detail = serializers.CharField(required=False)

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request):
        name = self.study_name(request)
        if name:
            state = selectors.study_for_annotator(user=request.user, name=name)
            if state is None:
                raise NotFound(f"You are not assigned to a study named {name!r}.")
            states = [state]
        else:
            # Every study in turn, least done first: one that has run dry never hides the others.
            states = selectors.studies_for_annotator(user=request.user, with_progress=False)
        if not states:
            return Response({"state": "none", "detail": "You are not assigned to a study yet."})
        paused = None
        for state in states:
            try:
                served = services.item_next(study=state.study, annotator=request.user, state=state)
            except services.StudyUnavailable as error:
                paused = paused or error.detail
                continue
            if served is not None:
                return Response(
                    {"state": "item", "item": selectors.lease_payload(lease=served.lease, done=served.done)}
                )
        first = states[0].study
        if paused and len(states) == 1:
            return Response({"state": "paused", "detail": paused, "study": _study_brief(first)})
        # Never "session complete" over items that only wait for their renderings: say so, and to come back.
        waiting = sum(
            selectors.pairwise_waiting(s.study)
            for s in states
            if s.study.status == Study.Status.ACTIVE
            and selectors.annotator_progress(study=s.study, user=request.user)["done"] < s.study.quota_per_annotator
        )
        return Response(
            {
                "state": "waiting" if waiting else "done",
                **({"detail": selectors.waiting_note(waiting) + "."} if waiting else {}),
                "study": _study_brief(first),
                "summary": selectors.annotator_summary(study=first, user=request.user),
            }
        )


def _study_brief(study) -> dict:
    return {"name": study.name, "description": study.description}


class ComparisonSubmitApi(AnnotatorApi):
    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AnnotateSubmitInput"

        token = serializers.CharField(max_length=64)
        outcome = serializers.CharField(max_length=20)
        reason = serializers.CharField(max_length=4000, required=False, allow_blank=True, default="")
        dwell_ms = serializers.IntegerField(
            min_value=0, max_value=services.MAX_DWELL_MS - 1, required=False, allow_null=True
        )
        decision_ms = serializers.IntegerField(
            min_value=0, max_value=services.MAX_DWELL_MS - 1, required=False, allow_null=True
        )

    @extend_schema(request=InputSerializer, responses={200: dict})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        vote = services.comparison_submit(annotator=request.user, **data.validated_data)
        # Progress arrives with the next item (its "k of N"), which the screen asks for at once. "counted" says only
        # whether the dwell was long enough: an attention or repeat item never counts, and saying so would unblind it.
        return Response({"stored": True, "counted": vote.dwell_reached, "outcome": vote.comparison.outcome})


class LeaseSkipApi(AnnotatorApi):
    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "AnnotateSkipInput"

        token = serializers.CharField(max_length=64)
        reason = serializers.CharField(max_length=2000, allow_blank=True)

    @extend_schema(request=InputSerializer, responses={200: dict})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.lease_skip(annotator=request.user, **data.validated_data)
        return Response({"skipped": True})


class ComparisonUndoApi(AnnotatorApi):
    @extend_schema(request=ItemNextApi.InputSerializer, responses={200: dict})
    def post(self, request):
        study = self.study(request)
        lease = services.comparison_undo(study=study, annotator=request.user)
        done = selectors.annotator_progress(study=study, user=request.user)["done"]
        payload = selectors.lease_payload(lease=lease, done=done)
        return Response({"state": "item", "item": payload, "previous": selectors.lease_previous_vote(lease=lease)})


class SessionSummaryApi(AnnotatorApi):
    @extend_schema(
        parameters=[OpenApiParameter("study", str, description="omitted: the annotator's first study")],
        responses={200: dict},
    )
    def get(self, request):
        return Response(selectors.annotator_summary(study=self.study(request), user=request.user))


class AnnotatorStudiesApi(AnnotatorApi):
    """The annotator's studies with their progress in each (names only: studies are not blinded, configurations are)."""

    @extend_schema(responses={200: dict})
    def get(self, request):
        return Response({"studies": selectors.annotator_study_list(user=request.user)})


# --- coordinators -------------------------------------------------------------------------------
class StudyOutputSerializer(serializers.Serializer):
    class Meta:
        ref_name = "Study"

    name = serializers.CharField()
    kind = serializers.CharField()
    description = serializers.CharField()
    status = serializers.CharField()
    configurations = serializers.SerializerMethodField()
    target_per_pair = serializers.IntegerField()
    overlap_rate = serializers.FloatField()
    seed = serializers.IntegerField()
    include_gate_failed = serializers.BooleanField()
    require_reason_decisive = serializers.BooleanField()
    min_dwell_ms = serializers.IntegerField()
    lease_seconds = serializers.IntegerField()
    quota_per_annotator = serializers.IntegerField()
    allocation = serializers.CharField()
    adaptive_floor = serializers.IntegerField()
    stop_when_flip_below = serializers.FloatField()
    attention_rate = serializers.FloatField()
    repeat_rate = serializers.FloatField()
    annotators = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_configurations(self, study) -> list[str]:
        return [c.slug for c in selectors.study_configurations(study)]

    def get_annotators(self, study) -> list[str]:
        return list(study.annotators.order_by("username").values_list("username", flat=True))


class StudyListApi(APIView):
    class InputSerializer(serializers.ModelSerializer):
        """The study's settings come from the model (defaults, limits, help): one place. `kind`: pairwise (default),
        gate_review, rating or screening; all but pairwise take a description and a seed of the settings, rating its
        axes; screening takes no configurations (the service says so when a kind needs them and has none)."""

        configurations = serializers.ListField(
            child=serializers.CharField(), required=False, default=list, help_text="every kind but screening"
        )
        from_screening = serializers.CharField(
            required=False, help_text="exactly the figures this screening study accepted by majority"
        )
        stratify = serializers.CharField(
            required=False, help_text="gate-review and rating studies: figure_sample stratified by this attribute"
        )
        rating_axes = serializers.ListField(
            child=serializers.CharField(max_length=60), required=False, help_text="rating studies: the axes rated 0-5"
        )
        figures = serializers.ListField(
            child=serializers.CharField(), required=False, help_text="task ids; omitted: the whole corpus"
        )
        figure_fields = serializers.ListField(
            child=serializers.CharField(), required=False, help_text="only figures of these source fields"
        )
        figure_sample = serializers.IntegerField(
            min_value=1,
            max_value=10_000_000,
            required=False,
            allow_null=True,
            help_text="a seeded sample (the study's seed) of this many of the chosen figures",
        )

        class Meta:
            model = Study
            ref_name = "StudyCreateInput"
            fields = (
                "name",
                "kind",
                "configurations",
                "figures",
                "figure_fields",
                "figure_sample",
                "from_screening",
                "stratify",
                "rating_axes",
                *services.STUDY_SETTINGS,
            )
            # Uniqueness is the service's to check (with a message naming the study), not the serializer's.
            extra_kwargs = {"name": {"validators": []}}

    def get_permissions(self):
        return [(IsCoordinator if self.request.method == "POST" else IsStaffResearcher)()]

    @extend_schema(responses={200: StudyOutputSerializer(many=True)})
    def get(self, request):
        return Response(StudyOutputSerializer(selectors.study_list(), many=True).data)

    @extend_schema(request=InputSerializer, responses={201: StudyOutputSerializer})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        study = services.study_create(**data.validated_data)
        return Response(StudyOutputSerializer(study).data, status=201)


class StudyDetailApi(APIView):
    permission_classes = [IsStaffResearcher]

    @extend_schema(responses={200: StudyOutputSerializer})
    def get(self, request, name: str):
        return Response(StudyOutputSerializer(get_object_or_404(Study, name=name)).data)


class StudyCoverageApi(APIView):
    permission_classes = [IsStaffResearcher]

    @extend_schema(responses={200: dict})
    def get(self, request, name: str):
        study = get_object_or_404(Study, name=name)
        frame = selectors.coverage_frame(study=study.name)
        payload = json.loads(render_table(frame, "json", name="coverage"))
        return Response({"study": study.name, "columns": payload["columns"], "rows": payload["rows"]})


# --- the single-artifact screens (gate review, rating) and calibration ----------------------------------------------
# The same shape as the comparison screen's API: next / submit / skip / undo, opaque tokens only. A screen works in the
# annotator's first active study of its kind (study_of_kind_for_annotator), or in the one named in the body.
class ArtifactScreenApi(AnnotatorApi):
    kind = ""  # set per URL: StudyKind.GATE_REVIEW or StudyKind.RATING

    def study(self, request):
        study = selectors.study_of_kind_for_annotator(user=request.user, kind=self.kind, name=self.study_name(request))
        if study is None:
            raise NotFound(f"You are not assigned to a {self.kind.replace('_', '-')} study.")
        return study

    def item_response(self, study, lease, **extra) -> Response:
        progress = selectors.artifact_progress(study=study, user=lease.annotator)
        return Response(
            {"state": "item", "item": selectors.artifact_lease_payload(lease=lease, progress=progress)} | extra
        )


class ArtifactNextApi(ArtifactScreenApi):
    """The annotator's open artifact, or the next one; `waiting` when the artifacts left still wait for a rendering."""

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "ArtifactNextOutput"

        state = serializers.ChoiceField(choices=["item", "done", "waiting", "paused"])
        item = serializers.DictField(required=False)
        summary = serializers.DictField(required=False, help_text="done, skipped, total, and pending: still unrendered")
        study = serializers.DictField(required=False)
        detail = serializers.CharField(required=False)

    @extend_schema(request=ItemNextApi.InputSerializer, responses={200: OutputSerializer})
    def post(self, request):
        study = self.study(request)
        try:
            lease = artifact_studies.artifact_next(study=study, annotator=request.user)
        except services.StudyUnavailable as error:
            return Response({"state": "paused", "detail": error.detail, "study": _study_brief(study)})
        if lease is not None:
            return self.item_response(study, lease)
        progress = selectors.artifact_progress(study=study, user=request.user)
        return Response(
            {
                "state": "waiting" if progress["pending"] else "done",
                "study": _study_brief(study),
                "summary": progress,
            }
        )


class GateReviewSubmitApi(ArtifactScreenApi):
    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "GateReviewSubmitInput"

        token = serializers.CharField(max_length=64)
        verdict = serializers.ChoiceField(choices=["pass", GateReview.Gate.SEMANTIC, GateReview.Gate.RENDERING])
        reason = serializers.CharField(max_length=4000, required=False, allow_blank=True, default="")

    @extend_schema(request=InputSerializer, responses={200: dict})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        verdict = data.validated_data["verdict"]
        gate_reviews.gate_review_submit(
            token=data.validated_data["token"],
            annotator=request.user,
            gate_fail=verdict != "pass",
            gate="" if verdict == "pass" else verdict,
            reason=data.validated_data["reason"],
        )
        return Response({"stored": True})


class RatingSubmitApi(ArtifactScreenApi):
    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "RatingSubmitInput"

        token = serializers.CharField(max_length=64)
        ratings = serializers.DictField(child=serializers.IntegerField(), allow_empty=False)

    @extend_schema(request=InputSerializer, responses={200: dict})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ratings.rating_submit(annotator=request.user, **data.validated_data)
        return Response({"stored": True})


class ArtifactSkipApi(ArtifactScreenApi):
    @extend_schema(request=LeaseSkipApi.InputSerializer, responses={200: dict})
    def post(self, request):
        data = LeaseSkipApi.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        artifact_studies.artifact_lease_skip(annotator=request.user, **data.validated_data)
        return Response({"skipped": True})


class ArtifactUndoApi(ArtifactScreenApi):
    """Withdraw the last judgement and serve its artifact again, with the judgement (`previous`) to put back."""

    @extend_schema(request=ItemNextApi.InputSerializer, responses={200: dict})
    def post(self, request):
        study = self.study(request)
        undo = gate_reviews.gate_review_undo if self.kind == StudyKind.GATE_REVIEW else ratings.rating_undo
        undone = undo(study=study, annotator=request.user)
        return self.item_response(study, undone.lease, previous=undone.previous)


class CalibrationApi(AnnotatorApi):
    """Calibration works in the annotator's pairwise study (the named one, or their first)."""

    @staticmethod
    def item_response(answer, **extra) -> Response:
        progress = selectors.calibration_progress(study=answer.study, user=answer.annotator)
        return Response(
            {"state": "item", "item": selectors.calibration_payload(answer=answer, progress=progress)} | extra
        )


class CalibrationNextApi(CalibrationApi):
    """The next practice item, or `done` with how many the study has (none at all is said as such)."""

    @extend_schema(request=ItemNextApi.InputSerializer, responses={200: ItemNextApi.OutputSerializer})
    def post(self, request):
        study = self.study(request)
        answer = quality_services.calibration_next(study=study, annotator=request.user)
        if answer is not None:
            return self.item_response(answer)
        summary = selectors.calibration_progress(study=study, user=request.user)
        return Response({"state": "done", "study": _study_brief(study), "summary": summary})


class CalibrationAnswerApi(CalibrationApi):
    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "CalibrationAnswerInput"

        token = serializers.CharField(max_length=64)
        outcome = serializers.CharField(max_length=20)

    @extend_schema(request=InputSerializer, responses={200: dict})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        answer = quality_services.calibration_answer(annotator=request.user, **data.validated_data)
        return self.item_response(answer)


class CalibrationSkipApi(CalibrationApi):
    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "CalibrationSkipInput"

        token = serializers.CharField(max_length=64)

    @extend_schema(request=InputSerializer, responses={200: dict})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        quality_services.calibration_skip(annotator=request.user, **data.validated_data)
        return Response({"skipped": True})


class CalibrationUndoApi(CalibrationApi):
    @extend_schema(request=ItemNextApi.InputSerializer, responses={200: dict})
    def post(self, request):
        answer, previous = quality_services.calibration_undo(study=self.study(request), annotator=request.user)
        return self.item_response(answer, previous={"outcome": previous})


# --- the screening screen: next / decide / skip / undo, a figure addressed by its signed token ----------------------
class ScreeningApi(AnnotatorApi):
    """The screen serves the annotator's screening studies in turn (selectors.screening_study_for_annotator), or the
    one named in the body."""

    def study(self, request):
        study = selectors.screening_study_for_annotator(user=request.user, name=self.study_name(request))
        if study is None:
            raise NotFound("You are not assigned to a screening study.")
        return study

    @staticmethod
    def item_response(study, figure_id: int, user, **extra) -> Response:
        payload = selectors.screening_payload(study=study, figure_id=figure_id, user=user)
        return Response({"state": "item", "item": payload} | extra)


class ScreeningNextApi(ScreeningApi):
    """The next candidate figure, or `done` / `paused` with where the annotator stands."""

    @extend_schema(request=ItemNextApi.InputSerializer, responses={200: ArtifactNextApi.OutputSerializer})
    def post(self, request):
        study = self.study(request)
        if study.status != Study.Status.ACTIVE:
            detail = f"this study is {study.status}; no new figures are handed out"
            return Response({"state": "paused", "detail": detail, "study": _study_brief(study)})
        figure_id = selectors.screening_next_figure(study=study, user=request.user)
        if figure_id is not None:
            return self.item_response(study, figure_id, request.user)
        summary = selectors.screening_progress(study=study, user=request.user)
        return Response({"state": "done", "study": _study_brief(study), "summary": summary | {"pending": 0}})


class ScreeningDecideApi(ScreeningApi):
    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "ScreeningDecideInput"

        token = serializers.CharField(max_length=200)
        decision = serializers.ChoiceField(choices=[screening_rules.ACCEPT, screening_rules.REJECT])
        reason = serializers.CharField(max_length=4000, required=False, allow_blank=True, default="")

    @extend_schema(request=InputSerializer, responses={200: dict})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        screening_services.screening_decide(
            token=data.validated_data["token"],
            annotator=request.user,
            accepted=data.validated_data["decision"] == screening_rules.ACCEPT,
            reason=data.validated_data["reason"],
        )
        return Response({"stored": True})


class ScreeningSkipApi(ScreeningApi):
    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "ScreeningSkipInput"

        token = serializers.CharField(max_length=200)
        reason = serializers.CharField(max_length=2000, allow_blank=True)

    @extend_schema(request=InputSerializer, responses={200: dict})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        screening_services.screening_skip(annotator=request.user, **data.validated_data)
        return Response({"skipped": True})


class ScreeningUndoApi(ScreeningApi):
    """Delete the last decision (in the named study, else in any) and serve its figure again, with the decision
    (`previous`) to put back."""

    @extend_schema(request=ItemNextApi.InputSerializer, responses={200: dict})
    def post(self, request):
        study = self.study(request) if self.study_name(request) else None
        undone = screening_services.screening_undo(annotator=request.user, study=study)
        return self.item_response(undone.study, undone.figure_id, request.user, previous=undone.previous)
