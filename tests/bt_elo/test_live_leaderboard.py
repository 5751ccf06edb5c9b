"""Issue 14: one Elo computation behind the elo table, the results pages and the live leaderboard; the leaderboard
says when votes are too few or the comparison graph is not connected; the results pages share one study picker; every
table downloads as CSV, JSON and LaTeX over the web."""

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client

from bt_elo import selectors, services
from core.middleware import CONTENT_SECURITY_POLICY
from core.services import user_create_with_role
from core.tables import frame_html, table_frame
from tests.factories import artifact_create, configuration_create, figure_create
from tests.pages import without_csrf_tokens

pytestmark = pytest.mark.django_db
HEADER = ["comparison_id", "study", "task_id", "annotator", "config_a", "config_b", "left_config", "outcome", "reason"]


@pytest.fixture
def corpus():
    figures = [figure_create(f"t{i}", index=i) for i in range(6)]
    for position, (slug, workflow) in enumerate((("cA", "direct"), ("cB", "specialized"), ("cC", "direct"))):
        configuration = configuration_create(
            slug, model="m1" if slug != "cC" else "m2", workflow=workflow, position=position
        )
        for figure in figures:
            artifact_create(configuration, figure)
    cache.clear()


def import_votes(tmp_path, study: str, votes, start: int = 0):
    """votes: (figure index, config A, config B, outcome)."""
    path = tmp_path / f"{study}-{start}.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for number, (fig, a, b, outcome) in enumerate(votes, start=start):
            writer.writerow([f"{study}-c{number}", study, f"t{fig}", "ann", a, b, a, outcome, "because"])
    call_command("import_comparisons", path, stdout=io.StringIO(), stderr=io.StringIO())


# Every pair both ways, each configuration in 12 votes: connected, enough votes.
CONNECTED = [
    (f, a, b, o)
    for f in range(3)
    for a, b, o in (
        ("cA", "cB", "a"),
        ("cB", "cA", "b"),
        ("cB", "cC", "a"),
        ("cC", "cB", "a"),
        ("cA", "cC", "a"),
        ("cC", "cA", "a"),
    )
]
# cA wins everything: no path back to cA, the graph is not strongly connected.
UNDEFEATED = [(f, a, b, "a") for f in range(3) for a, b in (("cA", "cB"), ("cA", "cC"), ("cB", "cC"), ("cC", "cB"))]


def staff() -> Client:
    user, _ = user_create_with_role(username="res", password="pw-long-enough-1", role="researcher")
    client = Client()
    client.force_login(user)
    return client


def test_leaderboard_has_the_elo_tables_numbers_as_of_its_votes(corpus, tmp_path):
    import_votes(tmp_path, "alpha", CONNECTED)
    client = staff()
    live = client.get("/results/elo/live.json?study=alpha").json()
    table = json.loads(client.get("/api/tables/elo/?format=json&study=alpha").content)
    assert live["status"] == "ok" and live["votes"] == len(CONNECTED) == 18 and live["as_of"]
    by_configuration = {row["configuration"]: row for row in table["rows"]}
    for row in live["rows"]:
        expected = by_configuration[row["configuration"]]
        assert [row[c] for c in ("elo", "ci_low", "ci_high", "n")] == [
            expected[c] for c in ("elo", "ci_low", "ci_high", "n")
        ]
    # Counted by hand: per figure cA wins 3, cC 2, cB 1 (no ties) -> cA, cC, cB
    assert [r["configuration"] for r in live["rows"]] == ["cA", "cC", "cB"]
    assert {r["configuration"]: r["n"] for r in live["rows"]} == {"cA": 12, "cB": 12, "cC": 12}


def test_study_elo_is_cached_per_vote_set_and_recomputed_when_votes_change(corpus, tmp_path):
    import_votes(tmp_path, "alpha", CONNECTED)
    first = selectors.study_elo(study="alpha")
    again = selectors.study_elo(study="alpha")
    assert again.computed_at == first.computed_at and again.key == first.key  # from the cache
    import_votes(tmp_path, "alpha", [(5, "cA", "cB", "a")], start=100)
    changed = selectors.study_elo(study="alpha")
    assert changed.votes == first.votes + 1 and changed.newest_vote > first.newest_vote
    assert changed.computed_at > first.computed_at
    assert table_frame("elo", study="alpha").set_index("configuration").loc["cA", "wins"] == 10


def test_refreshes_are_deduplicated():
    assert services.leaderboard_refresh_claim(study="alpha") is True
    assert services.leaderboard_refresh_claim(study="alpha") is False  # one pending refresh per study
    assert services.leaderboard_refresh_claim(study="beta") is True


def test_leaderboard_says_so_when_votes_are_too_few_or_the_graph_is_not_connected(corpus, tmp_path):
    import_votes(
        tmp_path, "few", [(0, "cA", "cB", "a"), (1, "cB", "cC", "b"), (2, "cA", "cC", "b"), (3, "cA", "cB", "b")]
    )
    few = selectors.leaderboard(selectors.study_elo(study="few"))
    assert few["status"] == "insufficient" and few["votes"] == 4
    assert few["detail"].startswith("Too few votes to rank: 3 of 3 configurations have fewer than 5")
    import_votes(tmp_path, "onesided", UNDEFEATED)
    onesided = selectors.leaderboard(selectors.study_elo(study="onesided"))
    assert min(r["n"] for r in onesided["rows"]) >= 5
    assert onesided["status"] == "insufficient" and "not connected" in onesided["detail"]


def test_results_pages_share_one_study_picker(corpus, tmp_path):
    import_votes(tmp_path, "alpha", CONNECTED)
    import_votes(tmp_path, "beta", UNDEFEATED)
    client = staff()
    for url in ("/results/", "/results/elo", "/results/agreement"):
        page = client.get(url).content.decode()
        assert 'id="study-select"' in page and '<option value="alpha"' in page and '<option value="beta"' in page
    unchosen = client.get("/results/elo").content.decode()  # opens on the latest study with votes, never empty
    assert '<option value="beta" selected>' in unchosen and "Choose a study above" not in unchosen
    chosen = client.get("/results/elo?study=beta").content.decode()
    assert '<option value="beta" selected>' in chosen
    assert (
        "/api/tables/elo/?format=latex&amp;study=beta" in chosen and "/results/plot/coverage.png?study=beta" in chosen
    )
    assert 'href="/results/agreement?study=beta"' in chosen  # the choice follows the navigation
    # plots: their own links; an unknown study is a 404 rather than a 500
    assert client.get("/results/plot/elo.png?study=nope").status_code == 404
    for plot in ("elo", "coverage", "agreement"):
        response = client.get(f"/results/plot/{plot}.png?study=beta")
        assert response.status_code == 200 and response.content.startswith(b"\x89PNG"), plot
    assert b"<svg" in client.get("/results/plot/coverage.svg?study=alpha").content
    # a single study is chosen without asking
    from annotation.models import Study

    Study.objects.filter(name="beta").delete()
    assert '<option value="alpha" selected>' in client.get("/results/elo").content.decode()


def test_every_table_downloads_as_csv_json_and_latex(corpus, tmp_path):
    import_votes(tmp_path, "alpha", CONNECTED)
    client = staff()
    frame = table_frame("elo", study="alpha")
    for fmt, extension, check in (
        ("csv", "csv", lambda body: pd.read_csv(io.StringIO(body))["n"].tolist() == frame["n"].tolist()),
        (
            "json",
            "json",
            lambda body: [r["configuration"] for r in json.loads(body)["rows"]] == frame["configuration"].tolist(),
        ),
        ("latex", "tex", lambda body: body.startswith("\\begin{tabular}") and "cA" in body and "\\bottomrule" in body),
    ):
        response = client.get(f"/api/tables/elo/?format={fmt}&study=alpha")
        assert response.status_code == 200
        assert response["Content-Disposition"] == f'attachment; filename="elo-alpha.{extension}"'
        assert check(response.content.decode()), fmt
    refused = client.get("/api/tables/elo/?format=xlsx&study=alpha")
    assert refused.status_code == 400 and refused.json()["detail"] == "format must be one of csv, json, latex"


def test_counts_print_as_integers_and_measures_keep_decimals():
    html = frame_html(pd.DataFrame({"n": [3.0, 6.0], "share": [0.5, 0.25], "missing": [np.nan, 2.0]}))
    assert "<td>3</td>" in html and "<td>6</td>" in html and "3.000" not in html
    assert "<td>0.500</td>" in html and "<td>0.250</td>" in html and "<td>–</td>" in html and "<td>2</td>" in html


def test_pages_are_self_hosted_styled_and_policed(corpus):
    client = staff()
    home = client.get("/")
    assert (
        home["Content-Security-Policy"] == CONTENT_SECURITY_POLICY and "default-src 'self'" in CONTENT_SECURITY_POLICY
    )
    for link in ('href="/results/"', 'href="/results/elo"', 'href="/results/agreement"', 'href="/api/docs/"'):
        assert link in home.content.decode()
    docs = without_csrf_tokens(client.get("/api/docs/").content.decode())  # the page inlines its token
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in docs and "cdn" not in docs.lower()
    favicon = client.get("/favicon.ico")
    assert favicon.status_code == 301 and favicon["Location"].endswith("favicon.svg")
    missing = client.get("/results/nowhere")
    assert (
        missing.status_code == 404 and b"Page not found" in missing.content and b'href="/results/"' in missing.content
    )
    annotator, _ = user_create_with_role(username="ann-x", password="pw-long-enough-1", role="annotator")
    other = Client()
    other.force_login(annotator)
    forbidden = other.get("/results/elo")
    assert forbidden.status_code == 403 and b"You do not have access to this page" in forbidden.content
