"""Annotator and coordinator APIs, per-lease images, pages."""
import io

import pytest
from django.test import Client
from PIL import Image

from annotation import services
from annotation.models import Comparison, Lease
from corpus.tables import TABLES
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, coordinator

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    build_corpus(figures=4)
    return services.study_create(name="pilot", configurations=SLUGS, min_dwell_ms=0)


def login(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_annotator_flow_over_the_api(study):
    user = annotator()
    study.annotators.add(user)
    client = login(user)
    item = client.post("/api/annotate/next/", content_type="application/json").json()
    assert item["state"] == "item"
    payload = item["item"]
    assert set(payload) == {"token", "images", "audit_a", "audit_b", "rendered_a", "rendered_b", "progress", "rules", "expires_in_s"}
    assert [k for k, _ in payload["audit_a"]] == [k for k, _ in payload["audit_b"]]
    token = payload["token"]
    assert payload["images"]["a"] == f"/annotate/img/{token}/a"
    bad = client.post("/api/annotate/submit/", {"token": token, "outcome": "tie_success"}, content_type="application/json")
    assert bad.status_code == 400 and "reason" in bad.json()["detail"]
    body = {"token": token, "outcome": "a", "reason": "", "dwell_ms": 4000, "decision_ms": 3000}
    first = client.post("/api/annotate/submit/", body, content_type="application/json")
    again = client.post("/api/annotate/submit/", body, content_type="application/json")
    assert first.status_code == again.status_code == 200 and Comparison.objects.count() == 1
    assert first.json()["progress"] == {"done": 1, "quota": 50}
    undo = client.post("/api/annotate/undo/", content_type="application/json").json()
    assert undo["item"]["token"] == token
    nxt = client.post("/api/annotate/next/", content_type="application/json").json()
    assert nxt["item"]["token"] == token  # the reopened item comes back
    skip = client.post("/api/annotate/skip/", {"token": token, "reason": "cannot read"}, content_type="application/json")
    assert skip.status_code == 200 and Lease.objects.get(token=token).state == "skipped"
    late = client.post("/api/annotate/submit/", body, content_type="application/json")
    assert late.status_code == 409 and "skipped" in late.json()["detail"]
    assert client.get("/api/annotate/summary/").json()["skipped"] == 1


def test_annotators_cannot_touch_foreign_leases_or_coordinator_endpoints(study):
    one, two = annotator("ann-one"), annotator("ann-two")
    study.annotators.add(one, two)
    token = login(one).post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
    other = login(two)
    response = other.post("/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 5000}, content_type="application/json")
    assert response.status_code == 403 and "another annotator" in response.json()["detail"]
    assert other.get(f"/annotate/img/{token}/a").status_code == 404
    assert other.get("/api/studies/").status_code == 403
    assert other.get("/coordinate/").status_code == 403
    assert login(coordinator()).post("/api/annotate/next/", content_type="application/json").status_code == 403
    unassigned = login(annotator("ann-three")).post("/api/annotate/next/", content_type="application/json").json()
    assert unassigned["state"] == "none"


def test_lease_images_are_private_clean_pngs(study, tmp_path):
    user = annotator()
    study.annotators.add(user)
    client = login(user)
    token = client.post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
    lease = Lease.objects.get(token=token)
    # give the stored rendering metadata that must not survive
    from django.core.files.storage import default_storage
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Title", "cfg-alpha-direct secret")
    buffer = io.BytesIO()
    Image.new("RGB", (50, 40), (1, 2, 3)).save(buffer, format="PNG", pnginfo=info, icc_profile=b"\0" * 200)
    name = default_storage.save("renders/tagged.png", io.BytesIO(buffer.getvalue()))
    for artifact in (lease.item.artifact_x, lease.item.artifact_y):
        artifact.render_png = name
        artifact.save()
    for side in ("source", "a", "b"):
        response = client.get(f"/annotate/img/{token}/{side}")
        assert response.status_code == 200 and response["Content-Type"] == "image/png"
        assert response["Cache-Control"] == "private, no-store" and "Content-Disposition" not in response
        data = response.content
        assert b"tEXt" not in data and b"iCCP" not in data and b"eXIf" not in data and b"secret" not in data
        Image.open(io.BytesIO(data)).verify()
    assert client.get(f"/annotate/img/{token}/x").status_code == 404


def test_coordinator_api_and_pages(study):
    client = login(coordinator())
    listing = client.get("/api/studies/").json()
    assert listing[0]["name"] == "pilot" and listing[0]["configurations"] == list(SLUGS)
    created = client.post("/api/studies/", {"name": "second", "configurations": list(SLUGS[:3]), "target_per_pair": 5}, content_type="application/json")
    assert created.status_code == 201 and created.json()["target_per_pair"] == 5
    coverage = client.get("/api/studies/second/coverage/").json()
    assert coverage["columns"][:4] == ["config_x", "config_y", "n", "target"] and len(coverage["rows"]) == 3
    assert client.get("/api/studies/second/").json()["name"] == "second"
    page = client.get("/coordinate/")
    assert page.status_code == 200 and b"pilot" in page.content
    form = client.post("/coordinate/", {"name": "third", "configurations": list(SLUGS), "target_per_pair": 20, "overlap_rate": 0.1, "seed": 3,
                                         "quota_per_annotator": 10, "min_dwell_ms": 1000, "lease_seconds": 600, "include_gate_failed": "on"})
    assert form.status_code == 302
    picked = client.post("/coordinate/", {"name": "picked", "configurations": list(SLUGS[:2]), "target_per_pair": 5, "overlap_rate": 0, "seed": 1,
                                           "quota_per_annotator": 10, "min_dwell_ms": 0, "lease_seconds": 600, "figure_fields": ["cs.CV"],
                                           "figures": "task-fig-0000\n task-fig-0002, task-fig-0003", "figure_sample": 2})
    assert picked.status_code == 302
    from annotation.models import Study as StudyModel

    chosen = set(StudyModel.objects.get(name="picked").figures.values_list("task_id", flat=True))
    assert len(chosen) == 2 and chosen <= {"task-fig-0000", "task-fig-0002", "task-fig-0003"}
    refused = client.post("/coordinate/", {"name": "refused", "configurations": list(SLUGS[:2]), "target_per_pair": 5, "overlap_rate": 0, "seed": 1,
                                            "quota_per_annotator": 10, "min_dwell_ms": 0, "lease_seconds": 600, "figures": "task-nope"})
    assert refused.status_code == 200 and b"unknown figures: task-nope" in refused.content
    by_api = client.post("/api/studies/", {"name": "api-picked", "configurations": list(SLUGS[:2]), "figure_fields": ["cs.CV"], "figure_sample": 1},
                         content_type="application/json")
    assert by_api.status_code == 201 and StudyModel.objects.get(name="api-picked").figures.count() == 1
    user = annotator()
    client.post("/coordinate/third/", {"action": "annotators", "annotators": [user.pk]})
    client.post("/coordinate/third/", {"action": "status", "status": "paused"})
    from annotation.models import Study

    third = Study.objects.get(name="third")
    assert third.status == "paused" and list(third.annotators.all()) == [user] and third.seed == 3
    dashboard = client.get("/coordinate/third/")
    assert dashboard.status_code == 200 and b'id="heatmap"' in dashboard.content and b"live.json" in dashboard.content
    assert {"comparisons", "coverage"} <= set(TABLES)
    csv = client.get("/api/tables/coverage/?format=csv&study=pilot")
    assert csv.status_code == 200 and csv.content.decode().startswith("config_x,config_y,n,target")


def test_annotate_page_has_no_item_data(study):
    user = annotator()
    study.annotators.add(user)
    response = login(user).get("/annotate/")
    assert response.status_code == 200 and response["Cache-Control"] == "private, no-store"
    assert b"annotate.js" in response.content and b"cfg-" not in response.content


def test_annotator_errors_reveal_nothing_even_in_debug(study, settings, monkeypatch):
    settings.DEBUG = True
    user = annotator()
    study.annotators.add(user)
    client = login(user)
    client.raise_request_exception = False
    token = client.post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
    # out-of-range numbers are input errors, not server errors
    huge = client.post("/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 10**20}, content_type="application/json")
    assert huge.status_code == 400 and "dwell_ms" in huge.json()

    def broken(**kwargs):
        raise RuntimeError("cfg-alpha-direct artifact 17 task-fig-0001")

    monkeypatch.setattr(services, "comparison_submit", broken)
    failed = client.post("/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 10}, content_type="application/json")
    assert failed.status_code == 500 and failed["Content-Type"] == "application/json"
    body = failed.content.decode()
    assert "Reload" in body and "cfg-" not in body and "task-fig" not in body and "Traceback" not in body
