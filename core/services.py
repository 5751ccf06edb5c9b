"""Every write of the kernel: accounts with a study role, and invitations."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from rest_framework.authtoken.models import Token

from .errors import Invalid
from .roles import ROLES, role_groups_ensure


def user_create_with_role(*, username: str, password: str, role: str, email: str = "", staff: bool = False):
    if role not in ROLES:
        raise Invalid(f"unknown role {role!r}; one of {', '.join(ROLES)}")
    role_groups_ensure()
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username, defaults={"email": email})
    user.set_password(password)
    if staff:
        user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name=role))
    return user, created


@dataclass(frozen=True)
class Invitation:
    user: object
    created: bool
    # Path of the one-time "choose your password" page; None when the account has a password already.
    set_password_path: str | None


def user_invite(*, username: str, role: str, email: str = "") -> Invitation:
    """An account for someone who chooses their own password through a one-time link (Django's reset tokens: the link
    stops working once the password is set). An existing account only gains the role."""
    if role not in ROLES:
        raise Invalid(f"unknown role {role!r}; one of {', '.join(ROLES)}")
    User = get_user_model()
    username = (username or "").strip()
    try:
        User._meta.get_field(User.USERNAME_FIELD).run_validators(username)
    except ValidationError as error:
        raise Invalid(f"username {username!r}: {' '.join(error.messages)}") from None
    if not username:
        raise Invalid("a username is required")
    role_groups_ensure()
    with transaction.atomic():
        user, created = User.objects.get_or_create(username=username, defaults={"email": email.strip()})
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        user.groups.add(Group.objects.get(name=role))
    if user.has_usable_password():
        return Invitation(user=user, created=created, set_password_path=None)
    path = reverse(
        "password-set",
        kwargs={
            "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
            "token": default_token_generator.make_token(user),
        },
    )
    return Invitation(user=user, created=created, set_password_path=path)


def api_token_issue(*, username: str, reset: bool = False) -> str:
    """The API token of an existing, active account (created on first call): scripts send it as
    `Authorization: Token <key>`. `reset` replaces it, so the old key stops working at once."""
    User = get_user_model()
    user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
    if user is None:
        raise Invalid(f"no user named {username!r}")
    if not user.is_active:
        raise Invalid(f"user {username!r} is inactive")
    with transaction.atomic():
        if reset:
            Token.objects.filter(user=user).delete()
        token, _ = Token.objects.get_or_create(user=user)
    return token.key
