"""Role checks shared by every app's API and pages."""

from django.contrib.auth.mixins import AccessMixin
from rest_framework.permissions import BasePermission

from .roles import COORDINATOR, RESEARCHER, user_has_role


def role_permission(*roles: str) -> type[BasePermission]:
    """A DRF permission class admitting users holding any of `roles` (staff always)."""

    class HasRole(BasePermission):
        message = f"This needs the {' or '.join(roles)} role."

        def has_permission(self, request, view) -> bool:
            return user_has_role(request.user, *roles)

    HasRole.__name__ = "HasRole_" + "_".join(roles)
    return HasRole


IsStaffResearcher = role_permission(COORDINATOR, RESEARCHER)


class RoleRequiredMixin(AccessMixin):
    """Class-based page views: `roles = (COORDINATOR, RESEARCHER)`."""

    roles: tuple[str, ...] = (COORDINATOR, RESEARCHER)

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        if not user_has_role(request.user, *self.roles):
            self.raise_exception = True
            return self.handle_no_permission()
        return super().dispatch(request, *args, **kwargs)
