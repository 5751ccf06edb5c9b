"""The study API states every quality-control setting a study has, attention and repeat rates included."""

import pytest
from django.test import Client

from annotation import services
from core.services import user_create_with_role
from tests.annotation.data import SLUGS, build_corpus

pytestmark = pytest.mark.django_db


def test_study_detail_carries_attention_and_repeat_rates():
    build_corpus(figures=2)
    services.study_create(name="rates", configurations=SLUGS, attention_rate=0.1, repeat_rate=0.05)
    client = Client()
    client.force_login(user_create_with_role(username="res", password="pw-long-enough-1", role="researcher")[0])
    body = client.get("/api/studies/rates/").json()
    assert (body["attention_rate"], body["repeat_rate"]) == (0.1, 0.05)
