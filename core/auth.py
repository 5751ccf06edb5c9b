"""Login throttling (django-axes) wired into Django's authentication backends."""

from axes.backends import AxesStandaloneBackend


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes' lockout check on every login made through an HTTP request (the login page, the admin).

    A call with no request (Django's test client `login()`, a shell) has no client address to throttle: axes would
    raise, so it is passed on to the next backend unchecked. Every login path the site serves passes its request.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)
