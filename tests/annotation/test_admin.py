"""annotation/admin.py: the pool's counters and the leases are the services' alone; staff see them, never change them."""

import pytest
from django.test import Client

from annotation.models import Item, Lease
from core.services import user_create_with_role
from tests.annotation.data import PASSWORD, annotator, next_lease
from tests.annotation.helpers import _counters, make_study

pytestmark = pytest.mark.django_db


def _superuser_client() -> Client:
    user, _ = user_create_with_role(username="admin-staff", password=PASSWORD, role="researcher", staff=True)
    user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


def test_a_staff_post_changes_no_counter_and_no_lease_state():
    study, *_ = make_study(figures=1, overlap_rate=0)
    lease = next_lease(study=study, annotator=annotator())
    item = lease.item
    client = _superuser_client()
    counters = _counters(study)
    leases = list(Lease.objects.values_list("pk", "state", "left_is_x", "is_overlap", "item_id", "expires_at"))

    url = f"/admin/annotation/item/{item.pk}/change/"
    assert client.get(url).status_code == 200
    tampered = {"open_count": 0, "submitted_count": 5, "votes": 9, "in_pool": "", "is_overlap": "on", "rank": "0"}
    answer = client.post(url, {**tampered, "expected_label": "x", "explanation": "why", "_save": "Save"})
    assert answer.status_code == 302
    assert _counters(study) == counters
    assert Item.objects.values_list("expected_label", "explanation").get(pk=item.pk) == ("x", "why")

    url = f"/admin/annotation/lease/{lease.pk}/change/"
    assert client.get(url).status_code == 200
    answer = client.post(url, {"state": "submitted", "left_is_x": "", "is_overlap": "on", "_save": "Save"})
    assert answer.status_code in (302, 403)
    assert list(Lease.objects.values_list("pk", "state", "left_is_x", "is_overlap", "item_id", "expires_at")) == leases
    assert _counters(study) == counters

    for model in ("item", "lease"):
        assert client.post(f"/admin/annotation/{model}/add/", {}).status_code == 403
    assert client.post(f"/admin/annotation/lease/{lease.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Lease.objects.filter(pk=lease.pk).exists()
