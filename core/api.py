"""The kernel's API: the table export endpoint, and the one exception handler every API answers errors through."""

from __future__ import annotations

import logging

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import INTERNAL_ERROR, AppError, Invalid
from .outages import BODY as OUTAGE_BODY
from .outages import RETRY_AFTER_SECONDS, is_outage, outage_log
from .permissions import IsStaffResearcher
from .tables import render_table, table_frame

logger = logging.getLogger("refig.api")


def exception_handler(exc, context) -> Response:
    """Every API error as {"error": <stable code>, "detail": <message or field errors>}; an unexpected exception is
    logged with its traceback and answered with a generic 500 that reveals nothing."""
    if isinstance(exc, AppError):
        return Response({"error": exc.code, "detail": exc.detail}, status=exc.status)
    if is_outage(exc):
        outage_log(context["request"], exc)
        return Response(OUTAGE_BODY, status=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    response = drf_exception_handler(exc, context)
    if response is None:
        view = context.get("view")
        logger.error("internal error in %s", type(view).__name__ if view else "?", exc_info=exc)
        return Response({"error": "internal", "detail": INTERNAL_ERROR}, status=500)
    detail = response.data
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        detail = detail["detail"]
    code = getattr(exc, "default_code", "error")
    if code == "invalid":
        code = "invalid"
    response.data = {"error": str(code), "detail": detail}
    return response


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
            raise Invalid("format must be csv or json")
        params = {k: request.query_params.get(k) for k in ("study", "judge", "run")}
        frame = table_frame(name, **params)
        body = render_table(frame, fmt, name=name)
        if fmt == "csv":
            response = HttpResponse(body, content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
            return response
        return HttpResponse(body, content_type="application/json")
