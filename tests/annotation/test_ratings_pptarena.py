"""PPTArena rating studies end to end: the import's optional columns (category, judge_family, instruction,
style_target), the system-means / cross-judge / Table 8 tables, the instruction on the rating screen (blinded), and
stratified samples of artifacts from the web and the command line."""

import csv
import io
import re
from collections import Counter

import pytest
from django.core.management import call_command
from django.test import Client

from annotation import quality, selectors
from annotation.models import Rating, Study, StudyArtifact, StudyKind
from annotation.selectors import quality_tables
from annotation.services import artifact_studies, ratings
from core.errors import AppError
from tests.annotation.data import annotator, build_corpus, coordinator
from tests.factories import artifact_create, configuration_create, figure_create

pytestmark = pytest.mark.django_db

CONFIGS = ("cfg-one", "cfg-two")


def _fields_corpus():
    """20 figures, 15 in physics and 5 in biology, each with an artifact of both configurations: 40 artifacts, 30 / 10
    by field and 20 / 20 by configuration."""
    figures = [figure_create(f"task-{i:02d}", field="physics" if i < 15 else "biology", index=i) for i in range(20)]
    for position, slug in enumerate(CONFIGS):
        config = configuration_create(slug, model=f"model-{slug}", workflow="direct", position=position)
        for figure in figures:
            artifact_create(config, figure, gate_passed=True)


def _strata(study: Study, by: str) -> Counter:
    ids = selectors.study_artifact_ids(study=study)
    key = "figure__field" if by == "field" else "configuration__slug"
    from agents.models import Artifact

    return Counter(Artifact.objects.filter(pk__in=ids).values_list(key, flat=True))


# --- stratified samples ---------------------------------------------------------------------------------------------
def test_stratified_by_field_keeps_the_population_shares():
    _fields_corpus()
    study = artifact_studies.artifact_study_create(
        name="strat", kind=StudyKind.RATING, configurations=CONFIGS, figure_sample=8, stratify="field", seed=5
    )
    assert _strata(study, "field") == {"physics": 6, "biology": 2}  # 8 x 30/40 and 8 x 10/40
    assert StudyArtifact.objects.filter(study=study, sampled=True).count() == 8
    by_config = artifact_studies.artifact_study_create(
        name="strat-config",
        kind=StudyKind.GATE_REVIEW,
        configurations=CONFIGS,
        figure_sample=8,
        stratify="configuration",
    )
    assert _strata(by_config, "configuration") == {"cfg-one": 4, "cfg-two": 4}
    with pytest.raises(AppError, match="larger than the 40 artifacts"):
        artifact_studies.artifact_study_create(
            name="too-many", kind=StudyKind.RATING, configurations=CONFIGS, figure_sample=41, stratify="field"
        )


def test_only_the_sample_is_handed_out():
    _fields_corpus()
    study = artifact_studies.artifact_study_create(
        name="strat", kind=StudyKind.RATING, configurations=CONFIGS, figure_sample=4, stratify="field", seed=1
    )
    rater = annotator("rater")
    seen = []
    while (lease := artifact_studies.artifact_next(study=study, annotator=rater)) is not None:
        seen.append(lease.artifact_id)
        ratings.rating_submit(
            token=lease.token, annotator=rater, ratings={"instruction_following": 3, "visual_quality": 4}
        )
    assert sorted(seen) == sorted(selectors.study_artifact_ids(study=study)) and len(seen) == 4
    # the browser's ratings take the figure's field as their category
    assert set(Rating.objects.values_list("category", flat=True)) <= {"physics", "biology"}


def test_stratified_study_from_the_web():
    _fields_corpus()
    client = Client(enforce_csrf_checks=True)
    client.force_login(coordinator())
    page = client.get("/coordinate/").content.decode()
    assert 'name="stratify"' in page
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = {
        "csrfmiddlewaretoken": token,
        "action": "artifact-study",
        "name": "web-strat",
        "kind": StudyKind.RATING,
        "configurations": list(CONFIGS),
        "figure_sample": 8,
        "stratify": "field",
        "seed": 2,
    }
    created = client.post("/coordinate/", form)
    assert created.status_code == 302, created.content.decode()[:2000]
    study = Study.objects.get(name="web-strat")
    assert _strata(study, "field") == {"physics": 6, "biology": 2}


def test_stratified_study_from_the_command_line():
    _fields_corpus()
    out = io.StringIO()
    call_command(
        "study",
        "create",
        "cli-strat",
        "--kind",
        "gate_review",
        "--configurations",
        *CONFIGS,
        "--sample",
        "8",
        "--stratify",
        "field",
        "--seed",
        "4",
        stdout=out,
    )
    assert "8 artifacts" in out.getvalue()
    assert _strata(Study.objects.get(name="cli-strat"), "field") == {"physics": 6, "biology": 2}


# --- the import's optional columns and the tables -------------------------------------------------------------------
COLUMNS = (*ratings.RATING_COLUMNS, "category", "judge_family", "instruction", "style_target")


def _write(tmp_path, rows):
    path = tmp_path / "ratings.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    return path


def test_import_optional_columns_and_tables(tmp_path):
    build_corpus(figures=3, configurations=("cfg-alpha-direct", "cfg-bravo-direct", "cfg-charlie-direct"))
    systems = ("cfg-alpha-direct", "cfg-bravo-direct", "cfg-charlie-direct")
    # family gpt rates alpha 5, bravo 3, charlie 1; family qwen rates alpha 3, bravo 5, charlie 1 (every figure)
    judged = {"gpt": (5, 3, 1), "qwen": (3, 5, 1)}
    rows = []
    for family, values in judged.items():
        for system, value in zip(systems, values):
            for i in range(3):
                for run in (1, 2):
                    category = "charts" if i == 0 else ""
                    rows.append(
                        (
                            f"task-fig-{i:04d}",
                            system,
                            f"{family}-judge",
                            "judge",
                            run,
                            "visual_quality",
                            value,
                            category,
                            family,
                            "Rebuild the bar chart" if i == 0 else "",
                            "flat, two colours" if i == 0 else "",
                        )
                    )
    for system, value in zip(systems, (4, 4, 2)):
        rows.append(("task-fig-0001", system, "ann", "human", 1, "visual_quality", value, "", "", "", ""))
    report = ratings.ratings_import(path=_write(tmp_path, rows), study="arena")
    assert report.rejected == [] and report.created == len(rows)
    assert Rating.objects.count() == len(rows)
    assert Rating.objects.filter(category="charts").count() == 12
    assert set(Rating.objects.exclude(category="charts").values_list("category", flat=True)) == {"cs.CV"}  # the field
    assert set(Rating.objects.filter(rater_kind="judge").values_list("judge_family", flat=True)) == {"gpt", "qwen"}
    item = StudyArtifact.objects.get(
        study__name="arena", artifact__configuration__slug="cfg-alpha-direct", artifact__figure__task_id="task-fig-0000"
    )
    assert (item.instruction, item.style_target) == ("Rebuild the bar chart", "flat, two colours")

    means = quality_tables.rating_system_means_frame(study="arena").set_index(["source", "category", "configuration"])
    assert means.loc[("gpt", quality.OVERALL, "cfg-alpha-direct"), "mean"] == 5
    assert means.loc[("qwen", "charts", "cfg-bravo-direct"), "n"] == 1
    assert means.loc[("human", quality.OVERALL, "cfg-charlie-direct"), "mean"] == 2

    cross = quality_tables.rating_cross_judge_frame(study="arena").iloc[0]
    # orders alpha > bravo > charlie and bravo > alpha > charlie: 1 discordant pair of 3, tau = (2 - 1) / 3
    assert (cross["family_a"], cross["family_b"]) == ("gpt", "qwen")
    assert cross["kendall_tau"] == pytest.approx(1 / 3)
    assert cross["moved"] == "cfg-alpha-direct 1→2; cfg-bravo-direct 2→1"
    assert any("Kendall" in note for note in quality_tables.rating_cross_judge_frame(study="arena").attrs["notes"])

    table8 = quality_tables.rating_table8_frame(study="arena")
    assert set(table8["judge"]) == {"gpt-judge", "qwen-judge"}
    assert (table8["majority_agreement"] == 1.0).all() and (table8["sd_pct"] == 0).all()

    # a different instruction for the same item is refused, the same one is not written again
    clash = [
        (
            "task-fig-0000",
            "cfg-alpha-direct",
            "gpt-judge",
            "judge",
            3,
            "visual_quality",
            5,
            "",
            "gpt",
            "Something else",
            "",
        )
    ]
    again = ratings.ratings_import(path=_write(tmp_path, clash), study="arena")
    assert Rating.objects.filter(run=3).count() == 0
    assert len(again.rejected) == 1 and "instruction: differs from the text stored" in again.rejected[0]


def test_the_rating_screen_shows_the_instruction_not_the_configuration(tmp_path):
    build_corpus(figures=1, configurations=("cfg-alpha-direct",))
    rows = [
        (
            "task-fig-0000",
            "cfg-alpha-direct",
            "gpt-judge",
            "judge",
            1,
            "visual_quality",
            4,
            "",
            "gpt",
            "Rebuild the pipeline diagram",
            "blue boxes",
        )
    ]
    ratings.ratings_import(path=_write(tmp_path, rows), study="arena")
    study = Study.objects.get(name="arena")
    artifact_studies.artifact_study_links_set(study=study, configurations=["cfg-alpha-direct"], figures=None)
    rater = annotator("rater")
    study.annotators.add(rater)
    client = Client()
    client.force_login(rater)
    answer = client.post("/api/annotate/rate/next/", {"study": "arena"}, content_type="application/json").json()
    assert answer["state"] == "item"
    item = answer["item"]
    assert (item["instruction"], item["style_target"]) == ("Rebuild the pipeline diagram", "blue boxes")
    assert "cfg-alpha" not in str(answer) and "model-alphaone" not in str(answer)
    page = client.get("/annotate/rate/").content.decode()
    assert 'id="task-instruction"' in page and "cfg-alpha" not in page


def test_an_import_looks_each_artifact_up_once_not_on_every_row(tmp_path, django_assert_max_num_queries):
    """Ratings name one artifact on many rows (raters x axes x runs): 2 artifacts x 3 raters x 2 axes x 2 runs = 24
    rows. Each row still costs its own lookup of a stored rating and its insert (and the axis list on its first row),
    but the artifact and its figure's field only once per artifact."""
    _fields_corpus()
    rows = [
        (task, "cfg-one", rater, "human", run, axis, 3, "", "", "", "")
        for task in ("task-00", "task-01")
        for rater in ("r1", "r2", "r3")
        for axis in ("iff", "vq")
        for run in (1, 2)
    ]
    path = _write(tmp_path, rows)
    # Per row: a stored rating's lookup and the insert, in their savepoint; per artifact: 3 lookups and the field.
    with django_assert_max_num_queries(24 * 4 + 2 * 4 + 10):
        report = ratings.ratings_import(path=path, study="arena")
    assert report.created == 24
    assert sorted(Rating.objects.values_list("category", flat=True).distinct()) == ["physics"]
    broken = _write(tmp_path, [("task-99", *rows[0][1:])] * 3)
    again = ratings.ratings_import(path=broken, study="arena")
    assert len(again.rejected) == 3 and all("task_id: unknown figure 'task-99'" in e for e in again.rejected)
