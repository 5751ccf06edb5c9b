"""Issue 14, annotators in several studies: the 'my studies' page, the study named in the API, no study starving,
undo giving back the earlier choice; the `study` command; plain-language form errors; framing placeholders."""

import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from PIL import Image

from agents.models import GateReason
from annotation import selectors, services
from annotation.models import Comparison, Lease, Study
from annotation.selectors.images import _placeholder_png
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, coordinator
from tests.annotation.test_browser import forbidden_strings
from tests.pages import without_csrf_tokens

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_studies():
    figures, configurations, artifacts = build_corpus(figures=4, configurations=SLUGS[:3])
    older = services.study_create(
        name="older", configurations=SLUGS[:3], min_dwell_ms=0, quota_per_annotator=2, description="the first"
    )
    newer = services.study_create(name="newer", configurations=SLUGS[:3], min_dwell_ms=0, quota_per_annotator=2)
    user = annotator("ann-two")
    older.annotators.add(user)
    newer.annotators.add(user)
    older.world = (figures, configurations, artifacts)
    return older, newer, user


def login(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def post(client, path, body=None):
    return client.post(f"/api/annotate/{path}/", body or {}, content_type="application/json")


def vote(client, item, outcome="a", reason=""):
    response = post(client, "submit", {"token": item["token"], "outcome": outcome, "reason": reason, "dwell_ms": 100})
    assert response.status_code == 200, response.content


def test_unnamed_next_serves_every_study_in_turn_so_none_starves(two_studies):
    older, newer, user = two_studies
    client = login(user)
    served = []
    for _ in range(4):  # quota 2 in each: the least-done study first, then the other, until both are done
        item = post(client, "next").json()["item"]
        served.append(item["study"]["name"])
        vote(client, item)
    assert sorted(served) == ["newer", "newer", "older", "older"]
    # least done first: after one vote in a study, the other (none done) comes next; the older never hogs the session
    assert served[0] != served[1] and served[2] != served[3]
    done = post(client, "next").json()
    assert done["state"] == "done"
    for study in (older, newer):
        assert Comparison.objects.filter(study=study, annotator=user).count() == 2


def test_named_study_in_the_api_and_refusals(two_studies):
    older, newer, user = two_studies
    client = login(user)
    item = post(client, "next", {"study": "newer"}).json()["item"]
    assert item["study"] == {"name": "newer", "description": ""}
    assert Lease.objects.get(token=item["token"]).study == newer
    vote(client, item, outcome="b", reason="clearer arrows")
    # undo in that study puts the item back with the earlier choice and reason
    undone = post(client, "undo", {"study": "newer"}).json()
    assert undone["item"]["token"] == item["token"]
    assert undone["previous"] == {"outcome": "b", "reason": "clearer arrows"}
    summary = client.get("/api/annotate/summary/?study=older").json()
    assert summary["votes"] == 0
    stranger = services.study_create(name="elsewhere", configurations=SLUGS[:3], min_dwell_ms=0)
    refused = post(client, "next", {"study": stranger.name})
    assert refused.status_code == 404 and "not assigned to a study named 'elsewhere'" in refused.json()["detail"]
    assert client.get("/api/annotate/summary/?study=elsewhere").status_code == 404
    studies = client.get("/api/annotate/studies/").json()["studies"]
    assert [(s["name"], s["done"], s["quota"]) for s in studies] == [("older", 0, 2), ("newer", 0, 2)]


def test_annotate_pages_list_studies_then_one_screen_each(two_studies):
    older, newer, user = two_studies
    client = login(user)
    listing = client.get("/annotate/")
    html = listing.content.decode()
    assert listing.status_code == 200 and "My studies" in html
    assert 'href="/annotate/older/"' in html and 'href="/annotate/newer/"' in html and "the first" in html
    screen = client.get("/annotate/newer/").content.decode()
    assert 'data-study="newer"' in screen and 'Study <strong id="study-name">newer</strong>' in screen
    assert 'href="/annotate/older/"' in screen  # the other study is one click away from the summary
    missing = client.get("/annotate/not-mine/")
    assert missing.status_code == 404 and b"Page not found" in missing.content and b'href="/"' in missing.content
    # one study: /annotate/ is the screen itself
    newer.annotators.remove(user)
    single = client.get("/annotate/").content.decode()
    assert 'data-study="older"' in single and "My studies" not in single


def test_paused_study_is_listed_and_the_active_one_still_served(two_studies):
    older, newer, user = two_studies
    services.study_status_set(study=older, status=Study.Status.PAUSED)
    client = login(user)
    assert post(client, "next").json()["item"]["study"]["name"] == "newer"
    paused = post(client, "next", {"study": "older"}).json()
    assert paused["state"] == "paused" and "paused" in paused["detail"]
    names = [s["name"] for s in selectors.annotator_study_list(user=user)]
    assert names == ["newer", "older"]  # active first


def run(*args) -> str:
    out = io.StringIO()
    call_command("study", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_study_command_create_assign_status_list():
    build_corpus(figures=5, configurations=SLUGS[:3])
    worker = annotator("ann-cli")
    created = run(
        "create",
        "cli-study",
        "--configurations",
        *SLUGS[:3],
        "--sample",
        "3",
        "--seed",
        "11",
        "--target-per-pair",
        "6",
        "--overlap-rate",
        "0.25",
    )
    assert "created study cli-study: 3 configurations, 3 figures, target 6 per pair, overlap 0.25, seed 11" in created
    study = Study.objects.get(name="cli-study")
    assert study.figures.count() == 3 and study.seed == 11 and study.target_per_pair == 6
    assert run("assign", "cli-study", "ann-cli") == "cli-study: 1 annotator assigned\n"
    assert list(study.annotators.all()) == [worker]
    assert run("status", "cli-study", "paused") == "cli-study is now paused\n"
    assert Study.objects.get(name="cli-study").status == "paused"
    listing = run("list").splitlines()
    assert listing[0].split("\t") == [
        "name", "status", "configurations", "annotators", "votes", "target_per_pair", "kind", "still_needed"
    ]  # fmt: skip
    assert listing[1].split("\t") == ["cli-study", "paused", "3", "1", "0", "6", "pairwise", "18"]  # 3 pairs x 6
    run("create", "by-field", "--configurations", *SLUGS[:2], "--fields", "cs.CV")
    assert Study.objects.get(name="by-field").figures.count() == 5


@pytest.mark.parametrize(
    "args, message",
    [
        (("create", "too-many", "--configurations", *SLUGS[:2], "--sample", "9"), "larger than the 5 figures"),
        (("create", "bad name", "--configurations", *SLUGS[:2]), "letters, digits, hyphens and underscores"),
        (("create", "unknown", "--configurations", SLUGS[0], "cfg-nope"), "unknown configurations: cfg-nope"),
        (("create", "rate", "--configurations", *SLUGS[:2], "--overlap-rate", "2"), "expected a number in [0, 1]"),
        (("create", "figs", "--configurations", *SLUGS[:2], "--figures", "task-nope"), "unknown figures: task-nope"),
        (("assign", "nowhere", "someone"), "no study named 'nowhere'"),
        (("status", "nowhere", "closed"), "no study named 'nowhere'"),
    ],
)
def test_study_command_refuses_with_plain_messages(args, message):
    build_corpus(figures=5, configurations=SLUGS[:2])
    with pytest.raises(CommandError) as error:
        run(*args)
    assert message in str(error.value)


def test_study_command_assign_refuses_unknown_users_and_non_annotators():
    build_corpus(figures=2, configurations=SLUGS[:2])
    run("create", "assigned", "--configurations", *SLUGS[:2])
    coordinator("coord-cli")
    with pytest.raises(CommandError, match="no such user"):
        run("assign", "assigned", "ghost")
    with pytest.raises(CommandError, match="not annotators: coord-cli"):
        run("assign", "assigned", "coord-cli")


def test_study_form_says_what_a_name_may_contain():
    build_corpus(figures=2, configurations=SLUGS[:2])
    client = login(coordinator("coord-form"))
    page = client.post("/coordinate/", {"name": "my study", "configurations": list(SLUGS[:2])}).content.decode()
    text = without_csrf_tokens(page)
    assert 'name="csrfmiddlewaretoken" value=""' in text  # the tokens were taken out, and only they
    assert "A study name uses letters, digits, hyphens and underscores only" in text and "slug" not in text.lower()


def test_every_gate_reason_has_a_placeholder_message_and_placeholders_frame_as_slides():
    assert set(selectors.PLACEHOLDER_TEXT) == set(GateReason.values)
    png = _placeholder_png(*selectors.PLACEHOLDER_TEXT["missing"])
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (1600, 900)  # 16:9 like a rendered slide
        # legible: large dark glyphs cover a real share of the canvas (the old one was a line of 11 px text)
        dark = int((np.asarray(image.convert("L")) < 120).sum())
        assert dark > 0.01 * 1600 * 900


def test_missing_deck_placeholder_is_served_in_its_place():
    build_corpus(figures=2, configurations=SLUGS[:2], failed=((SLUGS[0], 0), (SLUGS[0], 1)))
    study = services.study_create(name="gaps", configurations=SLUGS[:2], min_dwell_ms=0, include_gate_failed=True)
    user = annotator("ann-gap")
    study.annotators.add(user)
    lease = services.item_next(study=study, annotator=user).lease
    failed = lease.item.artifact_x if lease.item.artifact_x.configuration.slug == SLUGS[0] else lease.item.artifact_y
    failed.gate_reason = "missing"
    failed.render_png = ""
    failed.save()
    side = "a" if (lease.left_is_x == (failed == lease.item.artifact_x)) else "b"
    body = login(user).get(f"/annotate/img/{lease.token}/{side}").content
    assert body == _placeholder_png(*selectors.PLACEHOLDER_TEXT["missing"])


def test_the_new_annotator_pages_name_studies_but_never_configurations(two_studies):
    """The blinding sweep's rule on the pages this issue adds: my studies, a study's screen, the studies API, an item
    payload and the undo answer carry no configuration, artifact or figure identity."""
    older, newer, user = two_studies
    forbidden = forbidden_strings(*older.world)
    client = login(user)
    item = post(client, "next", {"study": "older"}).json()["item"]
    vote(client, item, outcome="a", reason="fine")
    bodies = {
        "/annotate/": client.get("/annotate/").content,
        "/annotate/older/": client.get("/annotate/older/").content,
        "/api/annotate/studies/": client.get("/api/annotate/studies/").content,
        "undo": post(client, "undo", {"study": "older"}).content,
        "next": post(client, "next", {"study": "newer"}).content,
    }
    leaks = [
        f"{where}: {secret}"
        for where, body in bodies.items()
        for secret in forbidden
        if secret in body.decode().lower()
    ]
    assert not leaks
    assert b"older" in bodies["/annotate/"] and b"newer" in bodies["/annotate/"]
