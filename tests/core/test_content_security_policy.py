"""The content security policy allows no inline script or style, and the pages need none."""

import re

import pytest
from django.test import Client

from annotation.services import study_create
from core.services import user_create_with_role
from tests.annotation.data import SLUGS, build_corpus

pytestmark = pytest.mark.django_db
INLINE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=\"|\son[a-z]+=\"", re.IGNORECASE)


def test_the_policy_has_no_unsafe_inline():
    policy = Client().get("/accounts/login/")["Content-Security-Policy"]
    assert "'unsafe-inline'" not in policy
    assert "script-src 'self'" in policy and "style-src 'self'" in policy


def test_the_dashboard_and_the_api_docs_carry_no_inline_script_or_style():
    build_corpus(figures=3)
    study_create(name="csp", configurations=SLUGS)
    client = Client()
    client.force_login(user_create_with_role(username="coord", password="pw-long-enough-1", role="coordinator")[0])
    for url in ("/coordinate/csp/", "/coordinate/", "/api/docs/", "/results/elo?study=csp", "/results/"):
        page = client.get(url).content.decode()
        assert not INLINE.search(page), (url, INLINE.search(page).group(0))
    script = client.get("/api/docs/?script")  # Swagger UI's start-up script, served by the split view
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()
