"""Login throttling (django-axes) wired into Django's authentication backends."""

from axes.backends import AxesStandaloneBackend
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef

from .roles import ROLES, roles_remember


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes' lockout check on every login made through an HTTP request (the login page, the admin).

    A call with no request (Django's test client `login()`, a shell) has no client address to throttle: axes would
    raise, so it is passed on to the next backend unchecked. Every login path the site serves passes its request.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


class RoleAwareModelBackend(ModelBackend):
    """Django's ModelBackend, whose per-request user load also reads the user's study roles: one query instead of a
    second one for the groups on every request (the annotation benchmark counts queries per request)."""

    def get_user(self, user_id):
        flags = {f"has_role_{role}": Exists(Group.objects.filter(user=OuterRef("pk"), name=role)) for role in ROLES}
        user = get_user_model()._default_manager.annotate(**flags).filter(pk=user_id).first()
        if user is None or not self.user_can_authenticate(user):
            return None
        roles_remember(user, {role for role in ROLES if getattr(user, f"has_role_{role}")})
        return user
