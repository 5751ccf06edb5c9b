from django.db import DatabaseError

from core.roles import user_roles


def roles(request):
    held = user_roles(request.user)
    return {"roles": held, "is_staff_role": bool(held - {"annotator"})}


def demo(request):
    """Whether the synthetic demo (core/demo_bundle) is loaded, for the banner and table captions (issue 13)."""
    from agents import selectors as agent_selectors
    from core import demo_bundle

    try:
        loaded = agent_selectors.configurations_by_slugs(slugs=demo_bundle.configuration_slugs()[:1])
    except DatabaseError:  # an error page drawn while the database is down (or not migrated) still renders
        loaded = []
    if not loaded:
        return {"demo": None}
    return {"demo": {"note": demo_bundle.SYNTHETIC_NOTE, "strengths": demo_bundle.stated_strengths()}}
