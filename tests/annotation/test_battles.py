"""Studies over anyone's votes (issue 30): battles between named systems imported with no corpus or artifacts, their
Elo (names as given) equal to choix's Bradley–Terry fit of the same battles, and every Elo table, page and API answer
on the study."""

import csv
import io
import json
import math

import choix
import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from agents import selectors as agent_selectors
from annotation.models import ImportedBattle, Study
from annotation.system_names import system_name
from bt_elo import bradley_terry
from core.services import user_create_with_role
from core.tables import table_frame, table_notes

pytestmark = pytest.mark.django_db

# Mixed case, `/`, `__` and dots; two names differing only in case are two systems.
BETA = {
    "Qwen/Qwen2.5-72B-Instruct": 1.2,
    "Qwen__Qwen2.5-7B-Instruct": 0.3,
    "meta-llama/Llama-3.1-8B.Instruct": -0.2,
    "GPT-4o-mini.2024-07-18": 0.6,
    "gpt-4o-MINI.2024-07-18": -0.9,
}
QUESTIONS = 24
HEADER = ["question_id", "model_a", "model_b", "winner", "judge", "tstamp"]
PASSWORD = "pw-long-enough-1"
# The planner sized for such a study: its 5 systems over its 24 questions.
PLAN = "configurations=5&figures=24&strength_spread=200&tie_rate=0.3&cluster_sd=80&budgets=240&simulations=4"
PLAN += "&allocation=coverage"


def _arena_battles(seed: int = 20261205) -> list[list]:
    """Every pair on every question, sides and outcomes drawn from BETA: a plain tie a fifth of the time, a shared
    failure ("tie (bothbad)") a tenth, else the Bradley–Terry winner."""
    rng = np.random.default_rng(seed)
    names, rows = list(BETA), []
    for q in range(QUESTIONS):
        for i, x in enumerate(names):
            for y in names[i + 1 :]:
                a, b = (x, y) if rng.random() < 0.5 else (y, x)
                u = rng.random()
                if u < 0.2:
                    winner = "tie"
                elif u < 0.3:
                    winner = "tie (bothbad)"
                else:
                    winner = "model_a" if rng.random() < 1 / (1 + math.exp(BETA[b] - BETA[a])) else "model_b"
                rows.append([f"q{q:03d}", a, b, winner, "judge-x", 1_720_000_000 + len(rows)])
    return rows


@pytest.fixture
def arena(tmp_path):
    rows = _arena_battles()
    bad = [
        ["q000", "Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-72B-Instruct", "model_a", "judge-x", 1_720_000_000],
        ["q001", "GPT-4o-mini.2024-07-18", "", "tie", "judge-x", 1_720_000_000],
    ]
    path = tmp_path / "arena-battles.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows[:10])
        writer.writerow(bad[0])  # line 12: a system meeting itself
        writer.writerows(rows[10:50])
        writer.writerow(bad[1])  # line 53: no second system
        writer.writerows(rows[50:])
    out, err = io.StringIO(), io.StringIO()
    call_command("import_battles", path, "--study", "arena", "--no-progress", stdout=out, stderr=err)  # exit 0
    return path, rows, out.getvalue(), err.getvalue()


def _choix_elo(rows: list[list]) -> dict[str, float]:
    """choix's ILSR fit of the battles as written, ties half a win each way (decisive battles doubled)."""
    names = sorted(BETA)
    index = {n: i for i, n in enumerate(names)}
    data = []
    for _, a, b, winner, _, _ in rows:
        i, j = index[a], index[b]
        data += {"model_a": [(i, j), (i, j)], "model_b": [(j, i), (j, i)]}.get(winner, [(i, j), (j, i)])
    beta = choix.ilsr_pairwise(len(names), data, alpha=0.0, tol=1e-12, max_iter=100_000)
    return dict(zip(names, 1000 + 400 / math.log(10) * (beta - beta.mean())))


def test_good_rows_imported_bad_rows_reported_and_the_elo_equals_choix(arena):
    path, rows, out, err = arena
    assert f"{path}:12 model_b: 'Qwen/Qwen2.5-72B-Instruct' meets itself" in err
    assert f"{path}:53 model_b: missing or empty" in err
    assert f"{len(rows) + 2} battles: {len(rows)} imported, 0 already stored, 2 rejected" in out
    assert "created votes-only study arena" in out
    assert ImportedBattle.objects.filter(study__name="arena").count() == len(rows)

    table = table_frame("elo", study="arena").set_index("configuration")
    assert sorted(table.index) == sorted(BETA)  # names as given, the case-twins apart
    expected = _choix_elo(rows)
    np.testing.assert_allclose([table.loc[n, "elo"] for n in BETA], [expected[n] for n in BETA], atol=1e-6)
    assert (table["ci_low"] <= table["elo"]).all() and (table["elo"] <= table["ci_high"]).all()
    # The record by hand: plain ties in `ties` only, "tie (bothbad)" as shared failures.
    name = "Qwen__Qwen2.5-7B-Instruct"
    mine = [r for r in rows if name in (r[1], r[2])]
    plain = sum(r[3] == "tie" for r in mine)
    failures = sum(r[3] == "tie (bothbad)" for r in mine)
    wins = sum((r[3], r[1]) in (("model_a", name),) or (r[3], r[2]) in (("model_b", name),) for r in mine)
    record = table.loc[name, ["wins", "ties", "ties_success", "ties_failure", "n"]].tolist()
    assert record == [wins, plain + failures, 0, failures, len(mine)]
    # The existing Elo code path on the same battles, and the cluster bootstrap over the file's questions.
    comparisons = table_frame("comparisons", study="arena")
    fitted = bradley_terry.fit_bradley_terry(comparisons, configurations=list(BETA))
    np.testing.assert_allclose(fitted.elo, [expected[n] for n in BETA], atol=1e-6)
    assert comparisons["task_id"].nunique() == QUESTIONS
    assert bradley_terry.figure_win_matrices(comparisons, list(BETA)).shape[0] == QUESTIONS
    notes = " ".join(table_notes("elo", study="arena"))
    assert f"{sum(r[3] == 'tie' for r in rows)} plain ties" in notes and "not in ties_success" in notes


def test_systems_are_configurations_of_their_own_and_no_corpus_table_counts_anything(arena):
    path, rows, _, _ = arena
    systems = agent_selectors.configurations_by_slugs(slugs=[])  # none asked: none given
    assert systems == []
    study = Study.objects.get(name="arena")
    configurations = list(study.configurations.all())
    assert sorted(c.model for c in configurations) == sorted(BETA)
    assert all(system_name(c.slug) == c.model == c.label and c.suite == "votes" for c in configurations)
    assert not agent_selectors.configuration_list().exists()  # the agents' own list stays empty
    for name in ("artifact-audit", "config-scores"):
        assert table_frame(name).empty, name
    stats = table_frame("corpus-stats").set_index("statistic")["value"]
    assert stats["figures"] == 0
    coverage = table_frame("coverage", study="arena")
    assert len(coverage) == 10 and coverage["n"].sum() == len(rows)
    assert set(coverage["config_x"]) | set(coverage["config_y"]) == set(BETA)
    # Idempotent: a re-run stores nothing new, reports the bad rows again and still exits 0.
    out = io.StringIO()
    call_command("import_battles", path, "--study", "arena", "--no-progress", stdout=out, stderr=io.StringIO())
    assert f"0 imported, {len(rows)} already stored, 2 rejected" in out.getvalue()
    assert ImportedBattle.objects.count() == len(rows)


def test_every_elo_table_page_and_api_answers_on_the_study(arena, tmp_path):
    _, rows, _, _ = arena
    researcher = Client()
    researcher.force_login(user_create_with_role(username="res", password=PASSWORD, role="researcher")[0])
    for name in ("elo", "elo-stability", "elo-adjacent", "rank-probabilities", "win-rates", "coverage"):
        answer = researcher.get(f"/api/tables/{name}/?study=arena&format=json")
        assert answer.status_code == 200, name
        assert json.loads(answer.content)["rows"], name
    adjacent = table_frame("elo-adjacent", study="arena")
    assert set(adjacent["upper"]) | set(adjacent["lower"]) == set(BETA)
    assert (adjacent["votes_to_separate"] >= 0).all() and (adjacent["pair_votes"] == QUESTIONS).all()
    stability = table_frame("elo-stability", study="arena")
    assert (stability["figures_available"] == QUESTIONS).all()
    page = researcher.get("/results/elo?study=arena")
    assert page.status_code == 200 and "Qwen/Qwen2.5-72B-Instruct" in page.content.decode()
    assert researcher.get("/results/plot/elo.png?study=arena").content.startswith(b"\x89PNG")
    assert researcher.get("/results/agreement?study=arena").status_code == 200  # no judge scores: said, not a 500
    live = researcher.get("/results/elo/live.json?study=arena").json()
    assert live["status"] == "ok" and {r["configuration"] for r in live["rows"]} == set(BETA)
    plan = researcher.get(f"/api/tables/study-plan/?{PLAN}")
    assert plan.status_code == 200 and json.loads(plan.content)["rows"]
    exported = tmp_path / "elo.json"
    call_command("export", "elo", "--study", "arena", "--format", "json", "--out", exported, stderr=io.StringIO())
    document = json.loads(exported.read_text())
    assert {r["configuration"] for r in document["rows"]} == set(BETA) and "plain ties" in " ".join(document["notes"])

    coordinator = Client()
    coordinator.force_login(user_create_with_role(username="coord", password=PASSWORD, role="coordinator")[0])
    assert coordinator.get("/coordinate/arena/").status_code == 200
    assert coordinator.get("/results/elo/stability.json?study=arena").json()["rows"]
    planner = coordinator.get(f"/coordinate/?plan=1&{PLAN}")
    assert planner.status_code == 200 and 'id="plan-result"' in planner.content.decode()
    # An annotator, assigned to nothing of the study, is shown nothing of it and nothing breaks.
    annotator = Client()
    annotator.force_login(user_create_with_role(username="ann", password=PASSWORD, role="annotator")[0])
    screen = annotator.get("/annotate/")
    assert screen.status_code == 200 and "Qwen" not in screen.content.decode()
    assert annotator.get("/api/annotate/studies/").status_code == 200


def test_without_a_cluster_column_each_battle_is_its_own_cluster(tmp_path):
    path = tmp_path / "judge.jsonl"
    names = ["A.x", "B/y", "c__z"]
    lines = [
        {
            "model_a": names[i % 3],
            "model_b": names[(i + 1) % 3],
            "winner": ["model_a", "tie", "model_b"][i % 3],
            "prompt": f"prompt {i // 3}: " + "x" * 300,  # longer than the cluster column: kept by its digest
        }
        for i in range(9)
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    out = io.StringIO()
    call_command("import_battles", path, "--study", "judge-only", "--no-progress", stdout=out, stderr=io.StringIO())
    assert "9 battles: 9 imported, 0 already stored, 0 rejected" in out.getvalue()
    comparisons = table_frame("comparisons", study="judge-only")
    assert comparisons["task_id"].nunique() == 9
    assert sorted(table_frame("elo", study="judge-only")["configuration"]) == sorted(names)
    call_command(
        "import_battles", path, "--study", "by-prompt", "--cluster-column", "prompt", "--no-progress", stdout=out
    )
    assert table_frame("comparisons", study="by-prompt")["task_id"].nunique() == 3


def test_a_file_with_no_good_row_fails_and_a_study_of_artifact_votes_is_refused(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("model_a,model_b,winner\nA,A,tie\nA,B,maybe\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="all 2 battles rejected; nothing was imported"):
        call_command("import_battles", path, "--study", "empty", "--no-progress", stdout=io.StringIO(), stderr=err)
    assert f"{path}:3 winner: 'maybe' is not one of" in err.getvalue()
    Study.objects.create(name="screening-one", kind="screening")
    with pytest.raises(CommandError, match="import battles into a study of their own"):
        call_command("import_battles", path, "--study", "screening-one", "--no-progress", stdout=io.StringIO())
    with pytest.raises(CommandError, match="not a study name"):
        call_command("import_battles", path, "--study", "no spaces", "--no-progress", stdout=io.StringIO())
