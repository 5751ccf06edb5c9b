"""The three study roles, as Django groups. Staff and superusers may do everything."""

from django.contrib.auth.models import Group, Permission

ANNOTATOR = "annotator"
COORDINATOR = "coordinator"
RESEARCHER = "researcher"
ROLES: tuple[str, ...] = (ANNOTATOR, COORDINATOR, RESEARCHER)

# Model permissions each role's group carries (app_label.codename). Annotators get none:
# everything they see goes through their own leases.
ROLE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    ANNOTATOR: (),
    COORDINATOR: (
        "corpus.view_figure",
        "agents.view_configuration",
        "agents.view_artifact",
        "annotation.view_study",
        "annotation.add_study",
        "annotation.change_study",
        "annotation.view_comparison",
    ),
    RESEARCHER: (
        "corpus.view_figure",
        "agents.view_configuration",
        "agents.view_artifact",
        "annotation.view_study",
        "annotation.view_comparison",
    ),
}


def user_roles(user) -> set[str]:
    if not getattr(user, "is_authenticated", False):
        return set()
    if user.is_superuser or user.is_staff:
        return set(ROLES)
    cached = getattr(user, _ROLES_ATTRIBUTE, None)
    if cached is None:
        cached = roles_remember(user, set(user.groups.filter(name__in=ROLES).values_list("name", flat=True)))
    return cached


_ROLES_ATTRIBUTE = "_refig_roles"


def roles_remember(user, roles: set[str]) -> set[str]:
    """Keep the user's roles on the instance for the rest of the request (read once, by the auth backend or here)."""
    setattr(user, _ROLES_ATTRIBUTE, roles)
    return roles


def user_has_role(user, *roles: str) -> bool:
    return bool(user_roles(user) & set(roles))


def role_groups_ensure(**_kwargs) -> None:
    """post_migrate hook: create the role groups and give them their permissions (idempotent)."""
    for role, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        wanted = []
        for dotted in perms:
            app_label, codename = dotted.split(".")
            perm = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
            if perm is not None:
                wanted.append(perm)
        group.permissions.add(*wanted)
