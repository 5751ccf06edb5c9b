from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers

from core.permissions import IsStaffResearcher

from . import selectors
from .models import Artifact, RenderEnvironment
from .pptx_audit import AUDIT_STORED


class ConfigurationOutputSerializer(serializers.Serializer):
    slug = serializers.CharField()
    model = serializers.CharField()
    harness = serializers.CharField()
    workflow = serializers.CharField()
    reasoning_effort = serializers.CharField()
    label = serializers.CharField()
    prompt_sha256 = serializers.CharField()
    harness_version = serializers.CharField()
    cli_version = serializers.CharField()
    runtime_image = serializers.CharField()


class RendererOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = RenderEnvironment
        fields = ("libreoffice_version", "rasteriser_version", "fonts_sha256")


class ConfigurationListApi(generics.ListAPIView):
    permission_classes = [IsStaffResearcher]
    serializer_class = ConfigurationOutputSerializer
    pagination_class = None

    def get_queryset(self):
        return selectors.configuration_list()


class ArtifactOutputSerializer(serializers.ModelSerializer):
    configuration = serializers.CharField(source="configuration.slug")
    task_id = serializers.CharField(source="figure.task_id")
    renderer = RendererOutputSerializer(source="render_environment", read_only=True, allow_null=True)

    class Meta:
        model = Artifact
        fields = (
            "id",
            "configuration",
            "task_id",
            "gate_passed",
            "gate_reason",
            "gate_detail",
            "pptx_sha256",
            *AUDIT_STORED,
            "render_sha256",
            "renderer",
            "log_status",
            "turns",
            "total_tokens",
            "cost_usd",
        )


class ArtifactListApi(generics.ListAPIView):
    permission_classes = [IsStaffResearcher]
    serializer_class = ArtifactOutputSerializer

    @extend_schema(parameters=[OpenApiParameter(p, str) for p in ("configuration", "gate_reason", "task_id")])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        q = self.request.query_params
        return selectors.artifact_list(
            configuration=q.get("configuration"), gate_reason=q.get("gate_reason"), task_id=q.get("task_id")
        )


class ArtifactDetailApi(generics.RetrieveAPIView):
    permission_classes = [IsStaffResearcher]
    serializer_class = ArtifactOutputSerializer

    def get_object(self):
        return get_object_or_404(selectors.artifact_list(), pk=self.kwargs["pk"])
