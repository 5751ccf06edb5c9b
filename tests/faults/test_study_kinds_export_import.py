"""export_study → an empty database → import_study for every study kind besides the pairwise one of
test_study_export_import.py: a gate-review study and a rating study on stratified samples, a screening study and a
votes-only study made by import_battles, each built through the app's own services, exported, imported into an emptied
database and compared row by row and table by table; no username in any exported file; bad files answered with their
file, line and field."""

import csv
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agents import services as agent_services
from annotation import selectors, services
from annotation.models import GateReview, ImportedBattle, Rating, ScreeningDecision, Study, StudyArtifact, StudyKind
from annotation.selectors.screening import screening_token
from annotation.services import artifact_studies, gate_reviews, ratings
from annotation.services import screening as screening_services
from core.pseudonyms import PERSON_COLUMN, PSEUDONYM, pseudonym, pseudonym_key, pseudonymise_frame
from core.tables import table_frame
from corpus import selectors as corpus_selectors
from tests.annotation.data import annotator
from tests.faults.test_study_export_import import (
    CONFIGURATIONS,
    SLUGS,
    build_corpus,
    database_and_media_empty,
    every_table,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.libreoffice]

AXES = ["instruction_following", "visual_quality"]
JUDGES = {"judge-opus": "family-a", "judge-gem": "family-b"}


def _pseudonym(username: str) -> str:
    return pseudonym(username, key=pseudonym_key())


def _only_pseudonyms(names) -> int:
    """How many people these names are, checking that each is a pseudonym (what an imported study holds)."""
    names = set(names)
    assert names and all(PSEUDONYM.match(name) for name in names), sorted(names)
    return len(names)


def _tables(names: tuple[str, ...], study: str) -> dict[str, pd.DataFrame]:
    """The named tables of the study as an export shows them (people by pseudonym)."""
    return {name: pseudonymise_frame(table_frame(name, study=study)) for name in names}


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows in an order of their own. A table lists people in the order of their names, and after the import the
    names are the pseudonyms: a pair of people (symmetric statistics) is put in name order, then the rows are sorted."""
    frame = frame.copy()
    for first in [c for c in frame.columns if PERSON_COLUMN.match(c) and c.endswith("_a")]:
        second = first[:-2] + "_b"
        swap = (frame[first].astype(str) > frame[second].astype(str)) & (frame[second].astype(str) != "")
        frame.loc[swap, [first, second]] = frame.loc[swap, [second, first]].to_numpy()
    return frame.sort_values(list(frame.columns), key=lambda column: column.astype(str)).reset_index(drop=True)


def _assert_tables_equal(after: dict, before: dict) -> None:
    assert sorted(after) == sorted(before)
    for name in sorted(before):
        pd.testing.assert_frame_equal(_canonical(after[name]), _canonical(before[name]), obj=name)
        assert after[name].attrs.get("notes") == before[name].attrs.get("notes"), name


def _study_facts(name: str) -> dict:
    study = Study.objects.get(name=name)
    return {
        "kind": study.kind,
        "status": study.status,
        "description": study.description,
        "seed": study.seed,
        "rating_axes": list(study.rating_axes) if study.kind == StudyKind.RATING else [],
        "configurations": [c.slug for c in selectors.study_configurations(study)],
        "figures": sorted(study.figures.values_list("task_id", flat=True)),
    }


def _study_artifacts(name: str) -> list[tuple]:
    rows = StudyArtifact.objects.filter(study__name=name).values_list(
        "artifact__figure__task_id", "artifact__configuration__slug", "sampled", "instruction", "style_target"
    )
    return sorted(rows)


def _round_trip(name: str, tmp_path, settings) -> tuple[Path, list[str]]:
    """Export the study, empty the database and the media, import: the folder and the import's output lines."""
    out = tmp_path / "export"
    call_command("export_study", name, str(out))
    database_and_media_empty(settings)
    assert not Study.objects.exists()
    stdout = io.StringIO()
    call_command("import_study", str(out), stdout=stdout)
    return out, stdout.getvalue().splitlines()


def _import_again_creates_nothing(out) -> None:
    stdout = io.StringIO()
    call_command("import_study", str(out), stdout=stdout)
    summaries = [line for line in stdout.getvalue().splitlines() if " imported, " in line]
    assert summaries and all(": 0 imported," in line for line in summaries), summaries


# --- gate review ------------------------------------------------------------------------------------------------------
VERDICTS = (("pass", ""), ("semantic", "the labels do not match the source"), ("pass", ""), ("rendering", "blank"))


def _gate_review_study() -> Study:
    study = services.study_create(
        name="gates",
        kind=StudyKind.GATE_REVIEW,
        configurations=list(SLUGS),
        figure_sample=8,
        stratify="configuration",
        seed=3,
        description="three reviewers on a sample of eight",
    )
    for r in range(3):
        reviewer = annotator(f"gate-reviewer-{r}")
        study.annotators.add(reviewer)
        n = r  # each reviewer starts the verdict cycle elsewhere: they disagree on some artifacts
        while (lease := artifact_studies.artifact_next(study=study, annotator=reviewer)) is not None:
            verdict, reason = VERDICTS[n % len(VERDICTS)]
            gate_reviews.gate_review_submit(
                token=lease.token,
                annotator=reviewer,
                gate_fail=verdict != "pass",
                gate="" if verdict == "pass" else verdict,
                reason=reason,
            )
            n += 1
    services.study_status_set(study=study, status=Study.Status.PAUSED)
    return study


def _gate_review_rows() -> list[tuple]:
    rows = GateReview.objects.values_list(
        "artifact__figure__task_id", "artifact__configuration__slug", "reviewer", "gate_fail", "gate", "reason"
    )
    return sorted((task, config, _pseudonym(reviewer), *rest) for task, config, reviewer, *rest in rows)


GATE_TABLES = ("gate-review-agreement", "gate-review-vs-automated")


def test_a_gate_review_study_with_its_sample_and_reviews_survives_export_and_import(tmp_path, settings):
    build_corpus(tmp_path, judged=False)
    study = _gate_review_study()
    facts, sample, reviews = _study_facts("gates"), _study_artifacts("gates"), _gate_review_rows()
    tables = _tables(GATE_TABLES, "gates")
    served = sorted(selectors.study_artifact_ids(study=study))
    dashboard = selectors.artifact_study_dashboard(study=study)
    # Known answers: 8 sampled artifacts, 8 / 3 configurations kept 3-3-2, each reviewed by all three reviewers.
    assert len(sample) == 8 and all(sampled for _, _, sampled, _, _ in sample)
    assert len(served) == 8 and len(reviews) == 24
    assert {gate for *_, gate, _ in reviews} == {"", "semantic", "rendering"}
    assert (dashboard["artifacts"], dashboard["judgements"], dashboard["artifacts_overlap"]) == (8, 24, 8)
    assert len(tables["gate-review-agreement"]) >= 3 and len(tables["gate-review-vs-automated"]) == 3

    out, lines = _round_trip("gates", tmp_path, settings)
    assert _only_pseudonyms(GateReview.objects.values_list("reviewer", flat=True)) == 3
    assert sorted(p.name for p in out.iterdir() if p.suffix in (".csv", ".json")) == [
        "configurations.json",
        "gate_reviews.csv",
        "sample.csv",
        "study.json",
    ]
    assert "24 reviews: 24 imported, 0 already stored, 0 rejected" in lines
    assert "8 sampled artifacts: 8 imported, 0 already stored, 0 rejected" in lines

    assert _study_facts("gates") == facts == {**facts, "kind": "gate_review", "status": "paused"}
    assert _study_artifacts("gates") == sample
    assert _gate_review_rows() == reviews
    _assert_tables_equal(_tables(GATE_TABLES, "gates"), tables)
    imported = Study.objects.get(name="gates")
    assert len(selectors.study_artifact_ids(study=imported)) == 8
    after = selectors.artifact_study_dashboard(study=imported)
    assert (after["artifacts"], after["judgements"], after["artifacts_overlap"]) == (8, 24, 8)
    # Imported reviews are imported: the browser's undo never withdraws them.
    assert [r["imported"] for r in after["raters"]] == [8, 8, 8]

    _import_again_creates_nothing(out)
    assert _gate_review_rows() == reviews and _study_artifacts("gates") == sample


# --- rating -----------------------------------------------------------------------------------------------------------
def _rating_study(tmp_path) -> Study:
    study = services.study_create(
        name="rates",
        kind=StudyKind.RATING,
        configurations=list(SLUGS),
        rating_axes=AXES,
        figure_sample=6,
        stratify="field",
        seed=5,
        description="two raters and two judges",
    )
    for r in range(2):
        rater = annotator(f"rating-person-{r}")
        study.annotators.add(rater)
        n = 0
        while (lease := artifact_studies.artifact_next(study=study, annotator=rater)) is not None:
            ratings.rating_submit(
                token=lease.token, annotator=rater, ratings={AXES[0]: (n + r) % 6, AXES[1]: (2 * n + r) % 6}
            )
            n += 1
    # Two judges in two runs on every sampled artifact, with the item's task text, through the rating import.
    path = tmp_path / "judges.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*ratings.RATING_COLUMNS, *ratings.OPTIONAL_RATING_COLUMNS])
        keys = sorted(
            StudyArtifact.objects.filter(study=study, sampled=True).values_list(
                "artifact__figure__task_id", "artifact__configuration__slug"
            )
        )
        for i, (task, config) in enumerate(keys):
            for j, (judge, family) in enumerate(JUDGES.items()):
                for run in (1, 2):
                    for a, axis in enumerate(AXES):
                        rating = (i + j + a + (i % 2 if run == 2 else 0)) % 6  # runs disagree on odd items
                        writer.writerow(
                            [task, config, judge, "judge", run, axis, rating, "", family]
                            + [f"redraw figure {task}", "flat, two colours"]
                        )
    report = ratings.ratings_import(path=path, study="rates")
    assert not report.rejected and report.created == 6 * 2 * 2 * 2
    services.study_status_set(study=study, status=Study.Status.CLOSED)
    return study


def _rating_rows() -> list[tuple]:
    rows = Rating.objects.values_list(
        "artifact__figure__task_id",
        "artifact__configuration__slug",
        "rater",
        "rater_kind",
        "run",
        "axis",
        "rating",
        "category",
        "judge_family",
    )
    return sorted(
        (task, config, _pseudonym(rater) if kind == "human" else rater, kind, *rest)
        for task, config, rater, kind, *rest in rows
    )


RATING_TABLES = (
    "rating-agreement",
    "rating-consistency",
    "rating-table8",
    "rating-system-means",
    "rating-cross-judge",
)


def test_a_rating_study_with_its_sample_item_texts_and_human_and_judge_ratings_survives(tmp_path, settings):
    build_corpus(tmp_path, judged=False)
    _rating_study(tmp_path)
    facts, items, rows = _study_facts("rates"), _study_artifacts("rates"), _rating_rows()
    tables = _tables(RATING_TABLES, "rates")
    # Known answers: 6 sampled artifacts, each with the judges' task text; 2 humans x 6 x 2 axes + 48 judge ratings.
    assert len(items) == 6 and all(sampled and text.startswith("redraw") for _, _, sampled, text, _ in items)
    assert len(rows) == 2 * 6 * 2 + 48
    assert {rater for _, _, rater, kind, *_ in rows if kind == "judge"} == set(JUDGES)
    assert {family for *_, family in rows} == {"", *JUDGES.values()}
    assert set(tables["rating-agreement"]["judge"]) == set(JUDGES) and len(tables["rating-agreement"]) == 4

    out, _ = _round_trip("rates", tmp_path, settings)
    assert _only_pseudonyms(Rating.objects.filter(rater_kind="human").values_list("rater", flat=True)) == 2
    text = (out / "ratings.csv").read_text()
    assert "judge-opus" in text and "rating-person" not in text  # judges by model id, people by pseudonym

    assert _study_facts("rates") == facts == {**facts, "status": "closed", "rating_axes": AXES}
    assert _study_artifacts("rates") == items
    assert _rating_rows() == rows
    _assert_tables_equal(_tables(RATING_TABLES, "rates"), tables)

    _import_again_creates_nothing(out)
    assert _rating_rows() == rows and _study_artifacts("rates") == items


# --- screening --------------------------------------------------------------------------------------------------------
def _screening_study() -> Study:
    task_ids = [f"t{i}" for i in range(4)]
    study = services.study_create(
        name="screen", kind=StudyKind.SCREENING, figures=task_ids, seed=4, description="corpus screening"
    )
    figure_ids = corpus_selectors.figure_ids(task_ids=task_ids)
    # (screener, task, accepted, reason): t0 accepted 2-1, t1 rejected 0-2, t2 a 1-1 tie, t3 one decision and a skip.
    plan = [
        (0, "t0", True, ""),
        (1, "t0", True, "clear diagram"),
        (2, "t0", False, "a photograph"),
        (0, "t1", False, "a plot, not an overview"),
        (1, "t1", False, "too small"),
        (0, "t2", True, ""),
        (2, "t2", False, "mostly text"),
        (1, "t3", True, ""),
        (2, "t3", None, "cannot read the labels"),
    ]
    screeners = [annotator(f"screen-person-{s}") for s in range(3)]
    study.annotators.add(*screeners)
    for s, task, accepted, reason in plan:
        token = screening_token(study=study, figure_id=figure_ids[task], user=screeners[s])
        if accepted is None:
            screening_services.screening_skip(token=token, annotator=screeners[s], reason=reason)
        else:
            screening_services.screening_decide(token=token, annotator=screeners[s], accepted=accepted, reason=reason)
    return study


def _screening_rows() -> list[tuple]:
    rows = ScreeningDecision.objects.values_list(
        "figure__task_id", "annotator__username", "accepted", "reason", "decided_at"
    )
    return sorted(((task, _pseudonym(name), *rest) for task, name, *rest in rows), key=str)


SCREENING_TABLES = ("screening-decisions", "screening-summary", "screening-agreement")


def test_a_screening_study_with_its_decisions_and_skips_survives_export_and_import(tmp_path, settings):
    build_corpus(tmp_path, judged=False)
    study = _screening_study()
    facts, rows, tables = _study_facts("screen"), _screening_rows(), _tables(SCREENING_TABLES, "screen")
    dashboard = selectors.screening_dashboard(study=study)
    # Known answers by hand (see the plan): 8 decisions and a skip; t0 accepted 2-1, t1 rejected, t2 a tie, t3 1-0.
    assert len(rows) == 9
    assert tables["screening-summary"].values.tolist() == [
        ["t0", 2, 1, "accepted"],
        ["t1", 0, 2, "rejected"],
        ["t2", 1, 1, "undecided"],
        ["t3", 1, 0, "accepted"],
    ]
    counts = sorted((_pseudonym(s["screener"]), s["accepts"], s["rejects"], s["skips"]) for s in dashboard["screeners"])
    assert sorted(c[1:] for c in counts) == [(0, 2, 1), (2, 1, 0), (2, 1, 0)]

    out, _ = _round_trip("screen", tmp_path, settings)
    assert _only_pseudonyms(ScreeningDecision.objects.values_list("annotator__username", flat=True)) == 3
    assert _study_facts("screen") == facts == {**facts, "kind": "screening", "figures": ["t0", "t1", "t2", "t3"]}
    assert _screening_rows() == rows
    _assert_tables_equal(_tables(SCREENING_TABLES, "screen"), tables)
    after = selectors.screening_dashboard(study=Study.objects.get(name="screen"))
    assert sorted((s["screener"], s["accepts"], s["rejects"], s["skips"]) for s in after["screeners"]) == counts
    assert (after["accepted"], after["rejected"], after["undecided"]) == (2, 1, 1)

    _import_again_creates_nothing(out)
    assert _screening_rows() == rows


# --- votes only -------------------------------------------------------------------------------------------------------
# Three systems named as anyone names them, on 8 questions, voted on by three of the arena's voters.
ARENA = [
    ["question_id", "model_a", "model_b", "winner", "judge", "tstamp"],
    *(
        [f"q{q}", a, b, winner, f"arena-voter-{q % 3}", 1_720_000_000 + 10 * q + k]
        for q in range(8)
        for k, (a, b, winner) in enumerate(
            [
                ("Qwen/Qwen2.5-72B", "gpt-4o-MINI.2024", ("model_a", "model_b", "tie", "tie (bothbad)")[q % 4]),
                ("gpt-4o-MINI.2024", "Llama 3.1 8B", ("model_a", "tie", "model_b")[q % 3]),
                ("Llama 3.1 8B", "Qwen/Qwen2.5-72B", ("model_b", "model_a")[q % 2]),
            ]
        )
    ),
]
VOTES_TABLES = ("comparisons", "coverage", "elo", "win-rates")


def _battle_rows() -> list[tuple]:
    rows = ImportedBattle.objects.filter(study__name="arena").values_list(
        "battle_id",
        "cluster",
        "system_a__model",
        "system_b__model",
        "outcome",
        "annotator_name",
        "reason",
        "created_at",
    )
    return sorted(
        (battle, cluster, a, b, outcome, _pseudonym(name), *rest)
        for battle, cluster, a, b, outcome, name, *rest in rows
    )


def test_a_votes_only_study_from_import_battles_survives_export_and_import(tmp_path, settings):
    # An installation with its own agent configuration beside the votes-only systems (the test below has none).
    (tmp_path / "configurations.json").write_text(json.dumps({"configurations": CONFIGURATIONS["configurations"][:1]}))
    agent_services.artifacts_import(run_root=tmp_path / "runs", configurations_file=tmp_path / "configurations.json")
    # An earlier votes-only study met Llama first: the arena lists it first, though its own file shows it last.
    (tmp_path / "earlier.csv").write_text("model_a,model_b,winner\nLlama 3.1 8B,Mistral,model_a\n")
    call_command("import_battles", str(tmp_path / "earlier.csv"), "--study", "earlier", stdout=io.StringIO())
    path = tmp_path / "arena.csv"
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(ARENA)
    call_command("import_battles", str(path), "--study", "arena", "--no-progress", stdout=io.StringIO())
    arena = Study.objects.get(name="arena")
    Study.objects.filter(pk=arena.pk).update(target_per_pair=8, description="an arena's battles")  # the admin's edit
    services.study_status_set(study=arena, status=Study.Status.CLOSED)
    facts, rows = _study_facts("arena"), _battle_rows()
    systems = [(c.slug, c.model, c.suite) for c in selectors.study_configurations(arena)]
    tables = _tables(VOTES_TABLES, "arena")
    everything = {k: v if isinstance(v, str) else pseudonymise_frame(v) for k, v in every_table("arena").items()}
    assert len(rows) == 24 and [s[1] for s in systems] == ["Llama 3.1 8B", "Qwen/Qwen2.5-72B", "gpt-4o-MINI.2024"]
    assert {row[4] for row in rows} == {"a", "b", "tie", "tie_failure"}
    assert tables["coverage"]["n"].tolist() == [8, 8, 8] and tables["coverage"]["target"].tolist() == [8, 8, 8]

    out, _ = _round_trip("arena", tmp_path, settings)
    assert _only_pseudonyms(ImportedBattle.objects.values_list("annotator_name", flat=True)) == 3
    assert _study_facts("arena") == facts == {**facts, "status": "closed", "description": "an arena's battles"}
    assert _battle_rows() == rows
    assert [(c.slug, c.model, c.suite) for c in selectors.study_configurations(Study.objects.get(name="arena"))] == (
        systems
    )
    assert not Study.objects.get(name="arena").comparisons.exists()  # still votes only
    _assert_tables_equal(_tables(VOTES_TABLES, "arena"), tables)
    after = every_table("arena")
    for name, frame in everything.items():
        if isinstance(frame, str):
            assert after[name] == frame, name
        else:
            pd.testing.assert_frame_equal(after[name], frame, obj=name)

    _import_again_creates_nothing(out)
    assert _battle_rows() == rows


def test_a_votes_only_study_of_an_installation_without_agents_survives_export_and_import(tmp_path, settings):
    path = tmp_path / "arena.csv"
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(ARENA)
    call_command("import_battles", str(path), "--study", "arena", "--no-progress", stdout=io.StringIO())
    rows = _battle_rows()
    out, _ = _round_trip("arena", tmp_path, settings)
    assert _battle_rows() == rows
    assert not (out / "configurations.json").exists() and not (out / "runs").exists()  # no agents: nothing written
    _import_again_creates_nothing(out)


# --- what leaves the app ----------------------------------------------------------------------------------------------
def test_no_username_appears_in_any_exported_file_of_any_kind(tmp_path, settings):
    build_corpus(tmp_path, judged=False)
    _gate_review_study()
    _rating_study(tmp_path)
    _screening_study()
    voters = [annotator(f"pairwise-voter-{i}") for i in range(2)]
    pairs = services.study_create(name="pairs", configurations=list(SLUGS), min_dwell_ms=0, annotators=voters)
    for voter in voters:
        for _ in range(3):
            served = services.item_next(study=pairs, annotator=voter)
            services.comparison_submit(token=served.lease.token, annotator=voter, outcome="a", dwell_ms=4000)
    usernames = sorted(set(Study.objects.exclude(annotators=None).values_list("annotators__username", flat=True)))
    assert len(usernames) == 3 + 2 + 3 + 2
    for name in ("gates", "rates", "screen", "pairs"):
        out = tmp_path / f"export-{name}"
        call_command("export_study", name, str(out), stdout=io.StringIO())
        texts = {
            p.name: p.read_text() for p in out.rglob("*") if p.is_file() and p.suffix in (".csv", ".json", ".jsonl")
        }
        people = [u for u in usernames if any(_pseudonym(u) in text for text in texts.values())]
        assert people, f"{name}: no pseudonym in the export"  # the people are there, by pseudonym
        for username in usernames:
            for file, text in texts.items():
                assert username not in text, f"{username} in {name}/{file}"


# --- bad files --------------------------------------------------------------------------------------------------------
def _import_error(folder) -> str:
    with pytest.raises(CommandError) as raised:
        call_command("import_study", str(folder), stdout=io.StringIO(), stderr=io.StringIO())
    return str(raised.value)


def _import_stderr(folder) -> str:
    stderr = io.StringIO()
    call_command("import_study", str(folder), stdout=io.StringIO(), stderr=stderr)
    return stderr.getvalue()


def test_bad_files_are_answered_with_file_line_and_field(tmp_path):
    build_corpus(tmp_path, judged=False)
    _gate_review_study()
    _screening_study()
    gates, screen = tmp_path / "gates", tmp_path / "screen"
    call_command("export_study", "gates", str(gates), stdout=io.StringIO())
    call_command("export_study", "screen", str(screen), stdout=io.StringIO())

    def variant(source, name: str):
        copy = tmp_path / name
        shutil.copytree(source, copy)
        return copy

    broken = variant(gates, "not-json")
    (broken / "study.json").write_text('{\n "name": "gates",\n "kind": \n}')
    assert _import_error(broken) == f"{broken / 'study.json'}:4 not JSON: Expecting value"

    broken = variant(gates, "bad-kind")
    (broken / "study.json").write_text((gates / "study.json").read_text().replace('"gate_review"', '"vibes"'))
    assert "study.json kind: must be one of pairwise, gate_review, rating, screening, got 'vibes'" in _import_error(
        broken
    )

    broken = variant(gates, "bad-seed")
    (broken / "study.json").write_text((gates / "study.json").read_text().replace('"seed": 3', '"seed": "three"'))
    assert "study.json settings.seed: “three” value must be an integer." in _import_error(broken)

    broken = variant(gates, "nan-seed")
    (broken / "study.json").write_text((gates / "study.json").read_text().replace('"seed": 3', '"seed": NaN'))
    assert "study.json: NaN is not a finite number" in _import_error(broken)

    broken = variant(gates, "unknown-configuration")
    (broken / "study.json").write_text(
        (gates / "study.json").read_text().replace('"gates"', '"gates-2"').replace('"bravo-direct"', '"nobody"')
    )
    assert "study.json: unknown configurations: nobody" in _import_error(broken)

    broken = variant(gates, "bad-configurations")
    (broken / "configurations.json").write_text("not json")
    assert _import_error(broken).startswith(f"{broken / 'configurations.json'}: cannot parse")

    broken = variant(gates, "no-reviews")
    (broken / "gate_reviews.csv").unlink()
    assert (
        _import_error(broken) == f"{broken / 'gate_reviews.csv'}: not found (the export of a gate_review study has one)"
    )

    # Rows: the good ones stay stored, each bad one is named by file, line and field.
    broken = variant(gates, "bad-rows")
    lines = (gates / "gate_reviews.csv").read_text().splitlines()
    lines[2] = lines[2].replace(",True,", ",maybe,").replace(",False,", ",maybe,")
    lines[3] = "t9," + lines[3].split(",", 1)[1]
    (broken / "gate_reviews.csv").write_text("\n".join(lines) + "\n")
    sample = (gates / "sample.csv").read_text().splitlines()
    (broken / "sample.csv").write_text("\n".join([*sample, "t0,nobody"]) + "\n")
    errors = _import_stderr(broken)
    assert f"{broken / 'gate_reviews.csv'}:3 gate_fail: gate_fail must be true or false, not 'maybe'" in errors
    assert f"{broken / 'gate_reviews.csv'}:4 task_id: unknown figure 't9'" in errors
    assert f"{broken / 'sample.csv'}:{len(sample) + 1} configuration: unknown configuration 'nobody'" in errors

    broken = variant(screen, "bad-decisions")
    lines = (screen / "screening_decisions.csv").read_text().splitlines()
    lines[1] = lines[1].replace(",accept,", ",maybe,")
    lines[2] = lines[2].rsplit(",", 1)[0] + ",yesterday"
    (broken / "screening_decisions.csv").write_text("\n".join(lines) + "\n")
    errors = _import_stderr(broken)
    assert f"{broken / 'screening_decisions.csv'}:2 decision: must be accept, reject, skip, got 'maybe'" in errors
    assert f"{broken / 'screening_decisions.csv'}:3 decided_at: not an ISO 8601 date-time: 'yesterday'" in errors

    # Last, as it imports the study's reviews under their pseudonyms: a manifest line that is not JSON is named by the
    # corpus importer, and the rest of the study goes on.
    broken = variant(gates, "bad-manifest")
    manifest = (gates / "manifest.jsonl").read_text().splitlines()
    (broken / "manifest.jsonl").write_text("\n".join(['{"task_id": "x", broken', *manifest]) + "\n")
    stdout = io.StringIO()
    call_command("import_study", str(broken), stdout=stdout, stderr=stdout)
    assert f"{broken / 'manifest.jsonl'}:1 $: malformed JSON" in stdout.getvalue()
    assert "5 rows: 0 imported, 4 already stored, 1 rejected" in stdout.getvalue()
