"""What a request answers when the database or the broker is away, in process: 503 with the app's error body and a
Retry-After, on the annotator API, an HTML page and a page that enqueues a task. (test_outages.py does it for real,
through a proxy it cuts.)"""

from unittest import mock

import pytest
from django.db import OperationalError
from django.test import Client
from kombu.exceptions import OperationalError as BrokerError

from core.outages import UNAVAILABLE
from tests.annotation.data import annotator, coordinator

pytestmark = pytest.mark.django_db

REFUSED = 'connection to server at "127.0.0.1", port 5432 failed: Connection refused'


def logged_in(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def test_the_annotator_api_answers_503_with_the_error_body():
    client = logged_in(annotator())
    with mock.patch("annotation.selectors.studies_for_annotator", side_effect=OperationalError(REFUSED)):
        response = client.post("/api/annotate/next/", {}, content_type="application/json")
    assert response.status_code == 503
    assert response.json() == {"error": "unavailable", "detail": UNAVAILABLE}
    assert response["Retry-After"] == "5"
    assert "5432" not in response.content.decode()


def test_a_page_answers_503_in_plain_words():
    client = logged_in(coordinator())
    with mock.patch("config.views.render", side_effect=OperationalError(REFUSED)):
        response = client.get("/")
    assert response.status_code == 503 and response["Content-Type"].startswith("text/plain")
    assert response.content.decode() == UNAVAILABLE


def test_a_broker_outage_while_enqueueing_is_a_503_too():
    from annotation import services
    from tests.annotation.data import SLUGS, build_corpus

    build_corpus(figures=2, configurations=SLUGS[:2])
    services.study_create(name="live", configurations=list(SLUGS[:2]), min_dwell_ms=0)
    client = logged_in(coordinator())
    with mock.patch("bt_elo.tasks.leaderboard_refresh.delay", side_effect=BrokerError("Error 111 connecting")):
        response = client.get("/results/elo/live.json?study=live", HTTP_ACCEPT="application/json")
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"


def test_other_errors_are_still_the_generic_500():
    client = logged_in(annotator())
    with mock.patch("annotation.selectors.studies_for_annotator", side_effect=RuntimeError("a bug")):
        response = client.post("/api/annotate/next/", {}, content_type="application/json")
    assert response.status_code == 500 and response.json()["error"] == "internal"
