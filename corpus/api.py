from django.http import FileResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.views import APIView

from core.permissions import IsStaffResearcher

from . import selectors


class FigureOutputSerializer(serializers.Serializer):
    task_id = serializers.CharField()
    arxiv_id = serializers.CharField()
    arxiv_version = serializers.CharField()
    title = serializers.CharField()
    field = serializers.CharField()
    image_format = serializers.CharField()
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    megapixels = serializers.FloatField()
    orientation = serializers.CharField()
    file_size = serializers.IntegerField()
    sha256 = serializers.CharField()


class FigureDetailSerializer(FigureOutputSerializer):
    authors = serializers.ListField(child=serializers.CharField())
    abs_url = serializers.URLField()
    pdf_url = serializers.URLField()
    source_url = serializers.URLField()
    license = serializers.CharField()
    license_url = serializers.CharField()
    caption = serializers.CharField()
    label = serializers.CharField()
    source_path = serializers.CharField()
    selection_score = serializers.FloatField()
    selection_evidence = serializers.JSONField()
    image_mode = serializers.CharField()


class FigureListApi(generics.ListAPIView):
    permission_classes = [IsStaffResearcher]
    serializer_class = FigureOutputSerializer

    @extend_schema(parameters=[OpenApiParameter("field", str), OpenApiParameter("search", str)])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return selectors.figure_list(
            field=self.request.query_params.get("field"), search=self.request.query_params.get("search")
        )


class FigureDetailApi(generics.RetrieveAPIView):
    permission_classes = [IsStaffResearcher]
    serializer_class = FigureDetailSerializer

    def get_object(self):
        from django.shortcuts import get_object_or_404

        return get_object_or_404(selectors.figure_list(), task_id=self.kwargs["task_id"])


class FigureImageApi(APIView):
    permission_classes = [IsStaffResearcher]

    @extend_schema(responses={(200, "image/png"): bytes})
    def get(self, request, task_id: str):
        from django.shortcuts import get_object_or_404

        figure = get_object_or_404(selectors.figure_list(), task_id=task_id)
        content_type = "image/png" if figure.image_format == "PNG" else "image/jpeg"
        return FileResponse(figure.image.open("rb"), content_type=content_type)
