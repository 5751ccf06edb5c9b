import logging

from django.contrib.auth.decorators import login_required
from django.db import DatabaseError, connections
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.views import defaults
from django.views.decorators.cache import never_cache

from core.errors import INTERNAL_ERROR
from core.roles import ANNOTATOR, user_roles

from .celery_app import app as celery_app

logger = logging.getLogger("refig.health")
BROKER_TIMEOUT_SECONDS = 3


@login_required
def home(request):
    held = user_roles(request.user)
    if held == {ANNOTATOR}:
        return redirect("annotation:annotate")
    return render(request, "home.html")


@never_cache
def health(request):
    """Liveness: the process answers. Touches nothing else, so a database outage does not get the web process
    restarted (that is what /readyz is for)."""
    return HttpResponse("ok", content_type="text/plain")


def favicon(request):
    return redirect(static("favicon.svg"), permanent=True)


def _database_reachable() -> bool:
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except DatabaseError as error:
        logger.warning("readiness: database unreachable (%s)", type(error).__name__)
        return False


def _broker_reachable() -> bool:
    try:
        with celery_app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, timeout=BROKER_TIMEOUT_SECONDS)
        return True
    except Exception as error:  # kombu raises the transport's own errors (OSError, redis and amqp errors)
        logger.warning("readiness: broker unreachable (%s)", type(error).__name__)
        return False


@never_cache
def ready(request):
    """Readiness: 200 when the database and the Celery broker both answer, 503 otherwise. The body names which
    dependency failed, never its address or credentials."""
    checks = {"database": _database_reachable(), "broker": _broker_reachable()}
    body = {name: "ok" if passed else "unreachable" for name, passed in checks.items()}
    ready_now = all(checks.values())
    return JsonResponse({"status": "ok" if ready_now else "unavailable", **body}, status=200 if ready_now else 503)


# Django's own error answers (no URL matched, an uncaught exception, a refused host): under /api/ they keep the API's
# {"error", "detail"} shape the schema documents; pages get Django's default views (templates 404.html / 500.html when
# they exist). Neither ever shows a path's parameters, a traceback or a setting.
def _api(request) -> bool:
    return request.path_info.startswith("/api/")


def bad_request(request, exception):
    if _api(request):
        return JsonResponse({"error": "invalid", "detail": "Bad request."}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception):
    if _api(request):
        return JsonResponse({"error": "permission_denied", "detail": "You may not do this."}, status=403)
    return defaults.permission_denied(request, exception)


def page_not_found(request, exception):
    if _api(request):
        return JsonResponse({"error": "not_found", "detail": "No such address."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if _api(request):
        return JsonResponse({"error": "internal", "detail": INTERNAL_ERROR}, status=500)
    return defaults.server_error(request)
