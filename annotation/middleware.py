"""Blinding also holds when something breaks: an annotator never sees a traceback or a debug page, whose local
variables would show artifact and configuration ids."""

import logging

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse

from core.errors import INTERNAL_ERROR

logger = logging.getLogger("annotation")

# The annotator's screen and the API it calls (annotation/urls.py names); the api-* ones answer in JSON.
ANNOTATOR_VIEWS = frozenset(
    {
        "annotate",
        "annotate-study",
        "lease-image",
        "api-next",
        "api-submit",
        "api-skip",
        "api-undo",
        "api-summary",
        "api-studies",
    }
)
FAILED = INTERNAL_ERROR


class AnnotatorErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        match = request.resolver_match
        annotator_view = match is not None and match.namespace == "annotation" and match.url_name in ANNOTATOR_VIEWS
        if not annotator_view or isinstance(exception, (Http404, PermissionDenied)):
            return None
        logger.exception("annotator request failed: %s %s", request.method, request.path)
        if match.url_name.startswith("api-"):
            return JsonResponse({"error": "internal", "detail": FAILED}, status=500)
        return HttpResponse(FAILED, status=500, content_type="text/plain; charset=utf-8")
