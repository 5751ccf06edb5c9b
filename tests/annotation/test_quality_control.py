"""Quality control of pairwise studies (attention items, swapped repeats, exclusion, adjudication, calibration) and
the gate-review and rating studies: services, importers, tables and exports."""

import io

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from PIL import Image
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from annotation import selectors, services
from annotation.models import Comparison, GateReview, Item, Lease, Purpose, Rating, StudyKind
from annotation.services import artifact_studies, gate_reviews, quality, ratings
from core.errors import AppError
from core.pseudonyms import pseudonym, pseudonym_key
from tests.annotation.data import SLUGS, annotator, build_corpus, coordinator, next_lease, submit_vote
from tests.factories import artifact_create, configuration_create

pytestmark = pytest.mark.django_db


def _raster_configuration(figs):
    """A configuration whose every artifact is a pasted full-slide raster (capped at 50)."""
    raster = configuration_create("cfg-raster-paste", model="model-rasterfour", workflow="direct", position=9)
    for f in figs:
        artifact_create(raster, f, cap=50)
    return raster


def _study(**settings):
    figs, configs, _ = build_corpus(figures=settings.pop("figures", 6))
    raster = _raster_configuration(figs)
    settings.setdefault("min_dwell_ms", 0)
    study = services.study_create(name="qc", configurations=[*SLUGS, raster.slug], **settings)
    return study, figs


def _vote_all(study, user, n, outcome="a"):
    leases = []
    for _ in range(n):
        lease = next_lease(study=study, annotator=user)
        if lease is None:
            break
        submit_vote(token=lease.token, annotator=user, outcome=outcome, reason="r", dwell_ms=5000)
        leases.append(Lease.objects.get(pk=lease.pk))
    return leases


def test_attention_items_are_raster_against_native_and_never_count():
    study, _ = _study(attention_rate=0.25, quota_per_annotator=12)
    added = quality.attention_items_add(study=study, count=3)
    assert len(added) == 3
    for item in added:
        assert item.purpose == Purpose.ATTENTION and not item.in_pool
        raster_side = "y" if item.artifact_y.capped else "x"
        assert item.expected_label == ("x" if raster_side == "y" else "y")
    assert quality.attention_items_add(study=study, count=3) == added  # idempotent
    user = annotator()
    leases = _vote_all(study, user, 12)
    purposes = [lease.purpose for lease in leases]
    # floor(0.25·n): the 4th, 8th and 12th items are attention items
    assert [i for i, p in enumerate(purposes, 1) if p == Purpose.ATTENTION] == [4, 8, 12]
    attention_votes = Comparison.objects.filter(study=study, purpose=Purpose.ATTENTION)
    assert attention_votes.count() == 3 and not attention_votes.filter(counted=True).exists()
    assert all(Item.objects.get(pk=i.pk).votes == 0 for i in added)
    assert selectors.coverage_frame(study="qc")["n"].sum() == 9
    assert len(selectors.comparisons_frame(study="qc")) == 9
    notes = selectors.comparisons_frame(study="qc").attrs["notes"]
    assert "left out 3 attention votes (quality checks, never counted)" in notes


def test_attention_payload_and_image_look_like_a_regular_item(client):
    study, _ = _study(attention_rate=0.5, quota_per_annotator=4)
    quality.attention_items_add(study=study, count=2)
    user = annotator()
    services.study_annotators_set(study=study, users=[user])
    client.force_login(user)
    payloads, images = {}, {}
    for _ in range(2):
        item = client.post("/api/annotate/next/").json()["item"]
        lease = Lease.objects.get(token=item["token"])
        payloads[lease.purpose] = item
        images[lease.purpose] = {side: client.get(url) for side, url in item["images"].items()}
        response = client.post(
            "/api/annotate/submit/",
            {"token": item["token"], "outcome": "b", "reason": "", "dwell_ms": 5000},
            content_type="application/json",
        )
        assert set(response.json()) == {"stored", "counted", "outcome"}
        assert response.json()["counted"] is True  # dwell only: never reveals that attention votes do not count
    regular, attention = payloads[Purpose.REGULAR], payloads[Purpose.ATTENTION]

    def shape(value):
        if isinstance(value, dict):
            return {k: shape(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shape(v) for v in value]
        return type(value).__name__

    assert shape(regular) == shape(attention)
    assert len(regular["token"]) == len(attention["token"])
    for side in ("source", "a", "b"):
        r, a = images[Purpose.REGULAR][side], images[Purpose.ATTENTION][side]
        assert r["Content-Type"] == a["Content-Type"] == "image/png"
        assert set(r.headers) == set(a.headers)
        for body in (r.content, a.content):
            with Image.open(io.BytesIO(body)) as png:
                assert png.format == "PNG" and not {k for k in png.info if k not in ("dpi",)}


def test_swapped_repeats_measure_self_consistency_and_position_bias():
    study, _ = _study(repeat_rate=0.25, quota_per_annotator=16)
    user = annotator()
    leases = _vote_all(study, user, 16, outcome="a")  # always the left side
    repeats = [lease for lease in leases if lease.purpose == Purpose.REPEAT]
    assert len(repeats) >= 2
    firsts = {lease.item_id: lease for lease in leases if lease.purpose == Purpose.REGULAR}
    for repeat in repeats:
        first = firsts[repeat.item_id]
        assert repeat.left_is_x != first.left_is_x
        assert leases.index(repeat) - leases.index(first) >= 4
    row = selectors.annotator_quality_frame(study="qc").iloc[0]
    # Always "left": every repeat, shown swapped, contradicts the first vote; position bias is total.
    assert row["swapped_repeats"] == len(repeats) and row["self_consistent"] == 0.0
    assert row["position_left_share"] == 1.0 and row["votes"] == 16 - len(repeats)


def test_exclusion_flags_votes_and_every_table_says_so(client, tmp_path):
    study, _ = _study()
    careless, careful = annotator("ann-careless"), annotator("ann-careful")
    _vote_all(study, careless, 4)
    _vote_all(study, careful, 3)
    with pytest.raises(AppError, match="say why"):
        quality.annotator_exclude(study=study, annotator="ann-careless", reason=" ")
    assert quality.annotator_exclude(study=study, annotator="ann-careless", reason="failed 3 of 4 attention items") == 4
    assert Comparison.objects.filter(annotator_name="ann-careless", excluded=True).count() == 4  # kept, flagged
    frame = selectors.comparisons_frame(study="qc")
    assert set(frame["annotator"]) == {"ann-careful"}
    assert "excluded 4 votes of annotator ann-careless: failed 3 of 4 attention items" in frame.attrs["notes"]
    assert selectors.coverage_frame(study="qc")["n"].sum() == 3
    table = selectors.annotator_quality_frame(study="qc").set_index("annotator")
    assert table.loc["ann-careless", "excluded"] and not table.loc["ann-careful", "excluded"]
    assert table.loc["ann-careless", "exclusion_reason"] == "failed 3 of 4 attention items"
    client.force_login(coordinator())
    body = client.get("/api/tables/comparisons/?format=json&study=qc").json()
    assert "excluded 4 votes of annotator ann-careless: failed 3 of 4 attention items" in body["notes"]
    page = client.get("/results/agreement?study=qc").content.decode()
    assert "excluded 4 votes of annotator ann-careless" in page and "Annotator quality" in page
    err = io.StringIO()
    call_command("export", "coverage", "--study", "qc", "--out", str(tmp_path / "c.csv"), stderr=err)
    assert "coverage: excluded 4 votes of annotator ann-careless: failed 3 of 4 attention items" in err.getvalue()
    quality.annotator_include(study=study, annotator="ann-careless")
    assert len(selectors.comparisons_frame(study="qc")) == 7


def test_excluding_or_including_an_annotator_changes_every_cached_analysis_of_the_votes():
    from bt_elo import selectors as elo_selectors

    study, _ = _study()
    _vote_all(study, annotator("ann-careless"), 4)
    _vote_all(study, annotator("ann-careful"), 3, outcome="b")

    def elo_votes() -> tuple[int, int]:
        """Votes behind the live leaderboard's Elo and behind the Elo table (two caches, two keys)."""
        return len(elo_selectors.study_elo(study="qc").comparisons), int(elo_selectors.elo_table(study="qc")["n"].sum())

    assert elo_votes() == (7, 14)  # each vote counts once per configuration in the table's record
    quality.annotator_exclude(study=study, annotator="ann-careless", reason="failed 3 of 4 attention items")
    assert elo_votes() == (3, 6)
    quality.annotator_include(study=study, annotator="ann-careless")
    assert elo_votes() == (7, 14)
    quality.annotator_exclude(study=study, annotator="ann-careful", reason="answered in under a second")
    assert elo_votes() == (4, 8)


def test_disagreements_and_adjudication():
    study, _ = _study(overlap_rate=1.0)
    first, second = annotator("ann-first"), annotator("ann-second")
    lease = next_lease(study=study, annotator=first)
    submit_vote(token=lease.token, annotator=first, outcome="a", reason="r", dwell_ms=5000)
    other = next_lease(study=study, annotator=second)
    assert other.item_id == lease.item_id  # overlap
    same_side = other.left_is_x == lease.left_is_x
    submit_vote(token=other.token, annotator=second, outcome="b" if same_side else "a", reason="r", dwell_ms=5000)
    rows = selectors.disagreements(study=study)
    assert [r["item_id"] for r in rows] == [lease.item_id]
    assert {v["label"] for v in rows[0]["votes"]} == {"x", "y"}
    quality.adjudication_save(study=study, item_id=lease.item_id, label="x", note="x keeps arrows", decided_by="c")
    assert selectors.disagreements(study=study)[0]["adjudication"].label == "x"
    assert Comparison.objects.filter(item_id=lease.item_id, superseded=False).count() == 2  # votes untouched
    with pytest.raises(AppError):
        quality.adjudication_save(study=study, item_id=lease.item_id, label="left", note="", decided_by="c")


# --- gate review ----------------------------------------------------------------------------------
def _csv(tmp_path, name, header, rows):
    path = tmp_path / name
    path.write_text("\n".join([",".join(header)] + [",".join(map(str, r)) for r in rows]) + "\n")
    return path


def test_import_gate_reviews_errors_idempotence_and_tables(tmp_path):
    figs, configs, _ = build_corpus(figures=4, failed=(("cfg-bravo-direct", 0), ("cfg-bravo-direct", 1)))
    ann = {
        ("cfg-alpha-direct", 0): 0,
        ("cfg-alpha-direct", 1): 1,
        ("cfg-bravo-direct", 0): 1,
        ("cfg-bravo-direct", 1): 1,
    }
    ann.update({("cfg-alpha-direct", 2): 0, ("cfg-bravo-direct", 2): 0})
    bob = dict(ann) | {("cfg-alpha-direct", 1): 0, ("cfg-bravo-direct", 2): 1}
    rows = [
        (f"task-fig-{i:04d}", c, who, "true" if v else "false", "labels overlap" if v else "")
        for who, marks in (("ann", ann), ("bob", bob))
        for (c, i), v in marks.items()
    ]
    rows.append(("task-fig-0099", "cfg-alpha-direct", "ann", "true", ""))
    rows.append(("task-fig-0003", "cfg-alpha-direct", "ann", "maybe", ""))
    path = _csv(tmp_path, "reviews.csv", gate_reviews.GATE_REVIEW_COLUMNS, rows)
    out, err = io.StringIO(), io.StringIO()
    call_command("import_gate_reviews", str(path), "--no-progress", stdout=out, stderr=err)  # exit 0: good rows kept
    assert "2 rejected" in out.getvalue()
    assert f"{path}:14 task_id: unknown figure 'task-fig-0099'" in err.getvalue()
    assert f"{path}:15 gate_fail: gate_fail must be true or false, not 'maybe'" in err.getvalue()
    assert GateReview.objects.count() == 12
    call_command("import_gate_reviews", str(path), "--no-progress", stdout=out, stderr=io.StringIO())
    assert "0 imported, 12 already stored, 2 rejected" in out.getvalue()
    assert GateReview.objects.count() == 12

    table = selectors.gate_review_agreement_frame().set_index("reviewer_a")
    a = [ann[k] for k in sorted(ann)]
    b = [bob[k] for k in sorted(ann)]
    assert table.loc["ann", "n"] == 6 and table.loc["ann", "agreement"] == pytest.approx(4 / 6)
    assert table.loc["ann", "kappa"] == pytest.approx(cohen_kappa_score(a, b))
    assert table.loc["all", "n"] == 6  # two reviewers: Fleiss' κ over the same artifacts
    automated = selectors.gate_review_vs_automated_frame().set_index("reviewer")
    auto = [1 if (c == "cfg-bravo-direct" and i in (0, 1)) else 0 for c, i in sorted(ann)]
    assert automated.loc["ann", "agreement"] == pytest.approx(np.mean(np.array(a) == np.array(auto)))
    assert automated.loc["bob", "kappa"] == pytest.approx(cohen_kappa_score(b, auto))


def test_gate_review_in_the_service_and_the_export(tmp_path, client):
    build_corpus(figures=2)
    user = annotator("rev-one")
    study = artifact_studies.artifact_study_create(
        name="gates", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2], annotators=[user]
    )
    seen = []
    while (lease := artifact_studies.artifact_next(study=study, annotator=user)) is not None:
        seen.append(lease.artifact_id)
        with pytest.raises(AppError, match="which gate"):
            gate_reviews.gate_review_submit(token=lease.token, annotator=user, gate_fail=True, reason="blank")
        gate_reviews.gate_review_submit(
            token=lease.token, annotator=user, gate_fail=len(seen) == 1, gate="semantic", reason="labels lost"
        )
    assert len(seen) == len(set(seen)) == 4
    out = tmp_path / "table.csv"
    call_command("export", "gate-review-vs-automated", "--format", "csv", "--out", str(out), stderr=io.StringIO())
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["reviewer", "n", "agreement", "kappa"]
    reviewer = pseudonym("rev-one", key=pseudonym_key())  # exports name people by pseudonym only
    assert (frame.loc[0, "reviewer"], frame.loc[0, "n"], frame.loc[0, "agreement"]) == (reviewer, 4, 0.75)


# --- ratings --------------------------------------------------------------------------------------
def test_import_ratings_and_tables(tmp_path):
    build_corpus(figures=4)
    human = [4, 2, 0, 3, 5, 1]
    judge_runs = [(5, 5, 4), (3, 2, 2), (1, 1, 1), (2, 3, 2), (4, 4, 5), (1, 2, 1)]
    keys = [(f"task-fig-{i:04d}", c) for i in range(3) for c in SLUGS[:2]]
    rows = [(t, c, "ann", "human", 1, "visual_quality", h) for (t, c), h in zip(keys, human)]
    rows += [
        (t, c, "judge-x", "judge", r + 1, "visual_quality", v)
        for (t, c), runs in zip(keys, judge_runs)
        for r, v in enumerate(runs)
    ]
    rows.append(("task-fig-0000", "cfg-alpha-direct", "ann", "robot", 1, "visual_quality", 3))
    rows.append(("task-fig-0000", "cfg-alpha-direct", "ann", "human", 1, "visual_quality", 6))
    path = _csv(tmp_path, "ratings.csv", ratings.RATING_COLUMNS, rows)
    err = io.StringIO()
    call_command("import_ratings", str(path), "--no-progress", stdout=io.StringIO(), stderr=err)
    assert f"{path}:26 rater_kind: must be human or judge, got 'robot'" in err.getvalue()
    assert f"{path}:27 rating: must be a whole number from 0 to 5, got '6'" in err.getvalue()
    assert Rating.objects.count() == 24
    agreement = selectors.rating_agreement_frame().iloc[0]
    judge_means = np.array([np.mean(r) for r in judge_runs])
    assert agreement["n"] == 6
    assert agreement["spearman"] == pytest.approx(stats.spearmanr(human, judge_means).statistic)
    assert agreement["pearson"] == pytest.approx(stats.pearsonr(human, judge_means).statistic)
    consistency = selectors.rating_consistency_frame().iloc[0]
    assert consistency["sd_pct"] == pytest.approx(np.mean([np.std(r) for r in judge_runs]) / 5 * 100)
    # every example has a rating given by more than half (2 or 3 of 3) of its runs
    assert consistency["majority_agreement"] == pytest.approx(1.0)
    # runs agreeing with the mode: 2/3, 2/3, 1, 2/3, 2/3, 2/3 (the older statistic, under its own name)
    assert consistency["modal_share_mean"] == pytest.approx((5 * 2 / 3 + 1) / 6)


def test_rating_submit_in_the_service():
    build_corpus(figures=1)
    user = annotator("rater-one")
    study = artifact_studies.artifact_study_create(
        name="rate",
        kind=StudyKind.RATING,
        configurations=SLUGS[:2],
        annotators=[user],
        rating_axes=["instruction_following", "visual_quality", "editability"],
    )
    lease = artifact_studies.artifact_next(study=study, annotator=user)
    with pytest.raises(AppError, match="rate exactly the axes"):
        ratings.rating_submit(token=lease.token, annotator=user, ratings={"visual_quality": 3})
    with pytest.raises(AppError, match="whole number"):
        ratings.rating_submit(
            token=lease.token,
            annotator=user,
            ratings={"instruction_following": 3, "visual_quality": 2.5, "editability": 1},
        )
    stored = ratings.rating_submit(
        token=lease.token, annotator=user, ratings={"instruction_following": 3, "visual_quality": 5, "editability": 0}
    )
    assert sorted((r.axis, r.rating) for r in stored) == [
        ("editability", 0),
        ("instruction_following", 3),
        ("visual_quality", 5),
    ]
    assert artifact_studies.artifact_next(study=study, annotator=user).artifact_id != lease.artifact_id


def test_tables_served_by_the_api(client):
    build_corpus(figures=1)
    artifact_studies.artifact_study_create(name="gates", kind=StudyKind.GATE_REVIEW, configurations=SLUGS[:2])
    client.force_login(coordinator())
    body = client.get("/api/tables/gate-review-agreement/?format=json").json()
    assert body["columns"] == ["reviewer_a", "reviewer_b", "n", "agreement", "kappa"]
    assert client.get("/api/tables/annotator-quality/?format=json").status_code == 404  # no pairwise study


def test_coordinator_creates_gate_review_and_rating_studies_in_the_page(client):
    build_corpus(figures=3)
    client.force_login(coordinator())
    response = client.post(
        "/coordinate/",
        {
            "action": "artifact-study",
            "name": "rate-pilot",
            "kind": "rating",
            "configurations": list(SLUGS[:2]),
            "figure_sample": 2,
            "rating_axes": "instruction_following, visual_quality, editability",
            "seed": 5,
        },
    )
    assert response.status_code == 302
    study = selectors.study_resolve(study="rate-pilot")
    assert study.kind == StudyKind.RATING and study.figures.count() == 2
    assert study.rating_axes == ["instruction_following", "visual_quality", "editability"]
    assert artifact_studies.study_artifacts(study).count() == 4
    bad = client.post(
        "/coordinate/",
        {
            "action": "artifact-study",
            "name": "x",
            "kind": "rating",
            "configurations": [SLUGS[0]],
            "rating_axes": "a-b",
            "seed": 0,
        },
    )
    assert bad.status_code == 200 and b"letters, digits and _ only" in bad.content
