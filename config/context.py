from core.roles import user_roles


def roles(request):
    held = user_roles(request.user)
    return {"roles": held, "is_staff_role": bool(held - {"annotator"})}
