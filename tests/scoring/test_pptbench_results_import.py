"""import_pptbench_results on small hand-made folders: the optional inputs this app defines (gate repeats, process,
domains) into their tables, row errors naming file, line and field, a changed row refused, and a published file that
does not match said so."""

import io

import pytest
from django.core.management import CommandError, call_command

from core.tables import table_frame
from corpus.protocol import PPTBENCH_ATTRIBUTION
from scoring.pptbench import LEADERBOARD_COLUMNS

pytestmark = pytest.mark.django_db

SCORES_HEADER = (
    "task_id,candidate_id,majority_gate,gate_count,layout_score,text_score,local_graphics_score,total_score,"
    "issue_count,single_round_issue_count\n"
)
ISSUES_HEADER = "dimension,category,issue_type,severity,case_count,mean_max_ratio,total_penalty,single_round_rate\n"
GENERATION_HEADER = (
    "candidate_id,task_count,valid_artifacts,invalid_artifacts,failed_tasks,total_tokens,average_tokens_per_task,"
    "total_cost_usd,average_cost_per_task_usd,usage_status\n"
)


def folder(tmp_path, **files):
    root = tmp_path / "results"
    root.mkdir()
    (root / "scores.csv").write_text(
        SCORES_HEADER
        + "t1,m__high,False,0,20,30,20,70,2,1\n"
        + "t2,m__high,True,3,0,0,0,0,0,0\n"
        + "t1,m__max,False,1,25,35,20,80,1,0\n"
        + "t2,m__max,False,0,20,20,20,60,1,1\n"
    )
    for name, text in files.items():
        (root / f"{name}.csv").write_text(text)
    return root


def run(*args) -> tuple[str, str, str | None]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("import_pptbench_results", *map(str, args), "--no-progress", stdout=out, stderr=err)
        failure = None
    except CommandError as error:
        failure = str(error)
    return out.getvalue(), err.getvalue(), failure


def test_optional_inputs_fill_table_3_and_table_10(tmp_path):
    repeats = tmp_path / "repeats.csv"
    repeats.write_text(
        "judge,task_id,candidate_id,repeat,gate\n"
        + "".join(f"J,t1,m__high,{r},{g}\n" for r, g in ((1, "True"), (2, "True"), (3, "False")))
        + "".join(f"J,t2,m__high,{r},False\n" for r in (1, 2, 3))
    )
    root = folder(
        tmp_path,
        process="task_id,candidate_id,review_turns,revision_turns\nt1,m__high,2,1\nt1,m__max,4,3\nt1,solo__low,1,1\n",
        domains="task_id,domain\nt1,biology\nt2,physics\n",
    )
    out, err, failure = run(root, "--gate-repeats", repeats)
    assert failure is None, err
    assert "issue-summary.csv: absent, not imported" in out
    assert "leaderboard.csv: absent: nothing to compare" in out
    assert "6 gate decisions: 6 imported" in out and "3 process rows: 3 imported" in out

    table = table_frame("pptbench-judge-repeatability")
    assert table.iloc[0][["judge", "cases", "repeats", "unanimous_rate", "flipped"]].tolist() == ["J", 2, 3, 0.5, 1]
    assert PPTBENCH_ATTRIBUTION in table.attrs["notes"]
    domains = table_frame("pptbench-domains").set_index("domain")
    assert domains.loc["biology", ["tasks", "mean_score", "best_candidate"]].tolist() == [1, 75.0, "m__max"]
    assert domains.loc["physics", "pass_rate"] == 0.5
    # Two configurations with scores and turns (solo__low has turns, no scores): too few for a correlation.
    correlations = table_frame("pptbench-process-correlations").set_index("metric")
    assert correlations.loc["review_turns", "configurations"] == 2
    assert table_frame("pptbench-high-vs-highest").iloc[0][["n", "delta_detail", "delta_pass"]].tolist() == [
        1,
        10.0,
        50.0,
    ]

    again, _, failure = run(root, "--gate-repeats", repeats)
    assert failure is None and "6 gate decisions: 0 imported, 6 already stored" in again


def test_bad_rows_are_named_by_file_line_and_field_and_the_good_ones_kept(tmp_path):
    root = folder(
        tmp_path,
        **{
            "issue-summary": ISSUES_HEADER
            + "text,typo,wrap,medium,10,0.5,20.0,0.1\n"
            + "text,typo,overflow,severe,3,0.5,9.0,0.1\n"
            + "text,typo,tilt,low,x,0.5,1.0,0.1\n",
            "generation-metrics": GENERATION_HEADER
            + "m__high,2,1,1,0,100,50,1.0,0.5,complete\n"
            + "m__max,2,2,1,0,100,50,1.0,0.5,complete\n",
        },
    )
    out, err, failure = run(root)
    issues, generation = root / "issue-summary.csv", root / "generation-metrics.csv"
    assert f"{issues}:3 severity: expected one of diagnostic, low, medium, high, got 'severe'" in err
    assert f"{issues}:4 case_count: expected a whole number, got 'x'" in err
    assert f"{generation}:3 task_count: valid + invalid + failed = 3, not 2" in err
    assert "3 issue types: 1 imported, 0 already stored, 2 rejected" in out
    assert "2 candidates: 1 imported, 0 already stored, 1 rejected" in out
    assert failure is None  # good rows were stored: the importers' exit rule
    assert table_frame("pptbench-issue-penalties")["issue_type"].tolist() == ["wrap"]

    # The same key with another value is refused, never overwritten.
    issues.write_text(ISSUES_HEADER + "text,typo,wrap,medium,11,0.5,20.0,0.1\n")
    _, err, failure = run(root, "--no-check")
    assert f"{issues}:2 case_count: stored already as 10, this file says 11" in err
    assert failure == "issue-summary.csv: all 1 issue types rejected; nothing was imported"


def test_a_published_leaderboard_that_does_not_match_is_said_so(tmp_path):
    root = folder(tmp_path)
    (root / "leaderboard.csv").write_text(
        ",".join(LEADERBOARD_COLUMNS)
        + "\n1,m__max,2,0,0.0,22.5,27.5,20.0,70.0,1.0,0.5\n2,m__high,2,1,0.5,10.0,15.0,10.0,35.5,1.0,0.5\n"
    )
    out, _, failure = run(root)
    assert (
        "leaderboard.csv: does not match (1 differences): m__high mean_final_score: computed 35.0, published 35.5"
        in out
    )
    assert "bootstrap.json: absent" in out
    assert failure == "leaderboard.csv not reproduced"


def test_a_missing_folder_or_scores_file_is_refused(tmp_path):
    assert run(tmp_path / "nowhere")[2] == f"{tmp_path / 'nowhere'}: not a folder"
    assert run(tmp_path)[2] == f"{tmp_path}: no scores.csv (a PPTBench results/ folder holds it)"
    root = folder(tmp_path)
    assert run(root, "--process", tmp_path / "none.csv")[2] == f"{tmp_path / 'none.csv'}: not found"
