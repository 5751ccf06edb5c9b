"""elo-stability, elo-adjacent, the dashboard's stability panel, the planner page and `manage.py plan_study`
(issue 16), over a stored study simulated from known strengths."""

import csv
import io

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from annotation.models import Study
from bt_elo.bradley_terry import ELO_SCALE
from bt_elo.stability import ELO_ADJACENT_COLUMNS, ELO_STABILITY_COLUMNS, PLAN_COLUMNS
from core.services import user_create_with_role
from core.tables import TABLES, table_frame
from corpus.protocol import ELO_STABILITY_FRACTIONS
from tests.factories import artifact_create, configuration_create, figure_create

pytestmark = pytest.mark.django_db

# True Bradley–Terry log-strengths: c1 and c2 a coin flip apart, the others clearly separated.
BETA = {"c0": 1.6, "c1": 0.55, "c2": 0.5, "c3": -0.8}
FIGURES = 60
PASSWORD = "pw-long-enough-1"


@pytest.fixture
def simulated(tmp_path):
    names = list(BETA)
    figures = [figure_create(f"t{i}", index=i) for i in range(FIGURES)]
    for position, slug in enumerate(names):
        configuration = configuration_create(slug, model=f"m-{slug}", position=position)
        for figure in figures:
            artifact_create(configuration, figure)
    rng = np.random.default_rng(20261203)
    battles = tmp_path / "battles.csv"
    with battles.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["comparison_id", "study", "task_id", "annotator", "config_a", "config_b", "outcome"])
        n = 0
        for figure in range(FIGURES):
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    p_a = 1.0 / (1.0 + np.exp(BETA[b] - BETA[a]))
                    writer.writerow([f"v{n}", "sim", f"t{figure}", "ann", a, b, "a" if rng.random() < p_a else "b"])
                    n += 1
    call_command("import_comparisons", battles, stdout=io.StringIO(), stderr=io.StringIO())
    return names


def test_elo_adjacent_agrees_with_the_elo_table_and_the_known_strengths(simulated):
    adjacent = table_frame("elo-adjacent", study="sim")
    elo = table_frame("elo", study="sim").set_index("configuration")["elo"]
    assert list(adjacent.columns) == ELO_ADJACENT_COLUMNS
    # The neighbours of the fitted order, with the Elo table's gaps (same fit, same 2,000 draws, same seed).
    order = list(elo.sort_values(ascending=False).index)
    assert list(zip(adjacent["upper"], adjacent["lower"])) == list(zip(order, order[1:]))
    np.testing.assert_allclose(adjacent["elo_gap"], [elo[u] - elo[v] for u, v in zip(order, order[1:])])
    assert order[0] == "c0" and order[-1] == "c3"
    rows = {frozenset((r.upper, r.lower)): r for r in adjacent.itertuples()}
    close, clear = rows[frozenset(("c1", "c2"))], rows[frozenset(("c0", order[1]))]
    # 0.05 log-units apart on 60 votes: not separated, flipped in some resamples, more votes needed; 1 log-unit
    # apart: never flipped, interval clear of zero. Every interval holds the true gap (fixed seed: a 95 % event each).
    assert close.rank_flip_probability > 0.01 and close.difference_ci_low < 0 < close.difference_ci_high
    assert close.votes_to_separate > 0 and close.pair_votes == FIGURES
    for r in adjacent.itertuples():
        assert r.difference_ci_low < ELO_SCALE * (BETA[r.upper] - BETA[r.lower]) < r.difference_ci_high
    assert clear.rank_flip_probability == 0.0 and clear.difference_ci_low > 0 and clear.votes_to_separate == 0


def test_elo_stability_per_fraction_of_the_figures(simulated):
    table = table_frame("elo-stability", study="sim")
    assert list(table.columns) == ELO_STABILITY_COLUMNS
    assert table["sample_size"].tolist() == [max(1, round(f * FIGURES)) for f in ELO_STABILITY_FRACTIONS]
    assert (table["figures_available"] == FIGURES).all()
    # More figures: a more settled order and narrower intervals.
    assert table["kendall_tau_mean"].is_monotonic_increasing
    assert table["mean_model_ci_width"].is_monotonic_decreasing
    assert "2,000 refits" in TABLES["elo-stability"].title


def test_stability_panel_applies_the_coordinators_stopping_rule(simulated):
    user, _ = user_create_with_role(username="coord", password=PASSWORD, role="coordinator")
    client = Client()
    client.force_login(user)
    Study.objects.filter(name="sim").update(stop_when_flip_below=0.01)
    panel = client.get("/results/elo/stability.json?study=sim").json()
    flips = [r["rank_flip_probability"] for r in panel["rows"]]
    assert panel["max_flip_probability"] == max(flips) > 0.01
    assert panel["threshold"] == 0.01 and panel["stopping_rule_met"] is False
    Study.objects.filter(name="sim").update(stop_when_flip_below=0.5)
    panel = client.get("/results/elo/stability.json?study=sim").json()
    assert panel["stopping_rule_met"] is True
    assert client.get("/results/elo/stability.json?study=nope").status_code == 404
    page = client.get("/coordinate/sim/").content.decode()
    assert 'id="stability"' in page and "/results/elo/stability.json?study=sim" in page


def test_plan_study_command_prints_the_table_and_writes_the_plot(tmp_path):
    out, plot = io.StringIO(), tmp_path / "plan.png"
    call_command(
        "plan_study",
        "--configurations=4",
        "--figures=100",
        "--budgets=300,600",
        "--simulations=30",
        f"--plot={plot}",
        stdout=out,
        stderr=io.StringIO(),
    )
    text = out.getvalue()
    assert all(column in text for column in PLAN_COLUMNS)
    assert text.count("coverage") >= 2 and text.count("adaptive") >= 2  # both allocations by default
    assert "cfg01" in text and "sandwich" in text
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000
    with pytest.raises(CommandError, match="budgets"):
        call_command("plan_study", "--budgets=lots", stdout=io.StringIO(), stderr=io.StringIO())


def test_planner_on_the_coordinator_page_with_its_plot():
    user, _ = user_create_with_role(username="coord", password=PASSWORD, role="coordinator")
    client = Client()
    client.force_login(user)
    blank = client.get("/coordinate/").content.decode()
    assert 'id="planner"' in blank and 'name="tie_rate"' in blank and "plan-result" not in blank
    query = "plan=1&configurations=5&figures=200&strength_spread=200&tie_rate=0.3&cluster_sd=80"
    query += "&budgets=400,800&allocation=coverage&simulations=20"
    page = client.get(f"/coordinate/?{query}").content.decode()
    assert 'id="plan-result"' in page and "order_recovered_probability" in page
    assert "<td>400</td>" in page and "<td>800</td>" in page
    plot = client.get(f"/results/plot/study-plan.png?{query}")
    assert plot.status_code == 200 and plot["Content-Type"] == "image/png" and plot.content[:4] == b"\x89PNG"
    # Out of bounds: a message on the page and in the image's place, never a 500.
    page = client.get(f"/coordinate/?{query.replace('simulations=20', 'simulations=5000')}").content.decode()
    assert "simulations: must lie between 2 and 200" in page and "plan-result" not in page
    message = client.get("/results/plot/study-plan.png?budgets=x")  # the message in the image's place, as every plot
    assert message.status_code == 200 and message.content[:4] == b"\x89PNG"
