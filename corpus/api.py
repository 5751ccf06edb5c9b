from django.http import FileResponse, HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from . import selectors
from .permissions import IsStaffResearcher
from .tables import TableError, render_table, table_frame


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
        return selectors.figure_list(field=self.request.query_params.get("field"), search=self.request.query_params.get("search"))


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


class TableApi(APIView):
    """Any registered table: ?format=csv|json, ?study=, ?judge=, ?run=."""

    permission_classes = [IsStaffResearcher]

    def perform_content_negotiation(self, request, force=False):
        # `format` selects the table encoding here, not a DRF renderer.
        return (JSONRenderer(), "application/json")

    @extend_schema(
        parameters=[OpenApiParameter(p, str) for p in ("format", "study", "judge", "run")],
        responses={200: dict},
    )
    def get(self, request, name: str):
        fmt = request.query_params.get("format", "json")
        if fmt not in ("csv", "json"):
            return Response({"detail": "format must be csv or json"}, status=400)
        params = {k: request.query_params.get(k) for k in ("study", "judge", "run")}
        try:
            frame = table_frame(name, **params)
        except TableError as error:
            return Response({"detail": str(error)}, status=404)
        except (LookupError, ValueError) as error:
            return Response({"detail": str(error)}, status=400)
        body = render_table(frame, fmt, name=name)
        if fmt == "csv":
            response = HttpResponse(body, content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
            return response
        return HttpResponse(body, content_type="application/json")
