"""Request hygiene before any view runs, and the one-line log of refused requests."""

from __future__ import annotations

import logging
import re

from django.http import HttpResponse, JsonResponse

# C0 controls and DEL. Databases refuse NUL in a string (PostgreSQL raises), file paths cannot hold it, and no URL
# of this site ever carries any of them; tab, newline and carriage return stay allowed in query values (free text).
PATH_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
QUERY_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
REFUSAL = "The address contains a control character (such as NUL), which no page of this site accepts."


class ControlCharacterMiddleware:
    """Answer 400 to a path or query string (names or values, once decoded) holding a control character, before URL
    resolution, so no view, lookup or file access has to defend against one."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if PATH_CONTROL.search(request.path_info) or any(
            QUERY_CONTROL.search(key) or any(QUERY_CONTROL.search(value) for value in values)
            for key, values in request.GET.lists()
        ):
            if request.path_info.startswith("/api/"):
                return JsonResponse({"error": "invalid", "detail": REFUSAL}, status=400)
            return HttpResponse(REFUSAL, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class ForbiddenOneLineFilter(logging.Filter):
    """Django logs every PermissionDenied with its traceback (django.request); a 403 is an expected refusal, so it
    is kept as its one-line message ("Forbidden (Permission denied): /path")."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
        return True
