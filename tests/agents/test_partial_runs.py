"""A run covers the task folders it holds: partial runs, --tasks, a late deck replacing a missing record, and pruning
the phantom rows an earlier import made for every figure of the corpus. Real PPTX files, a real database."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agents.models import Artifact
from agents.selectors import artifact_ids_pending_audit
from annotation.models import Comparison
from annotation.services import comparisons_import
from corpus.image_facts import file_sha256
from scoring.models import JudgeRecord
from scoring.services import judge_records_import
from tests.agents.decks import one_slide_deck
from tests.factories import figure_create

pytestmark = pytest.mark.django_db

SLUGS = ("alpha-direct", "bravo-direct")
CONFIGURATIONS = {
    "configurations": [
        {
            "slug": s,
            "model": s.split("-")[0],
            "harness": "codex",
            "workflow": "direct",
            "reasoning_effort": "high",
            "label": s,
        }
        for s in SLUGS
    ]
}


@pytest.fixture
def run_root(tmp_path):
    """Six figures t0…t5; the run holds alpha-direct/t0, t1 (decks) and t2 (an error log, no deck), and
    bravo-direct/t0 (a deck) and t2 (an empty folder)."""
    for index in range(6):
        figure_create(f"t{index}", index=index)
    root = tmp_path / "runs"
    one_slide_deck(root / "alpha-direct" / "t0" / "output.pptx", boxes=3)
    one_slide_deck(root / "alpha-direct" / "t1" / "output.pptx", boxes=2)
    (root / "alpha-direct" / "t2").mkdir()
    (root / "alpha-direct" / "t2" / "error.log").write_text("agent stopped at the turn budget")
    one_slide_deck(root / "bravo-direct" / "t0" / "output.pptx", title="Bravo", boxes=4)
    (root / "bravo-direct" / "t2").mkdir()
    (tmp_path / "configurations.json").write_text(json.dumps(CONFIGURATIONS))
    return root


def run(command, **options):
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(command, stdout=out, stderr=err, **options)
        failed = None
    except CommandError as error:
        failed = error
    return out.getvalue(), err.getvalue(), failed


def import_run(root, **options):
    return run(
        "import_artifacts",
        run_root=root,
        configurations=root.parent / "configurations.json",
        no_progress=True,
        **options,
    )


def stored() -> dict[tuple[str, str], str]:
    """(configuration, task) → gate reason ('' while pending) of every artifact."""
    rows = Artifact.objects.values_list("configuration__slug", "figure__task_id", "gate_reason")
    return {(slug, task): reason for slug, task, reason in rows}


def test_a_partial_run_creates_rows_for_its_folders_only(run_root):
    out, err, failed = import_run(run_root)
    assert failed is None and err == ""
    assert stored() == {
        ("alpha-direct", "t0"): "",
        ("alpha-direct", "t1"): "",
        ("alpha-direct", "t2"): "missing",
        ("bravo-direct", "t0"): "",
        ("bravo-direct", "t2"): "missing",
    }
    lines = out.splitlines()
    assert (
        "alpha-direct: 2 decks imported (0 replacing a missing record), 1 missing (folder without output.pptx), "
        "0 missing (listed in --tasks, no folder), 0 already stored, 0 refused"
    ) in lines
    assert (
        "bravo-direct: 1 decks imported (0 replacing a missing record), 1 missing (folder without output.pptx), "
        "0 missing (listed in --tasks, no folder), 0 already stored, 0 refused"
    ) in lines
    assert (
        "all configurations: 3 decks imported (0 replacing a missing record), 2 missing (folder without output.pptx), "
        "0 missing (listed in --tasks, no folder), 0 already stored, 0 refused"
    ) in lines
    assert "5 artifacts: 5 imported, 0 already stored, 0 rejected" in lines

    before = list(Artifact.objects.order_by("pk").values())
    out, _, failed = import_run(run_root)
    assert failed is None and "5 artifacts: 0 imported, 5 already stored, 0 rejected" in out
    assert list(Artifact.objects.order_by("pk").values()) == before


def test_tasks_declares_the_expected_set_and_names_unknown_tasks_by_line(run_root):
    tasks = run_root.parent / "tasks.txt"
    tasks.write_text("# the tasks this run was given\n\nt0\nt1   # done twice\nt3\nnot-a-task\nt0\n")
    out, err, failed = import_run(run_root, tasks=tasks)
    assert failed is None  # the unknown task id is a rejection, reported; the good rows kept, so the exit is 0
    assert f"{tasks}:6 task_id: 'not-a-task' is not in the corpus" in err
    assert f"warning: {tasks}:7 task_id: 't0' is listed already (line 3)" in err
    assert f"warning: {run_root / 'alpha-direct' / 't2'} task_id: not listed in --tasks" in err
    assert stored() == {
        ("alpha-direct", "t0"): "",
        ("alpha-direct", "t1"): "",
        ("alpha-direct", "t2"): "missing",  # its folder is there: part of the run, listed or not
        ("alpha-direct", "t3"): "missing",
        ("bravo-direct", "t0"): "",
        ("bravo-direct", "t1"): "missing",
        ("bravo-direct", "t2"): "missing",
        ("bravo-direct", "t3"): "missing",
    }
    absent = Artifact.objects.get(configuration__slug="bravo-direct", figure__task_id="t1")
    assert (absent.gate_passed, absent.pptx.name, absent.error_log.name) == (False, "", "")
    lines = out.splitlines()
    assert (
        "alpha-direct: 2 decks imported (0 replacing a missing record), 1 missing (folder without output.pptx), "
        "1 missing (listed in --tasks, no folder), 0 already stored, 0 refused"
    ) in lines
    assert (
        "bravo-direct: 1 decks imported (0 replacing a missing record), 1 missing (folder without output.pptx), "
        "2 missing (listed in --tasks, no folder), 0 already stored, 0 refused"
    ) in lines
    assert "5 artifacts without output.pptx (gate: missing)" in lines
    assert "9 artifacts: 8 imported, 0 already stored, 1 rejected, 3 warnings" in lines

    # Again without the list: the absent tasks are not part of that run; their stored records stay as they are.
    out, err, failed = import_run(run_root)
    assert failed is None and "5 artifacts: 0 imported, 5 already stored, 0 rejected" in out
    assert len(stored()) == 8


def test_a_late_deck_replaces_the_missing_record_in_place(run_root, tmp_path):
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("t0\nt3\n")
    import_run(run_root, tasks=tasks)
    missing = Artifact.objects.get(configuration__slug="alpha-direct", figure__task_id="t3")
    assert (missing.gate_passed, missing.gate_reason, missing.pptx.name) == (False, "missing", "")
    judge = {
        "task_id": "t3",
        "configuration": "alpha-direct",
        "judge": "judge-x",
        "judge_family": "family-x",
        "run": 1,
        "subscores": {"text": 0, "semantic_structure": 0, "layout": 0, "editability": 0, "visual_detail": 0},
        "score": 0,
        "major_errors": ["no slide"],
        "minor_errors": [],
        "editability_assessment": "nothing to edit",
        "reason": "no deck",
    }
    (tmp_path / "judge.jsonl").write_text(json.dumps(judge) + "\n")
    assert not judge_records_import(path=tmp_path / "judge.jsonl").rejected
    (tmp_path / "battles.csv").write_text(
        "comparison_id,study,task_id,annotator,config_a,config_b,outcome\n"
        "late-1,late,t3,ann,alpha-direct,bravo-direct,tie_failure\n"
    )
    assert not comparisons_import(path=tmp_path / "battles.csv").rejected
    assert JudgeRecord.objects.filter(artifact=missing).count() == 1

    deck = one_slide_deck(run_root / "alpha-direct" / "t3" / "output.pptx", title="Late", boxes=3)
    out, err, failed = import_run(run_root)
    assert failed is None
    assert (
        "alpha-direct: 1 decks imported (1 replacing a missing record), 0 missing (folder without output.pptx), "
        "0 missing (listed in --tasks, no folder), 3 already stored, 0 refused"
    ) in out.splitlines()
    assert (
        f"warning: {run_root / 'alpha-direct' / 't3'} output.pptx: replaced the missing record of artifact "
        f"{missing.pk}: 1 judge records of it deleted; kept on it (made on the missing record): 1 votes"
    ) in err
    replaced = Artifact.objects.get(configuration__slug="alpha-direct", figure__task_id="t3")
    assert replaced.pk == missing.pk
    deck_sha = file_sha256(deck)
    assert replaced.pptx_sha256 == deck_sha and replaced.pptx.name
    assert replaced.pptx.read() == deck.read_bytes()
    assert (replaced.gate_passed, replaced.gate_reason, replaced.gate_detail, replaced.audit_passed) == (
        None,
        "",
        "",
        None,
    )
    assert replaced.pptx_size == deck.stat().st_size and replaced.imported_at > missing.imported_at
    assert not JudgeRecord.objects.filter(artifact_id=missing.pk).exists()  # it scored a deck that did not exist
    vote = Comparison.objects.get(comparison_id="late-1")  # kept: it says what was seen (no rendering)
    assert vote.artifact_a_id == missing.pk and vote.render_sha256_a == ""
    assert replaced.pk in artifact_ids_pending_audit(render=False)

    out, err, failed = run("audit_artifacts", no_render=True, no_progress=True)
    assert failed is None
    replaced.refresh_from_db()
    assert (replaced.audit_passed, replaced.slides, replaced.connectors) == (True, 1, 2)
    assert replaced.gate_passed is None  # the rendering decides the rest

    out, _, failed = import_run(run_root)  # idempotent: the deck is the stored one now
    assert failed is None and "6 artifacts: 0 imported, 6 already stored, 0 rejected" in out
    one_slide_deck(run_root / "alpha-direct" / "t3" / "output.pptx", title="Another attempt", boxes=2)
    out, err, failed = import_run(run_root)
    assert failed is None and "t3 output.pptx: differs from the stored artifact" in err
    assert Artifact.objects.get(pk=missing.pk).pptx_sha256 == deck_sha


def test_a_listed_task_without_a_folder_never_drops_a_stored_deck(run_root, tmp_path):
    import_run(run_root)
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("t0\n")
    (run_root / "bravo-direct" / "t0" / "output.pptx").unlink()
    (run_root / "bravo-direct" / "t0").rmdir()
    kept = Artifact.objects.get(configuration__slug="bravo-direct", figure__task_id="t0")
    out, err, failed = import_run(run_root, tasks=tasks)
    assert failed is None
    assert f"{run_root / 'bravo-direct' / 't0'} task_id: listed in --tasks without a folder" in err
    assert (
        "bravo-direct: 0 decks imported (0 replacing a missing record), 0 missing (folder without output.pptx), "
        "0 missing (listed in --tasks, no folder), 1 already stored, 1 refused"
    ) in out.splitlines()
    assert Artifact.objects.get(pk=kept.pk).pptx_sha256 == kept.pptx_sha256


def test_prune_phantoms_dry_run_then_apply(run_root, tmp_path):
    # The rows the import used to make for every figure of the corpus: --tasks listing them all makes the same.
    tasks = tmp_path / "all.txt"
    tasks.write_text("".join(f"t{i}\n" for i in range(6)))
    import_run(run_root, tasks=tasks)
    assert len(stored()) == 12
    judged = {
        "task_id": "t4",
        "configuration": "alpha-direct",
        "judge": "judge-x",
        "judge_family": "family-x",
        "run": 1,
        "subscores": {"text": 0, "semantic_structure": 0, "layout": 0, "editability": 0, "visual_detail": 0},
        "score": 0,
        "major_errors": [],
        "minor_errors": [],
        "editability_assessment": "",
        "reason": "no deck",
    }
    (tmp_path / "judge.jsonl").write_text(json.dumps(judged) + "\n")
    assert not judge_records_import(path=tmp_path / "judge.jsonl").rejected
    (tmp_path / "battles.csv").write_text(
        "comparison_id,study,task_id,annotator,config_a,config_b,outcome\n"
        "both-missing,prune,t5,ann,bravo-direct,alpha-direct,tie_failure\n"
    )
    assert not comparisons_import(path=tmp_path / "battles.csv").rejected
    ids = {
        (slug, task): pk
        for pk, slug, task in Artifact.objects.values_list("pk", "configuration__slug", "figure__task_id")
    }
    phantoms = [("alpha-direct", "t3"), ("bravo-direct", "t1"), ("bravo-direct", "t3"), ("bravo-direct", "t4")]
    before = list(Artifact.objects.order_by("pk").values())

    out, err, failed = run("artifacts_prune_phantoms", run_root=run_root)
    assert failed is None and err == ""
    assert out.splitlines() == [
        *(f"would delete artifact {ids[key]} {key[0]}/{key[1]}" for key in phantoms),
        "3 missing artifacts without a folder kept: a vote, rating, gate review, judge record or lease names them",
        "4 phantom artifacts would be deleted (dry run; --apply deletes)",
    ]
    assert list(Artifact.objects.order_by("pk").values()) == before

    out, err, failed = run("artifacts_prune_phantoms", run_root=run_root, apply=True)
    assert failed is None and out.splitlines()[-1] == "4 phantom artifacts deleted"
    assert out.splitlines()[:4] == [f"deleted artifact {ids[key]} {key[0]}/{key[1]}" for key in phantoms]
    assert stored() == {
        ("alpha-direct", "t0"): "",
        ("alpha-direct", "t1"): "",
        ("alpha-direct", "t2"): "missing",  # a folder with an error log
        ("alpha-direct", "t4"): "missing",  # a judge record names it
        ("alpha-direct", "t5"): "missing",  # a vote names it
        ("bravo-direct", "t0"): "",
        ("bravo-direct", "t2"): "missing",  # an empty folder: a real missing deck
        ("bravo-direct", "t5"): "missing",  # the same vote
    }
    assert Comparison.objects.filter(comparison_id="both-missing").exists()
    out, _, _ = run("artifacts_prune_phantoms", run_root=run_root)
    assert out.splitlines()[-1] == "0 phantom artifacts would be deleted (dry run; --apply deletes)"


def test_prune_phantoms_needs_a_run_root_and_warns_of_a_configuration_without_folder(run_root, tmp_path):
    _, _, failed = run("artifacts_prune_phantoms", run_root=tmp_path / "elsewhere")
    assert failed is not None and "run root not found" in str(failed)
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("t5\n")
    import_run(run_root, tasks=tasks)
    other = tmp_path / "other-run"
    (other / "alpha-direct" / "t0").mkdir(parents=True)
    out, err, _ = run("artifacts_prune_phantoms", run_root=other)
    assert f"warning: {other / 'bravo-direct'}: no folder for configuration bravo-direct" in err
    assert "would delete" in out and Artifact.objects.filter(figure__task_id="t5").count() == 2
