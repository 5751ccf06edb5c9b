from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers

from core.permissions import IsStaffResearcher

from . import selectors
from .configurations import configuration_pairs


class ConfigurationOutputSerializer(serializers.Serializer):
    slug = serializers.CharField()
    model = serializers.CharField()
    harness = serializers.CharField()
    workflow = serializers.CharField()
    reasoning_effort = serializers.CharField()
    label = serializers.CharField()


class ConfigurationListApi(generics.ListAPIView):
    permission_classes = [IsStaffResearcher]
    serializer_class = ConfigurationOutputSerializer
    pagination_class = None

    def get_queryset(self):
        return selectors.configuration_list()


class ArtifactOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    configuration = serializers.CharField(source="configuration.slug")
    task_id = serializers.CharField(source="figure.task_id")
    gate_passed = serializers.BooleanField(allow_null=True)
    gate_reason = serializers.CharField()
    gate_detail = serializers.CharField()
    pptx_sha256 = serializers.CharField()
    slides = serializers.IntegerField(allow_null=True)
    text_boxes = serializers.IntegerField(allow_null=True)
    shapes = serializers.IntegerField(allow_null=True)
    lines = serializers.IntegerField(allow_null=True)
    connectors = serializers.IntegerField(allow_null=True)
    connectors_attached = serializers.IntegerField(allow_null=True)
    groups = serializers.IntegerField(allow_null=True)
    pictures = serializers.IntegerField(allow_null=True)
    tables = serializers.IntegerField(allow_null=True)
    charts = serializers.IntegerField(allow_null=True)
    largest_picture_ratio = serializers.FloatField(allow_null=True)
    picture_area_ratio = serializers.FloatField(allow_null=True)
    capped = serializers.BooleanField(allow_null=True)
    render_sha256 = serializers.CharField()
    log_status = serializers.CharField()
    turns = serializers.IntegerField(allow_null=True)
    total_tokens = serializers.IntegerField(allow_null=True)
    cost_usd = serializers.FloatField(allow_null=True)


class ArtifactListApi(generics.ListAPIView):
    permission_classes = [IsStaffResearcher]
    serializer_class = ArtifactOutputSerializer

    @extend_schema(parameters=[OpenApiParameter(p, str) for p in ("configuration", "gate_reason", "task_id")])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        q = self.request.query_params
        return selectors.artifact_list(configuration=q.get("configuration"), gate_reason=q.get("gate_reason"), task_id=q.get("task_id"))


class ArtifactDetailApi(generics.RetrieveAPIView):
    permission_classes = [IsStaffResearcher]
    serializer_class = ArtifactOutputSerializer

    def get_object(self):
        return get_object_or_404(selectors.artifact_list(), pk=self.kwargs["pk"])
