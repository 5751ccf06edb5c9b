"""Blinding sweep: an annotator walks every URL pattern of the site, and the annotator API's error paths.

Every response must be refused (403 / 404 / 405, or a redirect to a login page) or carry nothing that identifies a
configuration, an artifact or a figure's provenance: no slug, label, model or harness name, task id, arXiv id, paper
title, stored file name or SHA-256, and no artifact pk under an id-like JSON key. The forbidden strings are those of the
browser crawl (tests/annotation/test_browser.py).
"""

import itertools
import json
import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.contrib.contenttypes.models import ContentType
from django.shortcuts import resolve_url
from django.test import Client
from django.urls import URLResolver, get_resolver, resolve, reverse
from django.urls.resolvers import RoutePattern
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from agents.models import Artifact
from annotation import services
from annotation.models import Comparison, Lease, StudyKind
from annotation.services import artifact_studies
from annotation.services import quality as quality_services
from bt_elo import plots
from core.tables import TABLES
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, next_lease, submit_vote
from tests.annotation.test_browser import forbidden_strings

pytestmark = pytest.mark.django_db

REFUSED = (403, 404, 405)
PLOT_NAMES = ("elo", "agreement", "scores", "judge-runs", "paired-effects")
ROUTE_PARAMETER = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")
REGEX_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?P<regex>[^()]*)\)")


@pytest.fixture
def world():
    """A study with one submitted vote and one open lease of the annotator, and another annotator's open lease."""
    figures, configurations, artifacts = build_corpus(figures=4, configurations=SLUGS)
    study = services.study_create(name="sweep", configurations=SLUGS, min_dwell_ms=0, overlap_rate=0)
    user, other = annotator("ann-sweep"), annotator("ann-other")
    study.annotators.add(user, other)
    voted = next_lease(study=study, annotator=user)
    submit_vote(token=voted.token, annotator=user, outcome="a", reason="clearer", dwell_ms=4000)
    lease = next_lease(study=study, annotator=user)
    foreign = next_lease(study=study, annotator=other)
    # Issue 15's annotator screens: a gate-review and a rating study with open artifact leases, a calibration item.
    gates, rating = (
        artifact_studies.artifact_study_create(name=f"sweep-{kind}", kind=kind, configurations=SLUGS, annotators=[user])
        for kind in (StudyKind.GATE_REVIEW, StudyKind.RATING)
    )
    quality_services.calibration_item_add(study=study, item=lease.item, label="x", explanation="arrows kept")
    single = [artifact_studies.artifact_next(study=s, annotator=user).token for s in (gates, rating)]
    calibration = quality_services.calibration_next(study=study, annotator=user).token
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return {
        "study": study,
        "user": user,
        "other": other,
        "lease": lease,
        "voted": voted,
        "foreign": foreign,
        "single": single,
        "calibration": calibration,
        "client": client,
        "forbidden": forbidden_strings(figures, configurations, artifacts),
        "artifact_pks": {a.pk for a in artifacts},
        "figures": figures,
        "configurations": configurations,
    }


def parameter_values(world) -> dict[str, list[str]]:
    """Real values for every path parameter name in config.urls (and a few that match nothing)."""
    lease, user, item = world["lease"], world["user"], world["lease"].item
    artifact_pks = [str(item.artifact_x_id), str(item.artifact_y_id)]
    vote = Comparison.objects.filter(lease=world["voted"]).first()
    return {
        "token": [
            lease.token,
            world["voted"].token,
            world["foreign"].token,
            *world["single"],
            world["calibration"],
            default_token_generator.make_token(user),
            "no-such-token",
        ],
        "side": ["source", "a", "b", "x"],
        "uidb64": [urlsafe_base64_encode(force_bytes(user.pk))],
        "task_id": [item.figure.task_id, world["figures"][-1].task_id],
        "name": [world["study"].name, *sorted(TABLES), *PLOT_NAMES],
        "fmt": sorted(plots.FORMATS),
        "paper": ["refigbench", "pptarena", "nope"],
        "study": [world["study"].name, "no-such-study"],
        "pk": artifact_pks,
        "kind": ["render", "thumb", "pptx"],
        "slug": [c.slug for c in world["configurations"][:2]],
        "object_id": [
            *artifact_pks,
            str(item.figure_id),
            str(world["study"].pk),
            str(lease.pk),
            str(vote.pk),
            str(user.pk),
        ],
        "id": [str(user.pk)],
        "content_type_id": [str(ContentType.objects.get_for_model(Artifact).pk)],
        "url": ["anything"],
    }


def url_patterns(patterns=None, prefix=()):
    """Every endpoint of config.urls as the chain of patterns leading to it."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from url_patterns(pattern.url_patterns, prefix + (pattern,))
        else:
            yield prefix + (pattern,)


def concrete_urls(chain, values) -> list[str]:
    """The chain's pattern text with its parameters filled by every fitting combination of real values."""
    template, choices = "", []
    for part in chain:
        text = str(part.pattern)
        if isinstance(part.pattern, RoutePattern):  # a path() route

            def fill(match, converters=part.pattern.converters):
                regex = converters[match["name"]].regex
                choices.append([v for v in values[match["name"]] if re.fullmatch(regex, v)])
                return "{}"

            text = ROUTE_PARAMETER.sub(fill, text)
        else:  # a re_path() regex: the admin's app list and catch-all

            def fill(match):
                options = values.get(match["name"]) or match["regex"].split("|")
                choices.append([v for v in options if re.fullmatch(match["regex"], v)])
                return "{}"

            text = REGEX_GROUP.sub(fill, text).removeprefix("^").removesuffix("$")
        template += text
    return ["/" + template.format(*combination) for combination in itertools.product(*choices)]


def json_pairs(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key, inner
            yield from json_pairs(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from json_pairs(inner)


def id_like(key: str) -> bool:
    key = key.lower()
    return "artifact" in key or key in ("id", "pk") or key.endswith(("_id", "_pk"))


def leaks_of(response, *, forbidden, artifact_pks) -> list[str]:
    """What in the response could unblind the annotator; [] for refusals and redirects to a login page."""
    status = response.status_code
    location = response.get("Location", "")
    login_pages = (resolve_url(settings.LOGIN_URL), reverse("admin:login"))
    if status in REFUSED or (300 <= status < 400 and location.startswith(login_pages)):
        return []
    body = b"".join(response.streaming_content) if response.streaming else response.content
    headers = json.dumps(dict(response.items())).lower()
    text = body.decode("latin-1").lower()
    found = [
        f"{where}: {secret}"
        for where, value in (("headers", headers), ("body", text))
        for secret in forbidden
        if secret in value
    ]
    if "Content-Disposition" in response:
        found.append("Content-Disposition header")
    if response.get("Content-Type", "").startswith("application/json") and body:
        for key, value in json_pairs(json.loads(body)):
            if "artifact" in key.lower():
                found.append(f"JSON key {key}")
            elif id_like(key) and str(value) in {str(pk) for pk in artifact_pks}:
                found.append(f"JSON {key}: {value} is an artifact pk")
    return found


def test_every_url_pattern_is_refused_or_blind(world):
    client, forbidden, pks = world["client"], world["forbidden"], world["artifact_pks"]
    assert {"cfg-alpha-direct", "model-alphaone", "task-fig-0000", "2401.10000", "paper task-fig-0000"} <= forbidden
    values = parameter_values(world)
    requests, unreached, leaks, statuses, got = [], [], [], {}, {}
    for chain in url_patterns():
        urls = concrete_urls(chain, values)
        # Every pattern is reached by at least one of its URLs (a new pattern cannot slip past the sweep).
        if not any(resolve(url).func == chain[-1].callback for url in urls):
            unreached.append(" ".join(str(p.pattern) for p in chain))
        for url in urls:
            requests.append(("get", url))
            if url.startswith("/api/"):
                requests.append(("post", url))
    assert not unreached, unreached
    # POSTs after the GETs, and the undo (which reopens the voted item and releases the open one) last of all.
    requests.sort(key=lambda r: (r[0] == "post", r[1].endswith("/undo/")))
    for method, url in requests:
        response = client.get(url) if method == "get" else client.post(url, content_type="application/json")
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        got[(method, url)] = response.status_code
        leaks += [
            f"{method.upper()} {url} ({response.status_code}) {leak}"
            for leak in leaks_of(response, forbidden=forbidden, artifact_pks=pks)
        ]
    assert not leaks, "\n".join(leaks[:30])
    # The sweep did reach the annotator's own pages and data, not only refusals.
    own = world["lease"].token
    for url in ("/annotate/", "/api/annotate/summary/", f"/annotate/img/{own}/a", f"/annotate/img/{own}/source"):
        assert got[("get", url)] == 200, url
    review, rate = world["single"]
    for url in (
        "/annotate/review/",
        "/annotate/rate/",
        "/annotate/calibration/",
        f"/annotate/artifact-img/{review}/a",
        f"/annotate/artifact-img/{rate}/source",
        f"/annotate/calibration/img/{world['calibration']}/b",
    ):
        assert got[("get", url)] == 200, url
    assert (
        got[("post", "/api/annotate/next/")] == 200 and got[("get", f"/annotate/img/{world['foreign'].token}/a")] == 404
    )
    assert statuses.get(200, 0) >= 10 and statuses.get(403, 0) >= 50 and len(requests) >= 300, statuses
    assert Comparison.objects.filter(withdrawn=True).count() == 1  # the swept undo did run


def test_annotator_api_errors_are_blind(world):
    client, forbidden = world["client"], world["forbidden"]
    own, foreign = world["lease"].token, world["foreign"].token

    def post(path, body):
        return client.post(f"/api/annotate/{path}/", body, content_type="application/json")

    cases = [
        (400, post("submit", {"token": own, "outcome": "maybe", "dwell_ms": 5000})),  # invalid outcome
        (
            400,
            post("submit", {"token": own, "outcome": "tie_failure", "reason": "", "dwell_ms": 5000}),
        ),  # a tie needs a reason
        (400, post("skip", {"token": own, "reason": ""})),
        (403, post("submit", {"token": foreign, "outcome": "a", "dwell_ms": 5000})),  # another annotator's lease
        (403, post("skip", {"token": foreign, "reason": "not mine"})),
        (404, post("submit", {"token": "no-such-token-" + "x" * 20, "outcome": "a", "dwell_ms": 5000})),
        (404, post("skip", {"token": "no-such-token", "reason": "gone"})),
        (404, client.get(f"/annotate/img/{foreign}/a")),
    ]
    Lease.objects.filter(token=own).update(expires_at=timezone.now() - timedelta(seconds=1))
    cases.append((409, post("submit", {"token": own, "outcome": "a", "dwell_ms": 5000})))  # time ran out
    cases.append(
        (409, post("skip", {"token": world["voted"].token, "reason": "already voted"}))
    )  # submitted: cannot be skipped
    for expected, response in cases:
        assert response.status_code == expected, (expected, response.status_code, response.content[:200])
        body = response.content.decode().lower()
        assert body and not [s for s in forbidden if s in body], body
        assert not [s for s in forbidden if s in json.dumps(dict(response.items())).lower()]
        if response["Content-Type"].startswith("application/json"):
            keys = [k for k, _ in json_pairs(response.json())]
            assert not [k for k in keys if id_like(k)], keys
    assert Comparison.objects.filter(lease__token=own).count() == 0
