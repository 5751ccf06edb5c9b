"""The one application error type. Services raise it; the API's exception handler (core.api) and the page views turn
it into an HTTP answer, so domain code never names a status code twice."""

from __future__ import annotations

# What any unexpected failure answers: generic on purpose (no detail can leak an identity to an annotator).
INTERNAL_ERROR = "The server could not complete this request. Reload the page to continue; your earlier votes are kept."


class AppError(Exception):
    """A request the application refuses for a reason the user can act on. `code` is the stable machine-readable name
    in API error bodies ({"error": code, "detail": detail}); `status` the HTTP status it maps to."""

    code = "invalid"
    status = 400

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class Invalid(AppError):
    """The input breaks a rule (a value out of range, an unknown name)."""


class NotFound(AppError):
    code, status = "not_found", 404


class Forbidden(AppError):
    code, status = "forbidden", 403


class Conflict(AppError):
    """The request is well formed but the state does not allow it (a closed study, an expired item)."""

    code, status = "conflict", 409
