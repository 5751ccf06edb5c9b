"""Every study kind first-class (pairwise, gate review, rating): created, assigned, paused, resumed and closed from the
web and from `manage.py study`; annotators served from every study assigned to them; what is left of a study (votes
still needed, time to finish at the last day's pace, items waiting for their renderings); attention items set, not
added; the demo's gate-review and rating studies ready to work in. Known answers are computed by hand."""

import io
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from agents.models import Artifact
from annotation import progress, selectors, services
from annotation.models import ArtifactLease, Comparison, Purpose, Study, StudyKind
from annotation.services import artifact_studies, gate_reviews, quality
from core.errors import AppError
from core.services import user_create_with_role
from tests.annotation.data import PASSWORD, SLUGS, annotator, build_corpus, coordinator
from tests.factories import artifact_create, configuration_create

KINDS = (StudyKind.PAIRWISE, StudyKind.GATE_REVIEW, StudyKind.RATING)


# --- the arithmetic (pure, no database) -------------------------------------------------------------------------------
def test_votes_still_needed_counts_each_unit_up_to_its_target():
    # 3 pairs with target 10 and votes 4, 10, 12: 6 + 0 + 0 (the 2 above target make up for nothing)
    assert progress.votes_still_needed([4, 10, 12], target=10) == 6
    assert progress.votes_still_needed([], target=10) == 0
    assert progress.votes_still_needed([0, 0], target=3) == 6


def test_time_to_finish_at_the_last_days_pace():
    # 6 votes needed at 12 votes a day (0.5 an hour): 12 hours
    finish = progress.time_to_finish(needed=6, votes_last_day=12)
    assert finish.hours == 12 and finish.text == "12 hours left at the last day's pace"
    # 1 vote at 24 a day: 1 hour (singular); 7 at 12 a day: 14 hours
    assert progress.time_to_finish(needed=1, votes_last_day=24).text == "1 hour left at the last day's pace"
    assert progress.time_to_finish(needed=7, votes_last_day=12).hours == 14
    # 100 votes at 24 a day: 100 hours = 4.17 days, past two days said in days
    assert progress.time_to_finish(needed=100, votes_last_day=24).text == "4.2 days left at the last day's pace"
    # 5 votes at 2 a day: 60 hours, 2.5 days
    assert progress.time_to_finish(needed=5, votes_last_day=2).text == "2.5 days left at the last day's pace"
    idle = progress.time_to_finish(needed=6, votes_last_day=0)
    assert idle.hours is None and idle.text == "no votes in the last day"
    done = progress.time_to_finish(needed=0, votes_last_day=0)
    assert done.hours == 0 and done.text == "target reached"


def test_annotators_behind_are_those_below_the_median():
    assert progress.annotators_behind({"ann-a": 10, "ann-b": 2, "ann-c": 10}) == ["ann-b"]  # median 10
    assert progress.annotators_behind({"ann-a": 5, "ann-b": 10}) == ["ann-a"]  # median 7.5
    assert progress.annotators_behind({"ann-a": 1, "ann-b": 0, "ann-c": 4, "ann-d": 9}) == ["ann-b", "ann-a"]
    assert progress.annotators_behind({"ann-a": 3, "ann-b": 3}) == []
    assert progress.annotators_behind({"ann-a": 0}) == []


def test_items_waiting_are_pair_figures_with_both_artifacts_not_both_final():
    # configurations 1, 2, 3; figures 10, 11. Configuration 2's artifact on figure 11 waits for its rendering, and
    # configuration 3 has no artifact on figure 11: only (1, 2) on figure 11 waits.
    present = {1: {10, 11}, 2: {10, 11}, 3: {10}}
    final = {1: {10, 11}, 2: {10}, 3: {10}}
    assert progress.items_waiting([(1, 2), (1, 3), (2, 3)], present, final) == 1
    assert progress.items_waiting([(1, 2)], present, present) == 0


# --- the selectors, over a database --------------------------------------------------------------------------------
def _votes(study, item, n, *, at):
    for k in range(n):
        Comparison.objects.create(
            comparison_id=f"{study.name}-{item.pk}-{at:%H%M%S%f}-{k}",
            study=study,
            item=item,
            annotator_name=f"imported-{k % 3}",
            artifact_a=item.artifact_x,
            artifact_b=item.artifact_y,
            left_config=item.config_x,
            outcome="a",
            created_at=at,
            imported=True,
        )


@pytest.mark.django_db
def test_study_progress_of_a_pairwise_study_by_hand():
    build_corpus(figures=2, configurations=SLUGS[:3])
    study = services.study_create(name="by-hand", configurations=SLUGS[:3], target_per_pair=10, min_dwell_ms=0)
    items = {
        (i.config_x.slug, i.config_y.slug): i for i in study.items.filter(in_pool=True, figure__task_id="task-fig-0000")
    }
    now = timezone.now()
    # votes 4, 10, 12 on the three pairs; the 12 are of the last day, the others three days old
    _votes(study, items[(SLUGS[0], SLUGS[1])], 4, at=now - timedelta(days=3))
    _votes(study, items[(SLUGS[0], SLUGS[2])], 10, at=now - timedelta(days=3))
    _votes(study, items[(SLUGS[1], SLUGS[2])], 12, at=now - timedelta(hours=2))
    left = selectors.study_progress(study=study, now=now)
    assert (left["target"], left["needed"], left["votes_last_day"]) == (10, 6, 12)
    assert left["finish"].hours == 12 and left["finish_text"] == "12 hours left at the last day's pace"
    assert left["waiting"] == 0 and left["annotators"] == [] and left["behind"] == []
    # a day later there is no pace
    later = selectors.study_progress(study=study, now=now + timedelta(days=1))
    assert later["finish_text"] == "no votes in the last day" and later["needed"] == 6


@pytest.mark.django_db
def test_study_progress_of_a_gate_review_study_and_who_is_behind():
    build_corpus(figures=2, configurations=SLUGS[:2])  # 4 artifacts
    fast, slow = annotator("ann-fast"), annotator("ann-slow")
    study = services.study_create(
        name="gates", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], annotators=[fast, slow]
    )
    for _ in range(3):
        lease = artifact_studies.artifact_next(study=study, annotator=fast)
        gate_reviews.gate_review_submit(token=lease.token, annotator=fast, gate_fail=False)
    left = selectors.study_progress(study=study)
    # every annotator judges each of the 4 artifacts: (4 − 3) + (4 − 0) = 5 still needed, 3 judged in the last day:
    # 5 × 24 / 3 = 40 hours
    assert (left["target"], left["needed"], left["votes_last_day"]) == (4, 5, 3)
    assert left["finish_text"] == "40 hours left at the last day's pace"
    rows = {a["annotator"]: a for a in left["annotators"]}
    assert (rows["ann-fast"]["done"], rows["ann-fast"]["left"], rows["ann-fast"]["behind"]) == (3, 1, False)
    assert (rows["ann-slow"]["done"], rows["ann-slow"]["left"], rows["ann-slow"]["behind"]) == (0, 4, True)
    assert left["behind"] == ["ann-slow"]


def _pending(*task_ids):
    """Artifacts of these figures wait for their renderings (no verdict yet)."""
    Artifact.objects.filter(figure__task_id__in=task_ids).update(gate_passed=None, render_ok=None)


@pytest.mark.django_db
def test_a_study_waiting_for_renderings_says_so_to_the_annotator_and_on_the_dashboard():
    build_corpus(figures=2, configurations=SLUGS[:3])
    _pending("task-fig-0000", "task-fig-0001")
    worker = annotator("ann-waits")
    study = services.study_create(name="unrendered", configurations=SLUGS[:3], annotators=[worker])
    assert study.items.filter(in_pool=True).count() == 0
    client = Client()
    client.force_login(worker)
    answer = client.post("/api/annotate/next/", {}, content_type="application/json").json()
    # 3 pairs × 2 figures, none rendered
    assert answer["state"] == "waiting"
    assert answer["detail"] == "6 items are waiting for their renderings; come back later."
    listed = selectors.annotator_study_list(user=worker)[0]
    assert (listed["left"], listed["waiting"]) == (0, 6)
    assert listed["waiting_note"] == "6 items are waiting for their renderings; come back later"
    coord = Client()
    coord.force_login(coordinator())
    page = coord.get("/coordinate/unrendered/").content.decode()
    assert 'id="waiting">6</b>' in page and "waiting for their renderings" in page
    # a gate-review study over them: its 6 artifacts wait, and the annotator's home says so
    gates = services.study_create(
        name="gates-unrendered", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:3], annotators=[worker]
    )
    assert selectors.study_progress(study=gates)["waiting"] == 6
    home = client.get("/annotate/").content.decode()
    assert "6 items are waiting for their renderings; come back later" in home and "gates-unrendered" in home


# --- the coordinator's pages: every kind, created, assigned, paused, resumed, closed --------------------------------
def _csrf_client(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _post(client, path: str, data: dict):
    page = client.get(path).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    return client.post(path, {**data, "csrfmiddlewaretoken": token})


def _create_form(kind: str, name: str) -> dict:
    if kind == StudyKind.PAIRWISE:
        return {
            "name": name,
            "configurations": list(SLUGS[:3]),
            "target_per_pair": 4,
            "overlap_rate": 0,
            "seed": 3,
            "quota_per_annotator": 10,
            "min_dwell_ms": 0,
            "lease_seconds": 600,
        }
    return {
        "action": "artifact-study",
        "name": name,
        "kind": kind,
        "configurations": list(SLUGS[:3]),
        "figures": "task-fig-0000 task-fig-0001",
        "rating_axes": "instruction_following, visual_quality",
        "seed": 3,
    }


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_coordinator_runs_every_kind_from_the_web(kind):
    build_corpus(figures=3, configurations=SLUGS[:3])
    worker = annotator("ann-web")
    client = _csrf_client(coordinator())
    assert client.post("/coordinate/", _create_form(kind, "no-token")).status_code == 403  # CSRF is enforced
    created = _post(client, "/coordinate/", _create_form(kind, f"web-{kind.replace('_', '-')}"))
    name = f"web-{kind.replace('_', '-')}"
    assert created.status_code == 302 and created["Location"] == f"/coordinate/{name}/#assign"
    study = Study.objects.get(name=name)
    assert study.kind == kind and study.configurations.count() == 3
    dashboard = client.get(f"/coordinate/{name}/")
    page = dashboard.content.decode()
    assert dashboard.status_code == 200 and 'id="assign"' in page and 'href="#assign"' in page  # no annotator yet
    assert 'id="still-needed"' in page and 'id="time-to-finish"' in page and "no votes in the last day" in page
    if kind == StudyKind.PAIRWISE:
        assert 'id="heatmap"' in page and 'id="still-needed">12</b>' in page  # 3 pairs × 4
    else:
        assert 'id="agreement"' in page and 'id="artifacts-ready">6 / 6</b>' in page  # 3 configurations × 2 figures
        assert 'id="heatmap"' not in page and "live.json" not in page
    _post(client, f"/coordinate/{name}/", {"action": "annotators", "annotators": [worker.pk]})
    assert list(Study.objects.get(name=name).annotators.all()) == [worker]
    assigned = client.get(f"/coordinate/{name}/").content.decode()
    assert 'id="no-annotators"' not in assigned and "ann-web" in assigned
    for status in ("paused", "active", "closed"):
        response = _post(client, f"/coordinate/{name}/", {"action": "status", "status": status})
        assert response.status_code == 302 and Study.objects.get(name=name).status == status
    quality_page = client.get(f"/coordinate/{name}/quality/")
    if kind == StudyKind.PAIRWISE:
        assert quality_page.status_code == 200
    else:  # their quality is their raters' agreement, on the dashboard
        assert quality_page.status_code == 302 and quality_page["Location"] == f"/coordinate/{name}/#agreement"


@pytest.mark.django_db
def test_paused_and_closed_artifact_studies_hand_out_nothing_and_take_no_judgement():
    build_corpus(figures=1, configurations=SLUGS[:2])
    worker = annotator("ann-pause")
    study = services.study_create(
        name="gates-pause", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], annotators=[worker]
    )
    lease = artifact_studies.artifact_next(study=study, annotator=worker)
    services.study_status_set(study=study, status=Study.Status.PAUSED)
    with pytest.raises(AppError, match="paused"):
        artifact_studies.artifact_next(study=study, annotator=worker)
    services.study_status_set(study=study, status=Study.Status.ACTIVE)
    assert artifact_studies.artifact_next(study=study, annotator=worker).pk == lease.pk  # resumed where they were
    services.study_status_set(study=study, status=Study.Status.CLOSED)
    with pytest.raises(AppError, match="closed"):
        gate_reviews.gate_review_submit(token=lease.token, annotator=worker, gate_fail=False)
    # taken off a study, an annotator's open item is given up
    services.study_status_set(study=study, status=Study.Status.ACTIVE)
    services.study_annotators_set(study=study, users=[])
    assert not ArtifactLease.objects.filter(study=study, state=ArtifactLease.State.OPEN).exists()


@pytest.mark.django_db
def test_study_create_keeps_pairwise_settings_to_pairwise_studies():
    build_corpus(figures=1, configurations=SLUGS[:2])
    with pytest.raises(AppError, match="target_per_pair: settings of pairwise studies only"):
        services.study_create(name="x", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], target_per_pair=5)
    with pytest.raises(AppError, match="rating axes belong to rating studies"):
        services.study_create(name="y", configurations=SLUGS[:2], rating_axes=["visual_quality"])
    with pytest.raises(AppError, match="kind must be one of"):
        services.study_create(name="z", kind="vibes", configurations=SLUGS[:2])
    assert not Study.objects.exists()


# --- the command line -------------------------------------------------------------------------------------------------
def run(*args) -> str:
    out = io.StringIO()
    call_command("study", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_study_command_runs_every_kind(kind):
    build_corpus(figures=2, configurations=SLUGS[:3])
    annotator("ann-cli")
    name = f"cli-{kind.replace('_', '-')}"
    axes = ["--rating-axes", "layout", "editability"] if kind == StudyKind.RATING else []
    created = run("create", name, "--kind", kind, "--configurations", *SLUGS[:3], "--seed", "4", *axes)
    study = Study.objects.get(name=name)
    assert study.kind == kind and study.configurations.count() == 3 and study.seed == 4
    assert f"next: manage.py study assign {name} USER..." in created
    if kind == StudyKind.PAIRWISE:
        assert f"created study {name}: 3 configurations, the whole corpus" in created
    else:
        assert f"created {kind} study {name}: 3 configurations, the whole corpus, 6 artifacts" in created
    if kind == StudyKind.RATING:
        assert study.rating_axes == ["layout", "editability"] and "axes layout, editability" in created
    assert run("assign", name, "ann-cli") == f"{name}: 1 annotator assigned\n"
    for status in ("paused", "active", "closed"):
        assert run("status", name, status) == f"{name} is now {status}\n"
        assert Study.objects.get(name=name).status == status
    report = run("progress", name)
    if kind == StudyKind.PAIRWISE:  # 3 pairs × target 20
        assert "still needed: 60 votes to reach 20 per pair" in report
    else:  # one annotator on 6 artifacts
        assert "still needed: 6 judgements (each assigned annotator on each of the 6 artifacts)" in report
    assert "no votes in the last day" in report and "ann-cli\tdone 0" in report
    row = run("list").splitlines()[1].split("\t")
    assert row[0] == name and row[6] == kind


@pytest.mark.django_db
def test_study_command_refuses_pairwise_settings_for_other_kinds():
    build_corpus(figures=1, configurations=SLUGS[:2])
    with pytest.raises(CommandError, match="target_per_pair: settings of pairwise studies only"):
        run("create", "g", "--kind", "gate_review", "--configurations", *SLUGS[:2], "--target-per-pair", "5")
    with pytest.raises(CommandError, match="invalid choice"):
        run("create", "g", "--kind", "poll", "--configurations", *SLUGS[:2])


# --- annotators served from every study assigned to them -------------------------------------------------------------
@pytest.mark.django_db
def test_annotator_is_served_from_two_gate_review_studies_in_turn():
    figs, _, _ = build_corpus(figures=1, configurations=SLUGS[:2])  # 2 artifacts per study
    worker = annotator("ann-gates")
    older = services.study_create(
        name="gates-older", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], annotators=[worker]
    )
    newer = services.study_create(
        name="gates-newer", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], annotators=[worker]
    )
    served = []
    for _ in range(4):
        study = selectors.study_of_kind_for_annotator(user=worker, kind=StudyKind.GATE_REVIEW)
        lease = artifact_studies.artifact_next(study=study, annotator=worker)
        served.append(study.name)
        gate_reviews.gate_review_submit(token=lease.token, annotator=worker, gate_fail=False)
    assert served == ["gates-older", "gates-older", "gates-newer", "gates-newer"]
    assert selectors.study_of_kind_for_annotator(user=worker, kind=StudyKind.GATE_REVIEW) == older  # all done
    assert artifact_studies.artifact_next(study=newer, annotator=worker) is None
    # a new configuration's artifact in the newer study: it is the one with work
    extra = configuration_create("cfg-delta-direct", model="model-deltafive", workflow="direct", position=7)
    artifact_create(extra, figs[0])
    newer.configurations.add(extra)
    assert selectors.study_of_kind_for_annotator(user=worker, kind=StudyKind.GATE_REVIEW) == newer
    held = artifact_studies.artifact_next(study=newer, annotator=worker)
    # the older study gets one too, but the study where the annotator holds an open item comes first
    older.configurations.add(extra)
    assert selectors.study_of_kind_for_annotator(user=worker, kind=StudyKind.GATE_REVIEW) == newer
    gate_reviews.gate_review_submit(token=held.token, annotator=worker, gate_fail=False)
    assert selectors.study_of_kind_for_annotator(user=worker, kind=StudyKind.GATE_REVIEW) == older


@pytest.mark.django_db
def test_annotators_home_lists_every_assigned_study_with_items_left():
    build_corpus(figures=2, configurations=SLUGS[:3])
    worker = annotator("ann-home")
    services.study_create(name="pairs", configurations=SLUGS[:3], annotators=[worker], quota_per_annotator=4)
    services.study_create(name="gates-a", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], annotators=[worker])
    services.study_create(name="gates-b", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:3], annotators=[worker])
    services.study_create(name="rates", kind=StudyKind.RATING, configurations=SLUGS[:1], annotators=[worker])
    listed = {s["name"]: s for s in selectors.annotator_study_list(user=worker)}
    # pairwise: the quota of 4 (of 6 pool items); the others: every artifact (configurations × 2 figures)
    assert {name: (s["kind"], s["left"], s["url"]) for name, s in listed.items()} == {
        "pairs": ("pairwise", 4, "/annotate/pairs/"),
        "gates-a": ("gate_review", 4, "/annotate/review/?study=gates-a"),
        "gates-b": ("gate_review", 6, "/annotate/review/?study=gates-b"),
        "rates": ("rating", 2, "/annotate/rate/?study=rates"),
    }
    client = Client()
    assert client.login(username="ann-home", password=PASSWORD)
    home = client.get("/annotate/").content.decode()
    assert all(name in home for name in listed) and 'href="/annotate/review/?study=gates-a"' in home
    # a gate-review study opened by name goes to its own screen, serving its items, and so does an annotator's only
    # study
    assert client.get("/annotate/gates-a/")["Location"] == "/annotate/review/?study=gates-a"
    only = annotator("ann-only")
    Study.objects.get(name="rates").annotators.add(only)
    client.force_login(only)
    assert client.get("/annotate/")["Location"] == "/annotate/rate/?study=rates"


# --- attention items are set, not added ----------------------------------------------------------------------------
@pytest.mark.django_db
def test_attention_items_are_set_to_the_count_from_the_quality_page():
    figs, _, _ = build_corpus(figures=6)
    raster = configuration_create("cfg-raster-paste", model="model-rasterfour", workflow="direct", position=9)
    for f in figs:
        artifact_create(raster, f, cap=50)
    study = services.study_create(name="qc", configurations=[*SLUGS, raster.slug], min_dwell_ms=0)
    assert len(quality.attention_candidates(study=study)) == 24  # 4 native configurations × 6 figures

    def attention() -> int:
        return study.items.filter(purpose=Purpose.ATTENTION).count()

    client = _csrf_client(coordinator())
    for count, expected in ((10, 10), (3, 3), (50, 24), (0, 0), (5, 5)):
        response = _post(client, "/coordinate/qc/quality/", {"action": "attention", "count": count})
        assert response.status_code == 302 and attention() == expected
    first_five = set(study.items.filter(purpose=Purpose.ATTENTION).values_list("pk", flat=True))
    assert quality.attention_items_set(study=study, count=5).items == 5
    assert set(study.items.filter(purpose=Purpose.ATTENTION).values_list("pk", flat=True)) == first_five  # idempotent
    # an item already served is kept (its vote measures attention): setting 0 leaves it and says so
    served = study.items.filter(purpose=Purpose.ATTENTION).first()
    worker = annotator("ann-attentive")
    Comparison.objects.create(
        comparison_id="attention-vote",
        study=study,
        item=served,
        annotator=worker,
        annotator_name=worker.username,
        artifact_a=served.artifact_x,
        artifact_b=served.artifact_y,
        left_config=served.config_x,
        outcome="a",
        purpose=Purpose.ATTENTION,
        created_at=timezone.now(),
    )
    result = quality.attention_items_set(study=study, count=0)
    assert (result.items, result.served_kept) == (1, 1) and list(study.items.filter(purpose=Purpose.ATTENTION)) == [
        served
    ]
    with pytest.raises(AppError, match="zero or more"):
        quality.attention_items_set(study=study, count=-1)


# --- the demo -------------------------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_the_demos_gate_review_and_rating_studies_have_configurations_the_annotator_and_items_left():
    from demo import sample_data

    user_create_with_role(username="annotator", password="refig-sample", role="annotator")
    sample_data.load_sample_corpus_and_artifacts()
    sample_data.load_sample_study()
    worker = Study.objects.get(name="demo").annotators.get()
    listed = {s["name"]: s for s in selectors.annotator_study_list(user=worker)}
    for name, kind, figures in (("demo-gate-review", StudyKind.GATE_REVIEW, 8), ("demo-ratings", StudyKind.RATING, 6)):
        study = Study.objects.get(name=name)
        assert study.kind == kind and study.configurations.count() == 10 and study.figures.count() == figures
        assert list(study.annotators.all()) == [worker]
        assert listed[name]["left"] > 0 and listed[name]["status"] == "active"
        lease = artifact_studies.artifact_next(study=study, annotator=worker)
        assert lease is not None
        assert selectors.study_of_kind_for_annotator(user=worker, kind=kind) == study
    assert selectors.study_progress(study=Study.objects.get(name="demo-gate-review"))["needed"] == 80  # 8 × 10
    # loading again changes nothing; a study an older demo's import left bare gets its configurations
    bare = Study.objects.get(name="demo-ratings")
    bare.configurations.clear()
    sample_data.load_sample_study()
    assert bare.configurations.count() == 10 and Study.objects.filter(name__startswith="demo").count() == 4


@pytest.mark.django_db
def test_a_gate_review_screen_turns_to_a_study_waiting_for_renderings_over_one_all_done():
    figs, _, _ = build_corpus(figures=2, configurations=SLUGS[:2])
    worker = annotator("ann-next")
    done = services.study_create(
        name="gates-done", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], figures=["task-fig-0000"]
    )
    done.annotators.add(worker)
    for _ in range(2):
        lease = artifact_studies.artifact_next(study=done, annotator=worker)
        gate_reviews.gate_review_submit(token=lease.token, annotator=worker, gate_fail=False)
    _pending("task-fig-0001")
    waits = services.study_create(
        name="gates-waits", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], figures=["task-fig-0001"]
    )
    waits.annotators.add(worker)
    assert selectors.study_of_kind_for_annotator(user=worker, kind=StudyKind.GATE_REVIEW) == waits
    Artifact.objects.filter(figure=figs[1]).update(gate_passed=True)
    assert selectors.study_of_kind_for_annotator(user=worker, kind=StudyKind.GATE_REVIEW) == waits  # now with work
    services.study_status_set(study=waits, status=Study.Status.PAUSED)
    assert selectors.study_of_kind_for_annotator(user=worker, kind=StudyKind.GATE_REVIEW) == done  # all done


@pytest.mark.django_db
def test_the_study_api_creates_and_lists_every_kind():
    build_corpus(figures=1, configurations=SLUGS[:2])
    client = Client()
    client.force_login(coordinator())
    for kind in KINDS:
        body = {"name": f"api-{kind.replace('_', '-')}", "kind": kind, "configurations": list(SLUGS[:2])}
        if kind == StudyKind.RATING:
            body["rating_axes"] = ["layout"]
        created = client.post("/api/studies/", body, content_type="application/json")
        assert created.status_code == 201 and created.json()["kind"] == kind, created.content
    assert Study.objects.get(name="api-rating").rating_axes == ["layout"]
    refused = client.post(
        "/api/studies/",
        {"name": "api-x", "kind": "gate_review", "configurations": [SLUGS[0]], "target_per_pair": 3},
        content_type="application/json",
    )
    assert refused.status_code == 400 and "settings of pairwise studies only" in refused.content.decode()
    assert {s["kind"] for s in client.get("/api/studies/").json()} == set(KINDS)
