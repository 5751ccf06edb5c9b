"""Request hygiene before any view runs, the one-line log of refused requests, and the content security policy."""

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


# A content security policy on every response: pages load scripts, styles, images and data from this site only, so
# nothing (fonts, Swagger UI, analytics) is fetched from another host and an annotator's page cannot leak to one.
# Django 5.2's SecurityMiddleware sets no CSP header; this is the whole of it.

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        # No inline script or style anywhere (the dashboard's and the API docs' are static files): an injected
        # <script> or style attribute does nothing.
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response
