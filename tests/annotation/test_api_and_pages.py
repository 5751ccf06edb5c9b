"""Annotator and coordinator APIs, per-lease images, pages."""

import io
from datetime import UTC

import pytest
from django.test import Client
from PIL import Image

from annotation import services
from annotation.models import Comparison, Lease
from core.tables import TABLES
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, coordinator, next_lease, submit_vote

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
    assert set(payload) == {
        "token",
        "study",
        "images",
        "audit_a",
        "audit_b",
        "rendered_a",
        "rendered_b",
        "progress",
        "rules",
        "expires_in_s",
    }
    assert [k for k, _ in payload["audit_a"]] == [k for k, _ in payload["audit_b"]]
    token = payload["token"]
    assert payload["images"]["a"] == f"/annotate/img/{token}/a"
    bad = client.post(
        "/api/annotate/submit/", {"token": token, "outcome": "tie_success"}, content_type="application/json"
    )
    assert bad.status_code == 400 and "reason" in bad.json()["detail"]
    body = {"token": token, "outcome": "a", "reason": "", "dwell_ms": 4000, "decision_ms": 3000}
    first = client.post("/api/annotate/submit/", body, content_type="application/json")
    again = client.post("/api/annotate/submit/", body, content_type="application/json")
    assert first.status_code == again.status_code == 200 and Comparison.objects.count() == 1
    assert first.json() == again.json() == {"stored": True, "counted": True, "outcome": "a"}
    undo = client.post("/api/annotate/undo/", content_type="application/json").json()
    assert undo["item"]["token"] == token
    nxt = client.post("/api/annotate/next/", content_type="application/json").json()
    assert nxt["item"]["token"] == token  # the reopened item comes back
    skip = client.post(
        "/api/annotate/skip/", {"token": token, "reason": "cannot read"}, content_type="application/json"
    )
    assert skip.status_code == 200 and Lease.objects.get(token=token).state == "skipped"
    late = client.post("/api/annotate/submit/", body, content_type="application/json")
    assert late.status_code == 409 and "skipped" in late.json()["detail"]
    assert client.get("/api/annotate/summary/").json()["skipped"] == 1


def test_annotators_cannot_touch_foreign_leases_or_coordinator_endpoints(study):
    one, two = annotator("ann-one"), annotator("ann-two")
    study.annotators.add(one, two)
    token = login(one).post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
    other = login(two)
    response = other.post(
        "/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 5000}, content_type="application/json"
    )
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
    created = client.post(
        "/api/studies/",
        {"name": "second", "configurations": list(SLUGS[:3]), "target_per_pair": 5},
        content_type="application/json",
    )
    assert created.status_code == 201 and created.json()["target_per_pair"] == 5
    coverage = client.get("/api/studies/second/coverage/").json()
    assert coverage["columns"][:4] == ["config_x", "config_y", "n", "target"] and len(coverage["rows"]) == 3
    assert client.get("/api/studies/second/").json()["name"] == "second"
    page = client.get("/coordinate/")
    assert page.status_code == 200 and b"pilot" in page.content
    form = client.post(
        "/coordinate/",
        {
            "name": "third",
            "configurations": list(SLUGS),
            "target_per_pair": 20,
            "overlap_rate": 0.1,
            "seed": 3,
            "quota_per_annotator": 10,
            "min_dwell_ms": 1000,
            "lease_seconds": 600,
            "include_gate_failed": "on",
        },
    )
    assert form.status_code == 302
    picked = client.post(
        "/coordinate/",
        {
            "name": "picked",
            "configurations": list(SLUGS[:2]),
            "target_per_pair": 5,
            "overlap_rate": 0,
            "seed": 1,
            "quota_per_annotator": 10,
            "min_dwell_ms": 0,
            "lease_seconds": 600,
            "figure_fields": ["cs.CV"],
            "figures": "task-fig-0000\n task-fig-0002, task-fig-0003",
            "figure_sample": 2,
        },
    )
    assert picked.status_code == 302
    from annotation.models import Study as StudyModel

    chosen = set(StudyModel.objects.get(name="picked").figures.values_list("task_id", flat=True))
    assert len(chosen) == 2 and chosen <= {"task-fig-0000", "task-fig-0002", "task-fig-0003"}
    refused = client.post(
        "/coordinate/",
        {
            "name": "refused",
            "configurations": list(SLUGS[:2]),
            "target_per_pair": 5,
            "overlap_rate": 0,
            "seed": 1,
            "quota_per_annotator": 10,
            "min_dwell_ms": 0,
            "lease_seconds": 600,
            "figures": "task-nope",
        },
    )
    assert refused.status_code == 200 and b"unknown figures: task-nope" in refused.content
    by_api = client.post(
        "/api/studies/",
        {"name": "api-picked", "configurations": list(SLUGS[:2]), "figure_fields": ["cs.CV"], "figure_sample": 1},
        content_type="application/json",
    )
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
    huge = client.post(
        "/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 10**20}, content_type="application/json"
    )
    assert huge.status_code == 400 and huge.json()["error"] == "invalid" and "dwell_ms" in huge.json()["detail"]

    def broken(**kwargs):
        raise RuntimeError("cfg-alpha-direct artifact 17 task-fig-0001")

    monkeypatch.setattr(services, "comparison_submit", broken)
    failed = client.post(
        "/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 10}, content_type="application/json"
    )
    assert failed.status_code == 500 and failed["Content-Type"] == "application/json"
    body = failed.content.decode()
    assert "Reload" in body and "cfg-" not in body and "task-fig" not in body and "Traceback" not in body


def test_dashboard_numbers_by_hand():
    """A small scenario through the services on a fixed clock; every dashboard number counted by hand."""
    from datetime import datetime, timedelta
    from unittest import mock

    from agents.models import Configuration
    from annotation import selectors
    from tests.factories import artifact_create, figure_create

    figs, configs, _ = build_corpus(figures=4)
    artifact_create(
        configs[3], figure_create("task-fig-extra", index=9)
    )  # a figure only cfg-charlie-direct has: not the study's
    t0, clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC), {}
    users = {name: annotator(name) for name in ("ann-one", "ann-two", "ann-three")}

    def at(minute):
        clock["now"] = t0 + timedelta(minutes=minute)

    with mock.patch("django.utils.timezone.now", lambda: clock["now"]):
        at(0)
        study = services.study_create(
            name="board",
            configurations=SLUGS[:3],
            target_per_pair=2,
            overlap_rate=0.5,
            min_dwell_ms=3000,
            lease_seconds=900,
        )
        log = []

        def vote(minute, who, outcome, dwell_ms):  # asks at `minute`, submits a minute later
            at(minute)
            lease = next_lease(study=study, annotator=users[who])
            at(minute + 1)
            submit_vote(token=lease.token, annotator=users[who], outcome=outcome, reason="r", dwell_ms=dwell_ms)
            log.append(
                (
                    who,
                    lease.item_id,
                    lease.is_overlap,
                    (lease.item.config_x_id, lease.item.config_y_id),
                    lease.item.figure_id,
                )
            )

        def lease(minute, who):
            at(minute)
            return next_lease(study=study, annotator=users[who])

        vote(0, "ann-one", "a", 4000)  # item A, fresh
        vote(10, "ann-two", "tie_success", 8000)  # item B, fresh: another pair, another figure
        vote(30, "ann-one", "b", 6000)  # overlap (rate 0.5, 2nd item): B
        vote(40, "ann-two", "a", 10000)  # overlap: A
        lease(45, "ann-two")  # abandoned: expires at 60
        vote(60, "ann-one", "a", 2000)  # fresh, third pair; 2 s < 3 s: not counted
        services.lease_skip(token=lease(70, "ann-one").token, annotator=users["ann-one"], reason="unreadable")
        services.lease_skip(token=lease(72, "ann-three").token, annotator=users["ann-three"], reason="unreadable")
        lease(73, "ann-three")  # open, past its time at 88
        lease(75, "ann-one")  # open until 90
        at(89)
        a, b, c = (entry[1] for entry in log[:2] + log[4:])
        assert [(who, item, overlap) for who, item, overlap, _, _ in log] == [
            ("ann-one", a, False),
            ("ann-two", b, False),
            ("ann-one", b, True),
            ("ann-two", a, True),
            ("ann-one", c, False),
        ]
        pair = {item: p for _, item, _, p, _ in log}
        assert len({pair[a], pair[b], pair[c]}) == 3 and log[0][4] != log[1][4]
        board = selectors.study_dashboard(study=study)
        page = login(coordinator()).get("/coordinate/board/")

    # votes: 4 counted (A and B twice each); ann-one's third is uncounted.
    assert board["votes"] == 4
    # heatmap: A's pair 2, B's pair 2, the third pair 0 (its only vote is uncounted); target 2 ⇒ 2 pairs at target.
    pk_of = {c.slug: c.pk for c in configs}
    cells = {
        (row["configuration"].pk, pk_of[cell["y"]]): cell["n"]
        for row in board["matrix"]
        for cell in row["cells"]
        if cell
    }
    assert cells == {pair[a]: 2, pair[b]: 2, pair[c]: 0}
    assert board["pairs_at_target"] == 2 and board["pairs"] == 3
    # figures: the 4 with artifacts of the study's configurations (not task-fig-extra); A's and B's covered.
    assert (board["figures_covered"], board["figures_total"]) == (2, 4)
    # overlap: A and B have two raters each; target = round(0.5 × 2 items voted) = 1.
    assert (board["overlap_items"], board["items_voted"], board["overlap_target"]) == (2, 2, 1)
    # open leases: ann-one's (until 90); ann-three's ran out at 88 and ann-two's was expired at 60.
    assert board["open_leases"] == 1
    rows = {r["annotator"]: r for r in board["annotators"]}
    # ann-one: 3 votes from minute 1 to 61 ⇒ 3 per hour; dwell 4, 6, 2 s ⇒ median 4; 1 skip of 4; left (A) 2 of 3 decisive.
    assert rows["ann-one"] == {
        "annotator": "ann-one",
        "votes": 3,
        "counted": 2,
        "per_hour": 3.0,
        "median_dwell_s": 4.0,
        "skip_rate": 0.25,
        "left_share": 0.667,
    }
    # ann-two: 2 votes from minute 11 to 41 ⇒ 4 per hour; dwell 8, 10 s ⇒ 9; no skips; one decisive vote, for A.
    assert rows["ann-two"] == {
        "annotator": "ann-two",
        "votes": 2,
        "counted": 2,
        "per_hour": 4.0,
        "median_dwell_s": 9.0,
        "skip_rate": 0.0,
        "left_share": 1.0,
    }
    # ann-three: a skip and nothing else.
    assert rows["ann-three"] == {
        "annotator": "ann-three",
        "votes": 0,
        "counted": 0,
        "per_hour": None,
        "median_dwell_s": None,
        "skip_rate": 1.0,
        "left_share": None,
    }
    assert board["left_share"] == 0.75  # 3 of 4 decisive votes for the left pane
    assert page.status_code == 200
    html = page.content.decode()
    assert (
        '<b id="overlap">2 / 1</b>items rated by ≥ 2 annotators / target items' in html
        and "<b>2 / 4</b>study figures" in html
    )

    # Reversing the declaration order reverses every pair: the heatmap still counts the votes (both orientations).
    for configuration in configs[:3]:
        Configuration.objects.filter(pk=configuration.pk).update(position=10 - configuration.position)
    reversed_board = selectors.study_dashboard(study=study)
    coverage = selectors.coverage_frame(study="board")
    heat = [cell["n"] for row in reversed_board["matrix"] for cell in row["cells"] if cell]
    assert heat == list(coverage["n"]) and sorted(heat) == [0, 2, 2] and reversed_board["pairs_at_target"] == 2


def test_pool_is_rebuilt_when_figures_change_but_their_id_sum_does_not():
    from annotation.models import Item, Study

    figs, _, _ = build_corpus(figures=4)
    study = services.study_create(
        name="swap", configurations=SLUGS[:2], figures=[figs[0].task_id, figs[3].task_id], min_dwell_ms=0
    )
    assert (
        figs[0].pk + figs[3].pk == figs[1].pk + figs[2].pk
    )  # the same count and sum of ids: a sum signature misses it
    before = study.pool_signature
    study.figures.set([figs[1], figs[2]])
    user = annotator()
    study.annotators.add(user)
    assert login(user).post("/api/annotate/next/", content_type="application/json").json()["state"] == "item"
    pooled = set(Item.objects.filter(study=study, in_pool=True).values_list("figure_id", flat=True))
    assert pooled == {figs[1].pk, figs[2].pk}
    assert Study.objects.get(pk=study.pk).pool_signature != before


def test_reason_for_decisive_votes_is_a_study_setting_and_researchers_only_read_studies(study):
    from annotation.models import Study as StudyModel
    from core.services import user_create_with_role

    StudyModel.objects.filter(pk=study.pk).update(require_reason_decisive=True)
    user = annotator()
    study.annotators.add(user)
    client = login(user)
    token = client.post("/api/annotate/next/", content_type="application/json").json()["item"]["token"]
    bare = client.post(
        "/api/annotate/submit/", {"token": token, "outcome": "a", "dwell_ms": 10}, content_type="application/json"
    )
    assert bare.status_code == 400 and bare.json()["detail"] == "a short reason is required for this vote"
    assert not Comparison.objects.exists()
    given = client.post(
        "/api/annotate/submit/",
        {"token": token, "outcome": "a", "reason": "labels match", "dwell_ms": 10},
        content_type="application/json",
    )
    assert given.status_code == 200 and Comparison.objects.get().reason == "labels match"

    researcher, _ = user_create_with_role(username="res-one", password=PASSWORD, role="researcher")
    reader = login(researcher)
    assert reader.get("/api/studies/").status_code == 200
    assert reader.get(f"/api/studies/{study.name}/coverage/").status_code == 200
    assert (
        reader.post(
            "/api/studies/", {"name": "nope", "configurations": list(SLUGS[:2])}, content_type="application/json"
        ).status_code
        == 403
    )
    assert reader.post(f"/coordinate/{study.name}/", {"action": "status", "status": "closed"}).status_code == 403
    # annotators read no study data at all
    assert client.get("/api/studies/").status_code == 403 and client.get(f"/coordinate/{study.name}/").status_code in (
        302,
        403,
    )
