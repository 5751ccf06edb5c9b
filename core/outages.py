"""An outage of the database or the broker is answered 503 with the app's error body ({"error": "unavailable",
"detail": ...}) and a Retry-After, on API and pages alike: never a 500, never a traceback. The API's exception handler
(core.api) asks `outage_response`; page views get it from `OutageMiddleware` (listed last in MIDDLEWARE, so it sees a
view's exception before any other middleware turns it into a 500)."""

from __future__ import annotations

import logging

from django.db import InterfaceError
from django.db import OperationalError as DatabaseUnavailable
from django.http import HttpResponse, JsonResponse
from kombu.exceptions import OperationalError as BrokerUnavailable
from redis.exceptions import ConnectionError as RedisUnavailable
from redis.exceptions import TimeoutError as RedisTimeout

logger = logging.getLogger("refig.outages")

# A connection refused, dropped or timed out by PostgreSQL/SQLite (Django's OperationalError, InterfaceError), by the
# Celery broker while sending a task (kombu), or by a Redis cache.
OUTAGE_ERRORS = (DatabaseUnavailable, InterfaceError, BrokerUnavailable, RedisUnavailable, RedisTimeout)
UNAVAILABLE = "The service is briefly unavailable. Try again in a moment; your earlier votes are kept."
RETRY_AFTER_SECONDS = 5
BODY = {"error": "unavailable", "detail": UNAVAILABLE}


def is_outage(exc: BaseException) -> bool:
    return isinstance(exc, OUTAGE_ERRORS)


def outage_log(request, exc: BaseException) -> None:
    # A message, not a traceback: an outage is an operational event, and its cause is in the exception's text.
    logger.warning("service unavailable during %s %s: %s: %s", request.method, request.path, type(exc).__name__, exc)


def outage_response(request, exc: BaseException, *, json: bool) -> HttpResponse | None:
    """The 503 answer for an outage, or None when `exc` is something else."""
    if not is_outage(exc):
        return None
    outage_log(request, exc)
    if json:
        response = JsonResponse(BODY, status=503)
    else:
        response = HttpResponse(UNAVAILABLE, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class OutageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        wants_json = request.path.startswith("/api/") or "json" in request.headers.get("Accept", "")
        return outage_response(request, exception, json=wants_json)
