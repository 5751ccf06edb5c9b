"""No input answers 500: control characters in any URL, out-of-range study settings, degenerate plots, admin add
pages; health and readiness; login throttling; API authentication (session + CSRF, token, never Basic); 403s in one
log line; one live-leaderboard refresh in flight."""

import base64
import io
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import resolve
from PIL import Image

from annotation import services
from annotation.models import Study
from bt_elo import plots
from core.middleware import ForbiddenOneLineFilter
from core.services import api_token_issue, user_create_with_role
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, coordinator
from tests.annotation.test_blinding_sweep import concrete_urls, parameter_values, url_patterns
from tests.annotation.test_blinding_sweep import world as world  # noqa: F401  (the sweep's fixture)

ROOT = Path(__file__).resolve().parent.parent.parent


def staff_client():
    user, _ = user_create_with_role(username="staff-hard", password=PASSWORD, role="researcher", staff=True)
    user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


def with_nul_in_path(url: str) -> str:
    """`url` with a NUL (percent-encoded, as a browser or curl sends it) at the end of its last path segment."""
    path, slash = (url[:-1], "/") if url.endswith("/") and url != "/" else (url, "")
    return f"{path}%00{slash}"


# --- control characters -----------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_nul_in_path_or_query_of_every_url_pattern_is_400(world):
    """Every URL pattern of the site, as the annotator and as staff: a NUL in the path or in a query value is 400."""
    values = parameter_values(world)
    annotator_client, staff = world["client"], staff_client()
    lease = world["lease"]
    checked, wrong = 0, []
    for chain in url_patterns():
        url = next(u for u in concrete_urls(chain, values) if resolve(u).func == chain[-1].callback)
        for client in (annotator_client, staff):
            for bad in (with_nul_in_path(url), f"{url}?study=%00", f"{url}?judge=a%00b&run=1", f"{url}?%00=x"):
                response = client.get(bad)
                checked += 1
                if response.status_code != 400:
                    wrong.append(f"GET {bad} -> {response.status_code}")
            if url.startswith("/api/"):
                response = client.post(f"{url}?x=%00", {}, content_type="application/json")
                if response.status_code != 400 or response.json()["error"] != "invalid":
                    wrong.append(f"POST {url}?x=%00 -> {response.status_code}")
    assert not wrong, "\n".join(wrong[:30])
    assert checked >= 8 * 30, checked
    # The annotator's image URL (a path parameter that reaches a database lookup) by name.
    assert annotator_client.get(f"/annotate/img/{lease.token}%00/a").status_code == 400
    assert annotator_client.get(f"/annotate/img/{lease.token}/a").status_code == 200


@pytest.mark.django_db
def test_other_control_characters_refused_but_text_whitespace_allowed_in_queries(world):
    client = staff_client()
    for code in ("01", "08", "0b", "1f", "7f", "0a"):
        assert client.get(f"/results/%{code}").status_code == 400, code
        assert client.get(f"/results/?study=a%{code}").status_code == (200 if code == "0a" else 400), code
    response = client.get("/api/figures/?field=%01")
    assert response.status_code == 400 and response.json()["error"] == "invalid"
    assert client.get("/results/?study=&judge=%09").status_code == 200  # a tab in free text is not an attack


# --- out-of-range input, plots, admin ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_out_of_range_study_settings_are_400_through_api_and_form():
    """Beyond the model's validators (and a database column's range): a field error, never an overflow."""
    build_corpus(figures=2, configurations=SLUGS[:2])
    client = Client()
    client.force_login(coordinator("coord-range"))
    base = {"name": "big", "configurations": list(SLUGS[:2])}
    valid_form = {**base, "target_per_pair": "5", "overlap_rate": "0.1", "seed": "0", "min_dwell_ms": "0"}
    valid_form.update(lease_seconds="900", quota_per_annotator="10")
    for field, value in (
        ("target_per_pair", "1099511627776"),
        ("min_dwell_ms", "2147483648"),
        ("lease_seconds", "1000000000000"),
        ("quota_per_annotator", "-1"),
        ("seed", "1180591620717411303424"),
        ("overlap_rate", "1e999"),
    ):
        body = f'{{"name": "big", "configurations": {json.dumps(base["configurations"])}, "{field}": {value}}}'
        response = client.post("/api/studies/", body, content_type="application/json")
        assert response.status_code == 400, (field, response.status_code, response.content[:200])
        assert response.json()["error"] == "invalid" and field in response.json()["detail"], response.json()
        response = client.post("/coordinate/", {**valid_form, field: value})
        assert response.status_code == 200, (field, response.status_code)  # the form again, showing the error
        assert field in response.context["form"].errors, (field, response.context["form"].errors)
    assert not Study.objects.exists()
    assert client.post("/coordinate/", valid_form).status_code == 302  # the same form in range is accepted
    assert Study.objects.filter(name="big", target_per_pair=5).exists()


def png_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        return image.size


def test_elo_plot_draws_zero_width_and_inverted_intervals():
    """A bootstrap where every refit agrees gives ci_low == ci_high; the point estimate can sit 1e-12 outside."""
    elo = pd.DataFrame(
        {
            "configuration": ["x-direct", "x-specialized", "y-direct"],
            "elo": [1000.0 + 1e-12, 1000.0 - 1e-12, 950.0],
            "ci_low": [1000.0, 1000.0, 950.0],
            "ci_high": [1000.0, 1000.0, 950.0],
        }
    )
    configurations = pd.DataFrame(
        {
            "configuration": ["x-direct", "x-specialized", "y-direct"],
            "model": ["x", "x", "y"],
            "harness": ["h", "h", "h"],
            "workflow": ["direct", "specialized", "direct"],
            "label": ["X d", "X s", "Y d"],
        }
    )
    width, height = png_size(plots.elo_plot(elo, configurations, "png"))
    assert width > 300 and height > 300
    assert plots.elo_plot(elo, configurations, "svg").lstrip().startswith(b"<?xml")
    bars = plots._error_bars(elo["elo"], elo["ci_low"], elo["ci_high"])
    assert bars.shape == (2, 3) and (bars >= 0).all() and np.allclose(bars, 0, atol=1e-9)


@pytest.mark.django_db
def test_plot_for_unknown_study_is_404_not_500():
    build_corpus(figures=2, configurations=SLUGS[:2])
    services.study_create(name="only", configurations=list(SLUGS[:2]), min_dwell_ms=0, overlap_rate=0)
    client = staff_client()
    assert client.get("/results/plot/elo.png?study=no-such-study").status_code == 404
    assert client.get("/results/plot/agreement.png?study=no-such-study").status_code == 404
    ok = client.get("/results/plot/elo.png?study=only")
    assert ok.status_code == 200 and png_size(ok.content)[0] > 100


@pytest.mark.django_db
def test_admin_cannot_add_figures_or_artifacts_and_says_why():
    build_corpus(figures=1, configurations=SLUGS[:1])
    client = staff_client()
    for model, command in (("corpus/figure", "import_corpus"), ("agents/artifact", "import_artifacts")):
        assert client.get(f"/admin/{model}/add/").status_code == 403
        assert client.post(f"/admin/{model}/add/", {}).status_code == 403
        page = client.get(f"/admin/{model}/")
        assert page.status_code == 200
        text = page.content.decode()
        assert f"manage.py {command}" in text and f"/admin/{model}/add/" not in text


# --- health and readiness ----------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_healthz_and_readyz_in_process():
    client = Client()
    health = client.get("/healthz")
    assert health.status_code == 200 and health.content == b"ok"
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "database": "ok", "broker": "ok"}


PROBE = textwrap.dedent(
    """
    import json, django
    django.setup()
    from django.conf import settings
    from django.test import Client
    client = Client(raise_request_exception=False)
    answers = {"debug": settings.DEBUG}
    for path in ("/healthz", "/readyz"):
        response = client.get(path)
        answers[path] = [response.status_code, response.content.decode()]
    response = client.post("/accounts/login/", {"username": "someone", "password": "secret-typed-in"})
    answers["login"] = [response.status_code, response.content.decode()]
    print(json.dumps(answers))
    """
)


def probe(tmp_path, **env) -> dict:
    """The probe's answers in a fresh process of the embedded default, with `env` on top."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "CELERY_"))}
    base.update(DJANGO_SETTINGS_MODULE="config.settings", REFIG_VAR_DIR=str(tmp_path), **env)
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_database_down_healthz_ok_readyz_503_and_no_debug_page(tmp_path):
    secret = "db-pass-5ecr3t"
    url = f"postgres://refig:{secret}@127.0.0.1:1/refig"
    answers = probe(tmp_path, DATABASE_URL=url)
    assert answers["debug"] is False
    assert answers["/healthz"] == [200, "ok"]
    status, body = answers["/readyz"]
    assert status == 503 and json.loads(body) == {"status": "unavailable", "database": "unreachable", "broker": "ok"}
    status, body = answers["login"]
    assert status == 503  # core.outages: the database is away, said plainly; never the debug page
    for leak in (secret, "DATABASE_URL", "127.0.0.1:1", "Traceback", "sessionid", "secret-typed-in", "SECRET_KEY"):
        assert leak not in body, leak


def test_broker_down_readyz_503_and_up_200(tmp_path):
    down = probe(tmp_path, CELERY_BROKER_URL="redis://127.0.0.1:1/11")
    assert down["/readyz"][0] == 503
    assert json.loads(down["/readyz"][1]) == {"status": "unavailable", "database": "ok", "broker": "unreachable"}
    up = probe(tmp_path, CELERY_BROKER_URL="redis://127.0.0.1:6379/11")
    assert up["/readyz"][0] == 200 and json.loads(up["/readyz"][1])["broker"] == "ok"


def test_debug_only_when_asked(tmp_path):
    assert probe(tmp_path)["debug"] is False
    assert probe(tmp_path, DJANGO_DEBUG="1")["debug"] is True


# --- login throttling -------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_five_wrong_passwords_lock_that_username_from_that_address():
    annotator("ann-locked")
    annotator("ann-other")
    client = Client()
    for _ in range(4):
        wrong = client.post("/accounts/login/", {"username": "ann-locked", "password": "wrong-password"})
        assert wrong.status_code == 200 and not wrong.wsgi_request.user.is_authenticated
    fifth = client.post("/accounts/login/", {"username": "ann-locked", "password": "wrong-password"})
    assert fifth.status_code == 429
    # Locked out: even the right password is refused now, without being checked.
    right = client.post("/accounts/login/", {"username": "ann-locked", "password": PASSWORD})
    assert right.status_code == 429 and "_auth_user_id" not in client.session
    # Another account from the same address is unaffected.
    other = Client().post("/accounts/login/", {"username": "ann-other", "password": PASSWORD})
    assert other.status_code == 302


@pytest.mark.django_db
def test_a_correct_login_resets_the_count():
    annotator("ann-reset")
    client = Client()
    for _ in range(4):
        client.post("/accounts/login/", {"username": "ann-reset", "password": "wrong-password"})
    assert client.post("/accounts/login/", {"username": "ann-reset", "password": PASSWORD}).status_code == 302
    client.logout()
    for _ in range(4):
        assert client.post("/accounts/login/", {"username": "ann-reset", "password": "nope"}).status_code == 200


# --- API authentication -----------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_api_refuses_http_basic_and_accepts_a_token():
    user_create_with_role(username="res-token", password=PASSWORD, role="researcher")
    basic = base64.b64encode(f"res-token:{PASSWORD}".encode()).decode()
    refused = Client().get("/api/configurations/", HTTP_AUTHORIZATION=f"Basic {basic}")
    assert refused.status_code == 403 and refused.json()["error"] == "not_authenticated"
    key = api_token_issue(username="res-token")
    accepted = Client().get("/api/configurations/", HTTP_AUTHORIZATION=f"Token {key}")
    assert accepted.status_code == 200
    assert Client().get("/api/configurations/", HTTP_AUTHORIZATION=f"Token {key[:-1]}x").status_code == 403


@pytest.mark.django_db
def test_api_token_command_prints_resets_and_refuses_unknown_users():
    user_create_with_role(username="res-cmd", password=PASSWORD, role="researcher")
    out = io.StringIO()
    call_command("api_token", "res-cmd", stdout=out)
    first = out.getvalue().strip()
    again = io.StringIO()
    call_command("api_token", "res-cmd", stdout=again)
    assert again.getvalue().strip() == first and len(first) == 40
    reset = io.StringIO()
    call_command("api_token", "res-cmd", "--reset", stdout=reset)
    new = reset.getvalue().strip()
    assert new != first
    assert Client().get("/api/configurations/", HTTP_AUTHORIZATION=f"Token {first}").status_code == 403
    assert Client().get("/api/configurations/", HTTP_AUTHORIZATION=f"Token {new}").status_code == 200
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("api_token", "nobody")


@pytest.mark.django_db
def test_session_api_writes_need_the_csrf_token_and_token_writes_do_not():
    build_corpus(figures=3, configurations=SLUGS[:2])
    study = services.study_create(name="csrf", configurations=list(SLUGS[:2]), min_dwell_ms=0, overlap_rate=0)
    user = annotator("ann-csrf")
    study.annotators.add(user)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    refused = client.post("/api/annotate/next/", {}, content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    client.get("/annotate/")  # sets the csrftoken cookie, as the page does for its script
    token = client.cookies["csrftoken"].value
    accepted = client.post("/api/annotate/next/", {}, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 200
    key = api_token_issue(username="ann-csrf")
    scripted = Client(enforce_csrf_checks=True).post(
        "/api/annotate/next/", {}, content_type="application/json", HTTP_AUTHORIZATION=f"Token {key}"
    )
    assert scripted.status_code == 200


# --- 403 logging and the live leaderboard ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_403_is_logged_as_one_line_without_traceback():
    console = next(
        h for h in logging.getLogger().handlers if any(isinstance(f, ForbiddenOneLineFilter) for f in h.filters)
    )
    stream = io.StringIO()
    previous = console.setStream(stream)
    try:
        client = Client()
        client.force_login(annotator("ann-403"))
        assert client.get("/coordinate/").status_code == 403  # PermissionDenied from the role check
        assert client.get("/results/").status_code == 403
    finally:
        console.setStream(previous)
    lines = [line for line in stream.getvalue().splitlines() if line.strip()]
    assert lines == ["Forbidden (Permission denied): /coordinate/", "Forbidden (Permission denied): /results/"], lines
    # A 500 keeps its traceback.
    record = logging.LogRecord(
        "django.request", logging.ERROR, __file__, 1, "boom", (), (ValueError, ValueError(), None)
    )
    record.status_code = 500
    assert ForbiddenOneLineFilter().filter(record) and record.exc_info is not None
