from django.db import DatabaseError

from core.roles import user_roles


def roles(request):
    held = user_roles(request.user)
    return {"roles": held, "is_staff_role": bool(held - {"annotator"})}


def demo(request):
    """Whether the synthetic demo (demo/bundle) is loaded, for the banner and table captions (issue 13)."""
    from demo import bundled, selectors

    try:
        loaded = selectors.demo_loaded()
    except DatabaseError:  # an error page drawn while the database is down (or not migrated) still renders
        loaded = False
    if not loaded:
        return {"demo": None}
    return {"demo": {"note": bundled.SYNTHETIC_NOTE, "strengths": bundled.stated_strengths()}}
