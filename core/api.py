"""The kernel's API: the table export endpoint, and the one exception handler every API answers errors through."""

from __future__ import annotations

import logging
import re

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import INTERNAL_ERROR, AppError, Invalid
from .outages import BODY as OUTAGE_BODY
from .outages import RETRY_AFTER_SECONDS, is_outage, outage_log
from .permissions import IsStaffResearcher
from .tables import FORMATS, render_table, table_frame, table_notes, table_parameters_check

CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "latex": "application/x-latex; charset=utf-8",
}
EXTENSIONS = {"csv": "csv", "json": "json", "latex": "tex"}
PRICE_PARAMETERS = ("price_input", "price_output")

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
    response.data = {"error": str(code), "detail": detail}
    return response


# The body of every error answer (exception_handler above), as the schema documents it.
ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {"type": "string", "description": "stable code: invalid, not_found, forbidden, conflict, ..."},
        "detail": {"description": "a message, or field name -> list of messages for invalid input"},
    },
    "required": ["error", "detail"],
}
ERROR_RESPONSES = {
    "400": "The input breaks a rule (a value out of range, an unknown name, a malformed body).",
    "403": "Not logged in, a missing CSRF token, or a role that does not allow this.",
    "404": "No such object.",
    "409": "The request is well formed but the current state does not allow it.",
}


def document_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook: every operation answers its errors through exception_handler, so each
    documents 400/403/404/409 with the Error body (unless it states its own)."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    error_body = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, description in ERROR_RESPONSES.items():
                responses.setdefault(status, {"description": description, "content": error_body})
    return result


class TableApi(APIView):
    """Any registered table: ?format=csv|json|latex (as `manage.py export`) and the parameters the table takes
    (?study=, ?judge=, ?run=, ...); one it does not take answers 400 naming it and what the table takes."""

    permission_classes = [IsStaffResearcher]

    def perform_content_negotiation(self, request, force=False):
        # `format` selects the table encoding here, not a DRF renderer.
        return (JSONRenderer(), "application/json")

    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=["json", "csv"], default="json"),
            *(OpenApiParameter(p, str) for p in ("study", "judge", "run")),
            *(OpenApiParameter(p, float, description="economics: USD per million tokens") for p in PRICE_PARAMETERS),
        ],
        responses={
            (200, "application/json"): OpenApiResponse(dict, description="the table's rows as JSON records"),
            (200, "text/csv"): OpenApiResponse(str, description="the table as CSV (?format=csv)"),
        },
    )
    def get(self, request, name: str):
        fmt = request.query_params.get("format", "json")
        if fmt not in FORMATS:
            raise Invalid(f"format must be one of {', '.join(FORMATS)}")
        given = {k: request.query_params.get(k) for k in request.query_params if k != "format"}
        params = table_parameters_check(name, given)
        frame = table_frame(name, **params)
        response = HttpResponse(
            render_table(frame, fmt, name=name, notes=table_notes(name, **params)), content_type=CONTENT_TYPES[fmt]
        )
        # A download, named for the table and its study, rather than text opened in the tab.
        study = "-" + re.sub(r"[^A-Za-z0-9_.-]", "_", params["study"]) if params.get("study") else ""
        response["Content-Disposition"] = f'attachment; filename="{name}{study}.{EXTENSIONS[fmt]}"'
        return response
