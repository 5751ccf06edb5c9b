"""Elo and agreement tables over stored votes and judge records; the results pages and plots."""

import csv
import io
import json
import math

import choix
import numpy as np
import pytest
from django.core.management import call_command
from django.test import Client
from sklearn.metrics import cohen_kappa_score

from core.services import user_create_with_role
from core.tables import table_frame
from tests.factories import artifact_create, configuration_create, figure_create

pytestmark = pytest.mark.django_db

# (figure, config shown as A, config shown as B, outcome)
VOTES = [
    (0, "cA", "cB", "a"),
    (0, "cB", "cC", "a"),
    (0, "cA", "cC", "tie_success"),
    (1, "cA", "cB", "b"),
    (1, "cB", "cC", "b"),
    (1, "cA", "cC", "a"),
    (2, "cA", "cB", "a"),
    (2, "cC", "cA", "b"),
    (2, "cB", "cC", "tie_failure"),
    (3, "cA", "cB", "a"),
]
JUDGE_SCORE = {"cA": (16, 24, 12, 20, 8), "cB": (16, 24, 12, 17, 8), "cC": (14, 22, 10, 17, 7)}  # 80, 77, 70


@pytest.fixture
def study(tmp_path):
    figures = [figure_create(f"t{i}", index=i) for i in range(4)]
    configurations = [
        configuration_create("cA", model="m1", workflow="direct", position=0),
        configuration_create("cB", model="m1", workflow="specialized", position=1),
        configuration_create("cC", model="m2", workflow="direct", position=2),
    ]
    for configuration in configurations:
        for figure in figures:
            artifact_create(configuration, figure)
    battles = tmp_path / "battles.csv"
    with battles.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "comparison_id",
                "study",
                "task_id",
                "annotator",
                "config_a",
                "config_b",
                "left_config",
                "outcome",
                "reason",
                "created_at",
                "dwell_ms",
            ]
        )
        for number, (fig, a, b, outcome) in enumerate(VOTES):
            writer.writerow(
                [f"c{number}", "pilot", f"t{fig}", "ann", a, b, a, outcome, "because", "2026-11-01T10:00:00Z", 9000]
            )
    call_command("import_comparisons", battles, stdout=io.StringIO(), stderr=io.StringIO())
    records = tmp_path / "records.jsonl"
    with records.open("w") as handle:
        for slug, (t, s, l, e, v) in JUDGE_SCORE.items():
            for fig in range(4):
                handle.write(
                    json.dumps(
                        {
                            "task_id": f"t{fig}",
                            "configuration": slug,
                            "judge": "j1",
                            "judge_family": "fam",
                            "run": 1,
                            "subscores": {
                                "text": t,
                                "semantic_structure": s,
                                "layout": l,
                                "editability": e,
                                "visual_detail": v,
                            },
                            "score": t + s + l + e + v,
                            "major_errors": [],
                            "minor_errors": [],
                            "editability_assessment": "",
                            "reason": "",
                        }
                    )
                    + "\n"
                )
    call_command("import_judge_records", records, no_progress=True, stdout=io.StringIO())


def test_elo_table_matches_choix_and_the_hand_counted_record(study):
    table = table_frame("elo", run="1").set_index("configuration")
    assert list(table_frame("elo").columns[:10]) == [
        "configuration",
        "elo",
        "ci_low",
        "ci_high",
        "wins",
        "losses",
        "ties",
        "ties_success",
        "ties_failure",
        "n",
    ]
    # Counted by hand from VOTES.
    assert tuple(table.loc["cA", ["wins", "losses", "ties", "ties_success", "ties_failure", "n"]]) == (5, 1, 1, 1, 0, 7)
    assert tuple(table.loc["cB", ["wins", "losses", "ties", "n"]]) == (2, 4, 1, 7)
    assert tuple(table.loc["cC", ["wins", "losses", "ties", "ties_success", "ties_failure", "n"]]) == (1, 3, 2, 1, 1, 6)
    # Independent fit: choix on the doubled list (decisive twice, each tie once each way).
    index = {"cA": 0, "cB": 1, "cC": 2}
    data = []
    for _, a, b, outcome in VOTES:
        i, j = index[a], index[b]
        data += {"a": [(i, j), (i, j)], "b": [(j, i), (j, i)]}.get(outcome, [(i, j), (j, i)])
    beta = choix.ilsr_pairwise(3, data, alpha=0.0, tol=1e-12, max_iter=100_000)
    expected = 1000 + 400 / math.log(10) * (beta - beta.mean())
    assert np.allclose(table.loc[["cA", "cB", "cC"], "elo"].to_numpy(), expected, atol=1e-6)
    assert table["elo"].mean() == pytest.approx(1000)
    assert (table["ci_low"] <= table["elo"]).all() and (table["elo"] <= table["ci_high"]).all()
    # Automated means beside Elo: 80, 77, 70 are in Elo order here, so ρ = 1.
    assert table["spearman_rho__j1__run_1"].iloc[0] == pytest.approx(1.0)
    assert table.loc["cA", "automated_mean__j1__run_1"] == 80


def test_agreement_tables_by_hand(study):
    margin = table_frame("agreement-margin", run="1").set_index("bucket")
    # Margins: A−B = +3, B−C = +7, A−C = +10, C−A = −10; 8 decisive votes, 6 agree.
    assert margin.loc["all", "n"] == 8 and margin.loc["all", "agreement"] == pytest.approx(0.75)
    assert margin.loc["[2,5)", "n"] == 4 and margin.loc["[2,5)", "agreement"] == pytest.approx(0.75)
    assert margin.loc["[5,10)", "n"] == 2 and margin.loc["[5,10)", "agreement"] == pytest.approx(0.5)
    assert margin.loc["[10,inf)", "n"] == 2 and margin.loc["[10,inf)", "agreement"] == pytest.approx(1.0)
    assert margin.loc["[0,2)", "n"] == 0
    assert set(table_frame("agreement-margin")["run"].astype(str)) == {"1", "mean"}

    three = table_frame("agreement-3class", run="1").set_index("threshold")
    human = ["a", "a", "tie", "b", "b", "a", "a", "b", "tie", "a"]
    margins = [3, 7, 10, 3, 7, 10, 3, -10, 7, 3]
    for threshold, agreement in ((0, 0.6), (5, 0.3)):
        judge = ["tie" if abs(m) <= threshold else ("a" if m > 0 else "b") for m in margins]
        assert three.loc[threshold, "n"] == 10
        assert three.loc[threshold, "agreement"] == pytest.approx(agreement)
        assert three.loc[threshold, "kappa"] == pytest.approx(cohen_kappa_score(human, judge))

    matchup = table_frame("agreement-matchup", run="1").set_index("matchup")
    # Within pairs (cA–cB): 4 decisive, 3 agree; across: 4 decisive, 3 agree.
    assert matchup.loc["within", "n"] == 4 and matchup.loc["within", "agreement"] == pytest.approx(0.75)
    assert matchup.loc["across", "n"] == 4 and matchup.loc["across", "agreement"] == pytest.approx(0.75)


def test_results_pages_plots_and_live_leaderboard(study):
    user_create_with_role(username="res", password="pw-long-enough-1", role="researcher")
    client = Client()
    client.login(username="res", password="pw-long-enough-1")
    for url, marker in (
        ("/results/", b"config-scores"),
        ("/results/elo", b"rank-probabilities"),
        ("/results/agreement", b"agreement-margin"),
    ):
        page = client.get(url)
        assert page.status_code == 200 and marker in page.content, url
    png = client.get("/results/plot/elo.png")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    svg = client.get("/results/plot/agreement.svg?download=1")
    assert (
        svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content and "attachment" in svg["Content-Disposition"]
    )
    for plot in ("scores", "judge-runs", "paired-effects"):
        assert client.get(f"/results/plot/{plot}.png").content.startswith(b"\x89PNG"), plot
    live = client.get("/results/elo/live.json?study=pilot").json()
    assert live["status"] == "ok" and [row["configuration"] for row in live["rows"]][0] == "cA"
    csv_body = client.get("/api/tables/elo/?format=csv&study=pilot").content.decode()
    assert csv_body.splitlines()[0].startswith(
        "configuration,elo,ci_low,ci_high,wins,losses,ties,ties_success,ties_failure,n"
    )
    annotator = Client()
    user_create_with_role(username="ann2", password="pw-long-enough-1", role="annotator")
    annotator.login(username="ann2", password="pw-long-enough-1")
    assert annotator.get("/results/elo").status_code == 403
    assert annotator.get("/results/elo/live.json").status_code == 403


def test_results_pages_answer_before_any_judge_run():
    """A fresh study with artifacts but no judge record: every results page and plot answers, none crashes."""
    config_a = configuration_create("cfg-a", model="m1", workflow="direct", position=0)
    config_b = configuration_create("cfg-b", model="m1", workflow="specialized", position=1)
    for i in range(3):
        figure = figure_create(f"t-{i}", index=i)
        artifact_create(config_a, figure)
        artifact_create(config_b, figure)
    user, _ = user_create_with_role(username="res-empty", password="pw-long-enough-1", role="researcher")
    client = Client()
    client.force_login(user)
    for url in (
        "/results/",
        "/results/elo",
        "/results/agreement",
        "/results/plot/paired-effects.png",
        "/results/plot/scores.png",
        "/results/plot/judge-runs.png",
        "/api/tables/config-scores/?format=json",
        "/api/tables/paired-effects/?format=json",
    ):
        assert client.get(url).status_code == 200, url
    refused = client.get("/api/tables/judge-families/?format=json")
    assert refused.status_code == 400 and "no judge scores yet" in refused.json()["detail"]


def test_results_pages_open_on_the_study_with_votes_and_offer_only_its_kinds_tables(study):
    """Beside the voted 'pilot' study, an empty pairwise study created later and a gate-review study: the Elo and
    agreement pages open on 'pilot' (not "choose a study"), and a pairwise study's page links no gate-review or rating
    table downloads (they would answer 400)."""
    from annotation.services.artifact_studies import artifact_study_create
    from annotation.services.studies import study_create

    study_create(name="later-empty", configurations=["cA", "cB"])
    artifact_study_create(name="reviews", kind="gate_review", configurations=["cA"])
    client = Client()
    client.force_login(user_create_with_role(username="res", password="pw-long-enough-1", role="researcher")[0])
    for page in ("/results/elo", "/results/agreement"):
        html = client.get(page).content.decode()
        assert 'value="pilot" selected' in html or "study=pilot" in html, page
        assert "Choose a study above" not in html, page
    agreement = client.get("/results/agreement?study=pilot").content.decode()
    for foreign in ("gate-review-agreement", "gate-review-vs-automated", "rating-agreement", "rating-consistency"):
        assert f"/api/tables/{foreign}/" not in agreement
