"""The registered stability tables (issue 16): PPTBench's bootstrap.json reproduced from the imported scores.csv
through `manage.py export` and the table API, and the rubric-score table per judge and run."""

import io
import json
import time

import pytest
from django.core.management import call_command
from django.test import Client

from core.services import user_create_with_role
from core.tables import TABLES, table_frame
from scoring.stability import STABILITY_COLUMNS, STABILITY_MODEL_COLUMNS, STABILITY_PAIR_COLUMNS
from tests.data.paths import PPTBENCH, needs_shared
from tests.factories import artifact_create, configuration_create, figure_create

pytestmark = pytest.mark.django_db


def export(name: str, tmp_path) -> dict:
    out = tmp_path / f"{name}.json"
    call_command("export", name, "--format", "json", "--out", str(out), stderr=io.StringIO())
    return json.loads(out.read_text())


@needs_shared(PPTBENCH / "bootstrap.json")
def test_pptbench_stability_tables_reproduce_bootstrap_json_from_the_imported_scores(tmp_path):
    call_command("import_pptbench_scores", PPTBENCH / "scores.csv", stdout=io.StringIO())
    published = json.loads((PPTBENCH / "bootstrap.json").read_text())

    start = time.perf_counter()
    stability = export("pptbench-stability", tmp_path)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    models = export("pptbench-stability-models", tmp_path)
    warm = time.perf_counter() - start
    pairs = export("pptbench-stability-pairs", tmp_path)
    print(f"\npptbench-stability: {cold:.2f} s computed, {warm:.2f} s for the next table from the cache")

    assert stability["columns"] == STABILITY_COLUMNS
    assert models["columns"] == STABILITY_MODEL_COLUMNS
    assert pairs["columns"] == STABILITY_PAIR_COLUMNS
    # Every value through the database, the cache and JSON, compared exactly (no tolerance).
    assert stability["rows"] == [{c: e[c] for c in STABILITY_COLUMNS} for e in published["sample_sizes"]]
    assert models["rows"] == [
        {"sample_size": e["sample_size"], **m} for e in published["sample_sizes"] for m in e["model_intervals"]
    ]
    assert pairs["rows"] == [
        {"sample_size": e["sample_size"], **p} for e in published["sample_sizes"] for p in e["adjacent_pairs"]
    ]
    assert warm < cold / 3  # the second table reads the cached bootstrap

    # The same rows through the table API (CSV) and on the results page.
    user, _ = user_create_with_role(username="res", password="pw-long-enough-1", role="researcher")
    client = Client()
    client.force_login(user)
    response = client.get("/api/tables/pptbench-stability-pairs/?format=csv")
    assert response.status_code == 200
    lines = response.content.decode().splitlines()
    assert lines[0] == ",".join(STABILITY_PAIR_COLUMNS) and len(lines) == 1 + 6 * 35


def test_pptbench_stability_tables_are_empty_before_any_import_and_say_what_they_cover():
    for name, columns in (
        ("pptbench-stability", STABILITY_COLUMNS),
        ("pptbench-stability-models", STABILITY_MODEL_COLUMNS),
        ("pptbench-stability-pairs", STABILITY_PAIR_COLUMNS),
    ):
        frame = table_frame(name)
        assert frame.empty and list(frame.columns) == columns
        assert "10,000 draws" in TABLES[name].title and "20260816" in TABLES[name].title


def judge_line(slug, task, score, run):
    t, rest = min(score, 20), score - min(score, 20)
    s, rest = min(rest, 30), rest - min(rest, 30)
    l, rest = min(rest, 15), rest - min(rest, 15)
    e, v = min(rest, 25), rest - min(rest, 25)
    body = {"text": t, "semantic_structure": s, "layout": l, "editability": e, "visual_detail": v}
    return json.dumps(
        {
            "task_id": task,
            "configuration": slug,
            "judge": "j1",
            "judge_family": "fam",
            "run": run,
            "subscores": body,
            "score": score,
            "major_errors": [],
            "minor_errors": [],
            "editability_assessment": "",
            "reason": "",
        }
    )


def test_score_stability_per_judge_and_run_by_hand(tmp_path):
    # Run 1: cA 80 > cB 77 > cC 70 on every figure, so every resample keeps the order (τ = 1, zero-width intervals).
    # Run 2 the same: the mean over runs ("mean") is the same too.
    figures = [figure_create(f"t{i}", index=i) for i in range(4)]
    configurations = [
        configuration_create(slug, model=f"m-{slug}", position=n) for n, slug in enumerate(("cA", "cB", "cC"))
    ]
    for configuration in configurations:
        for figure in figures:
            artifact_create(configuration, figure)
    scores = {"cA": 80, "cB": 77, "cC": 70}
    lines = [
        judge_line(slug, f"t{i}", score, run) for slug, score in scores.items() for i in range(4) for run in (1, 2)
    ]
    records = tmp_path / "records.jsonl"
    records.write_text("\n".join(lines) + "\n")
    call_command("import_judge_records", records, no_progress=True, stdout=io.StringIO())

    table = table_frame("score-stability", judge="j1")
    assert list(table.columns) == ["judge", "run", *STABILITY_COLUMNS]
    assert sorted(set(table["run"])) == ["1", "2", "mean"]
    assert (table["kendall_tau_mean"] == 1.0).all() and (table["top1_exact_probability"] == 1.0).all()
    assert (table["mean_model_ci_width"] == 0.0).all()
    models = table_frame("score-stability-models", judge="j1", run="1")
    assert set(models["run"]) == {"1"}
    assert models.groupby("model")["mean"].first().to_dict() == {"cA": 80.0, "cB": 77.0, "cC": 70.0}
    pairs = table_frame("score-stability-pairs", judge="j1", run="mean")
    first = pairs[pairs["sample_size"] == 50]
    assert first[["upper_model", "lower_model", "full_gap"]].values.tolist() == [["cA", "cB", 3.0], ["cB", "cC", 7.0]]
    assert (pairs["rank_flip_probability"] == 0.0).all() and pairs["significant_95pct"].all()
