"""REST API: annotators touch only their own leases and votes; coordinators read and create studies."""

import json

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound
from core.permissions import role_permission
from core.roles import ANNOTATOR, COORDINATOR, RESEARCHER
from core.tables import render_table

from . import selectors, services
from .models import Study

IsAnnotator = role_permission(ANNOTATOR)
IsCoordinator = role_permission(COORDINATOR)
IsStudyReader = role_permission(COORDINATOR, RESEARCHER)


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

        state = serializers.ChoiceField(choices=["item", "done", "none", "paused"])
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
        return Response(
            {
                "state": "done",
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
    annotators = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_configurations(self, study) -> list[str]:
        return [c.slug for c in selectors.study_configurations(study)]

    def get_annotators(self, study) -> list[str]:
        return list(study.annotators.order_by("username").values_list("username", flat=True))


class StudyListApi(APIView):
    class InputSerializer(serializers.ModelSerializer):
        """The study's settings come from the model (defaults, limits, help): one place."""

        configurations = serializers.ListField(child=serializers.CharField(), min_length=2)
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
            fields = ("name", "configurations", "figures", "figure_fields", "figure_sample", *services.STUDY_SETTINGS)
            # Uniqueness is the service's to check (with a message naming the study), not the serializer's.
            extra_kwargs = {"name": {"validators": []}}

    def get_permissions(self):
        return [(IsCoordinator if self.request.method == "POST" else IsStudyReader)()]

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
    permission_classes = [IsStudyReader]

    @extend_schema(responses={200: StudyOutputSerializer})
    def get(self, request, name: str):
        return Response(StudyOutputSerializer(get_object_or_404(Study, name=name)).data)


class StudyCoverageApi(APIView):
    permission_classes = [IsStudyReader]

    @extend_schema(responses={200: dict})
    def get(self, request, name: str):
        study = get_object_or_404(Study, name=name)
        frame = selectors.coverage_frame(study=study.name)
        payload = json.loads(render_table(frame, "json", name="coverage"))
        return Response({"study": study.name, "columns": payload["columns"], "rows": payload["rows"]})
