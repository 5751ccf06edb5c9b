from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static

from core.roles import ANNOTATOR, user_roles


@login_required
def home(request):
    held = user_roles(request.user)
    if held == {ANNOTATOR}:
        return redirect("annotation:annotate")
    return render(request, "home.html")


def health(request):
    return HttpResponse("ok", content_type="text/plain")


def favicon(request):
    return redirect(static("favicon.svg"), permanent=True)
