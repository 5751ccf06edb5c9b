"""Run-log economics as ReFigBench reports them (Tables 22-23): medians, totals, n/N, and cost priced from tokens at
given list prices as an upper bound; pure summary by hand, then the table through the export command and the API."""

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from agents.models import Artifact
from agents.runlog import ECONOMICS_COLUMNS, TokenPrices, economics_summary
from core.services import user_create_with_role
from tests.factories import artifact_create, configuration_create, figure_create

METRICS = ["turns", "tool_calls", "output_tokens", "total_tokens", "duration_seconds", "cost_usd"]
# Configuration a: five artifacts (three logs recovered, one recorded cost, one without timestamps); b: two logs
# with costs and no timestamps at all.
RUNS = [
    ("a", "recoverable", 3, 5, 1000, 11000, 60.0, 0.50),
    ("a", "recoverable", 7, 9, 3000, 41000, None, None),
    ("a", "recoverable", 4, 2, 2000, 20000, 100.0, None),
    ("a", "absent", None, None, None, None, None, None),
    ("a", "unrecoverable", None, None, None, None, None, None),
    ("b", "recoverable", 2, 1, 10, 1_000_000, None, 1.0),
    ("b", "recoverable", 6, 3, 30, 2_500_000, None, 2.0),
]


def runs() -> pd.DataFrame:
    return pd.DataFrame(RUNS, columns=["configuration", "log_status", *METRICS])


def test_effort_columns_are_medians_and_totals_over_recovered_logs():
    table = economics_summary(runs()).set_index("configuration")
    assert list(economics_summary(runs()).columns) == ECONOMICS_COLUMNS
    a, b = table.loc["a"], table.loc["b"]
    assert (a.logs_recovered, a.artifacts, a.logs_present, a.logs_recoverable) == ("3/5", 5, 4, 3)
    # a: turns 3, 7, 4 -> 4 ; tool calls 5, 9, 2 -> 5 ; output 1000, 3000, 2000 -> 2000 ; durations 60, 100 -> 80
    assert (a.median_turns, a.median_tool_calls, a.median_output_tokens, a.median_duration_seconds) == (4, 5, 2000, 80)
    assert a.total_tokens_millions == pytest.approx((11000 + 41000 + 20000) / 1e6)  # 0.072
    assert a.mean_turns == pytest.approx(14 / 3)  # the column kept from before, still a mean
    # b: turns 2, 6 -> 4 ; output 10, 30 -> 20 ; 1.0 M + 2.5 M tokens ; no timestamps: duration blank
    assert (b.median_turns, b.median_output_tokens, b.total_tokens_millions) == (4, 20, 3.5)
    assert np.isnan(b.median_duration_seconds)


def test_cost_without_prices_is_the_recorded_cost_only():
    table = economics_summary(runs()).set_index("configuration")
    a, b = table.loc["a"], table.loc["b"]
    assert (a.cost_recorded, a.cost_records, a.cost_estimated_runs, bool(a.cost_upper_bound)) == ("1/5", 1, 0, False)
    assert (a.cost_total_usd, a.cost_mean_usd, a.total_cost_usd) == (0.5, 0.5, 0.5)
    assert (b.cost_recorded, b.cost_total_usd, b.cost_mean_usd) == ("2/2", 3.0, 1.5)
    assert any("price_input and price_output" in note for note in economics_summary(runs()).attrs["notes"])


def test_cost_priced_from_tokens_is_an_upper_bound_and_states_the_prices():
    prices = TokenPrices(input_per_mtok=2.0, output_per_mtok=10.0)
    # all input tokens (cached included) = total - output at $2/M, output at $10/M:
    # run 2: 38,000 * 2 / 1e6 + 3,000 * 10 / 1e6 = 0.076 + 0.030 = 0.106
    # run 3: 18,000 * 2 / 1e6 + 2,000 * 10 / 1e6 = 0.036 + 0.020 = 0.056
    assert prices.cost(3000, 41000) == pytest.approx(0.106) and prices.cost(2000, 20000) == pytest.approx(0.056)
    summary = economics_summary(runs(), prices=prices)
    a, b = summary.set_index("configuration").loc["a"], summary.set_index("configuration").loc["b"]
    assert (a.cost_recorded, a.cost_estimated_runs, bool(a.cost_upper_bound)) == ("1/5", 2, True)
    assert a.cost_total_usd == pytest.approx(0.5 + 0.106 + 0.056)  # 0.662
    assert a.cost_mean_usd == pytest.approx(0.662 / 3)
    assert a.total_cost_usd == 0.5  # the recorded-only total is kept as it was
    # b has every cost recorded: nothing estimated, not an upper bound
    assert (b.cost_estimated_runs, bool(b.cost_upper_bound), b.cost_total_usd) == (0, False, 3.0)
    [price_note] = [n for n in summary.attrs["notes"] if "per million" in n]
    assert "$2 per million input tokens" in price_note and "$10 per million output tokens" in price_note
    assert "upper bound" in price_note


def test_no_artifacts_is_an_empty_table_with_the_columns():
    empty = economics_summary(pd.DataFrame([], columns=["configuration", "log_status", *METRICS]))
    assert empty.empty and list(empty.columns) == ECONOMICS_COLUMNS


# --- the table in the app: export command and API -----------------------------------------------------------------
@pytest.fixture
def logged(db):
    figures = [figure_create(f"t{i}", index=i) for i in range(2)]
    direct = configuration_create("m1-direct", model="m1", workflow="direct", position=0)
    special = configuration_create("m1-specialized", model="m1", workflow="specialized", position=1)
    economics = {
        ("m1-direct", "t0"): dict(turns=3, tool_calls=2, output_tokens=1000, total_tokens=11000, cost_usd=None),
        ("m1-direct", "t1"): dict(turns=5, tool_calls=4, output_tokens=3000, total_tokens=21000, cost_usd=None),
        ("m1-specialized", "t0"): dict(turns=9, tool_calls=8, output_tokens=500, total_tokens=4000, cost_usd=0.3),
        ("m1-specialized", "t1"): dict(turns=11, tool_calls=6, output_tokens=700, total_tokens=6000, cost_usd=0.5),
    }
    for configuration in (direct, special):
        for figure in figures:
            artifact = artifact_create(configuration, figure)
            values = economics[(configuration.slug, figure.task_id)]
            Artifact.objects.filter(pk=artifact.pk).update(log_status="recoverable", **values)
    return economics


def researcher() -> Client:
    client = Client()
    client.force_login(user_create_with_role(username="res", password="pw-long-enough-1", role="researcher")[0])
    return client


def test_export_takes_the_prices_and_refuses_what_economics_does_not_take(logged, tmp_path):
    out = tmp_path / "economics.json"
    call_command(
        "export",
        "economics",
        "--format",
        "json",
        "--price-input",
        "2",
        "--price-output",
        "10",
        "--out",
        str(out),
        stderr=io.StringIO(),
    )
    body = json.loads(out.read_text())
    rows = {r["configuration"]: r for r in body["rows"]}
    # direct: 10,000 * 2/1e6 + 1,000 * 10/1e6 = 0.03 ; 18,000 * 2/1e6 + 3,000 * 10/1e6 = 0.066 -> mean 0.048
    assert rows["m1-direct"]["cost_mean_usd"] == pytest.approx(0.048) and rows["m1-direct"]["cost_upper_bound"]
    assert rows["m1-specialized"]["cost_mean_usd"] == pytest.approx(0.4)
    assert not rows["m1-specialized"]["cost_upper_bound"]
    assert (rows["m1-direct"]["median_turns"], rows["m1-direct"]["logs_recovered"]) == (4, "2/2")
    assert any("$2 per million input tokens" in note for note in body["notes"])
    with pytest.raises(CommandError, match="table 'economics' does not take run; it takes price_input, price_output"):
        call_command("export", "economics", "--run", "2", stdout=io.StringIO())
    with pytest.raises(CommandError, match="price_input: a price is a finite number of USD per million tokens"):
        call_command("export", "economics", "--price-input", "nan", "--price-output", "1", stdout=io.StringIO())


def test_api_prices_and_refusals(logged):
    client = researcher()
    body = client.get("/api/tables/economics/", {"format": "json", "price_input": "2", "price_output": "10"}).json()
    assert {r["configuration"]: r["cost_total_usd"] for r in body["rows"]} == pytest.approx(
        {"m1-direct": 0.096, "m1-specialized": 0.8}
    )
    refused = client.get("/api/tables/economics/", {"format": "json", "judge": "gpt"})
    assert refused.status_code == 400
    assert refused.json()["detail"] == "table 'economics' does not take judge; it takes price_input, price_output"
    one_price = client.get("/api/tables/economics/", {"format": "json", "price_input": "2"})
    assert one_price.status_code == 400 and "price_output" in one_price.json()["detail"]
