"""Studies, the assignment engine, votes, undo, tables, export and import."""

import io
import json
from datetime import timedelta

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from annotation import selectors, services
from annotation.models import Comparison, Lease, Study
from core.errors import AppError
from tests.annotation.data import SLUGS, annotator, build_corpus, next_lease, submit_vote

pytestmark = pytest.mark.django_db


def make_study(**settings):
    figs, configs, artifacts = build_corpus(figures=settings.pop("figures", 6), failed=settings.pop("failed", ()))
    settings.setdefault("min_dwell_ms", 0)
    study = services.study_create(name=settings.pop("name", "pilot"), configurations=SLUGS, **settings)
    return study, figs, configs


def vote(study, user, outcome="a", reason="clearer arrows", dwell_ms=5000):
    lease = next_lease(study=study, annotator=user)
    return lease, submit_vote(token=lease.token, annotator=user, outcome=outcome, reason=reason, dwell_ms=dwell_ms)


def test_study_create_validates_configurations():
    build_corpus(figures=1)
    with pytest.raises(AppError, match="unknown configurations: nope"):
        services.study_create(name="s", configurations=["cfg-alpha-direct", "nope"])
    with pytest.raises(AppError, match="at least two"):
        services.study_create(name="s", configurations=["cfg-alpha-direct"])
    study = services.study_create(name="s", configurations=SLUGS, target_per_pair=7)
    assert [c.slug for c in selectors.study_configurations(study)] == list(SLUGS)
    with pytest.raises(AppError, match="exists already"):
        services.study_create(name="s", configurations=SLUGS)


def test_study_resolve():
    with pytest.raises(AppError, match="no study yet"):
        selectors.study_resolve(study=None)
    study, *_ = make_study()
    assert selectors.study_resolve(study=None) == study
    with pytest.raises(AppError, match="no study named 'x'"):
        selectors.study_resolve(study="x")
    Study.objects.create(name="second")
    with pytest.raises(AppError, match="several studies"):
        selectors.study_resolve(study=None)


def test_open_lease_is_returned_again_on_reload():
    study, *_ = make_study()
    user = annotator()
    first = next_lease(study=study, annotator=user)
    again = next_lease(study=study, annotator=user)
    assert first.pk == again.pk and len(first.token) >= 30
    assert Lease.objects.filter(annotator=user, state="open").count() == 1


def test_pairs_are_covered_evenly_and_sides_counterbalanced():
    study, *_ = make_study(target_per_pair=2, overlap_rate=0)
    user = annotator()
    pairs, sides = [], {}
    for _ in range(12):
        lease, _ = vote(study, user)
        key = (lease.item.config_x_id, lease.item.config_y_id)
        pairs.append(key)
        sides.setdefault(key, []).append(lease.left_is_x)
    # 6 pairs: the first six items cover each pair once, the next six once more
    assert len(set(pairs[:6])) == 6 and len(set(pairs[6:])) == 6
    # per pair and annotator: x was on the left once and on the right once
    assert all(sorted(s) == [False, True] for s in sides.values())
    # never the same figure twice for the same pair and annotator
    seen = [(l.item.figure_id, l.item.config_x_id, l.item.config_y_id) for l in Lease.objects.filter(annotator=user)]
    assert len(seen) == len(set(seen))


def test_figures_are_spread_evenly():
    study, figs, _ = make_study(figures=6, overlap_rate=0)
    user = annotator()
    for _ in range(6):
        vote(study, user)
    used = [l.item.figure_id for l in Lease.objects.filter(annotator=user)]
    assert sorted(used) == sorted(f.pk for f in figs)


def test_gate_failed_artifacts_are_a_study_setting():
    figs, configs, _ = build_corpus(figures=2, configurations=SLUGS[:2], failed=(("cfg-alpha-direct", 0),))
    excluded = services.study_create(name="strict", configurations=SLUGS[:2], include_gate_failed=False, min_dwell_ms=0)
    user = annotator()
    lease, _ = vote(excluded, user)
    assert lease.item.figure == figs[1]
    assert next_lease(study=excluded, annotator=user) is None  # nothing else eligible
    included = services.study_create(name="all", configurations=SLUGS[:2], min_dwell_ms=0)
    served = {vote(included, user)[0].item.figure_id for _ in range(2)}
    assert served == {figs[0].pk, figs[1].pk}


def test_two_annotators_get_different_items_and_overlap_is_drawn_on_purpose():
    study, *_ = make_study(overlap_rate=0.5)
    one, two = annotator("ann-one"), annotator("ann-two")
    lease_one = next_lease(study=study, annotator=one)
    lease_two = next_lease(study=study, annotator=two)
    assert lease_one.item_id != lease_two.item_id
    submit_vote(token=lease_one.token, annotator=one, outcome="a", dwell_ms=5000)
    submit_vote(token=lease_two.token, annotator=two, outcome="b", dwell_ms=5000)
    # second item of each annotator is an overlap item (rate 0.5): the other's item
    overlap_one = next_lease(study=study, annotator=one)
    assert overlap_one.is_overlap and overlap_one.item_id == lease_two.item_id
    # the same configuration preferred: "b" again when shown on the same sides, "a" when swapped
    same_sides = overlap_one.left_is_x == lease_two.left_is_x
    submit_vote(token=overlap_one.token, annotator=one, outcome="b" if same_sides else "a", dwell_ms=5000)
    labels = selectors.overlap_labels_frame(study="pilot")
    assert set(labels["item_id"]) == {lease_two.item_id} and len(labels) == 2
    # labels align to the item's configurations x / y, not to display sides, so they agree
    expected = "right" if lease_two.left_is_x else "left"
    assert list(labels["label"]) == [expected, expected]


def test_submit_is_idempotent_and_refuses_foreign_and_expired_leases():
    study, *_ = make_study(min_dwell_ms=3000)
    one, two = annotator("ann-one"), annotator("ann-two")
    lease = next_lease(study=study, annotator=one)
    with pytest.raises(services.LeaseForeign, match="another annotator"):
        submit_vote(token=lease.token, annotator=two, outcome="a")
    with pytest.raises(services.VoteInvalid, match="reason is required"):
        submit_vote(token=lease.token, annotator=one, outcome="tie_success")
    with pytest.raises(services.VoteInvalid, match="outcome must be"):
        submit_vote(token=lease.token, annotator=one, outcome="x")
    first = submit_vote(token=lease.token, annotator=one, outcome="a", dwell_ms=1000)
    second = submit_vote(token=lease.token, annotator=one, outcome="b", dwell_ms=9000)
    assert first.pk == second.pk and Comparison.objects.count() == 1
    assert first.counted is False  # below the minimum dwell: stored, not counted
    expiring = next_lease(study=study, annotator=one)
    Lease.objects.filter(pk=expiring.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(services.LeaseClosed, match="time ran out"):
        submit_vote(token=expiring.token, annotator=one, outcome="a", dwell_ms=5000)
    with pytest.raises(services.LeaseNotFound):
        submit_vote(token="nope", annotator=one, outcome="a")
    # the expired lease returns to the pool: the next call expires it and hands out a fresh lease
    fresh = next_lease(study=study, annotator=one)
    assert fresh.pk != expiring.pk and Lease.objects.get(pk=expiring.pk).state == "expired"


def test_undo_supersedes_and_keeps_both_records():
    study, *_ = make_study()
    user = annotator()
    lease, original = vote(study, user, outcome="a")
    pending = next_lease(study=study, annotator=user)
    reopened = services.comparison_undo(study=study, annotator=user)
    assert reopened.pk == lease.pk and reopened.state == "open"
    assert Lease.objects.get(pk=pending.pk).state == "released"
    assert next_lease(study=study, annotator=user).pk == lease.pk
    withdrawal = Comparison.objects.get(supersedes=original)
    assert withdrawal.withdrawn and Comparison.objects.get(pk=original.pk).superseded
    assert selectors.comparisons_frame(study="pilot").empty
    revised = submit_vote(
        token=lease.token, annotator=user, outcome="tie_failure", reason="both miss arrows", dwell_ms=4000
    )
    assert revised.supersedes_id == withdrawal.pk and Comparison.objects.count() == 3
    frame = selectors.comparisons_frame(study="pilot")
    assert list(frame["outcome"]) == ["tie_failure"]
    with pytest.raises(services.LeaseClosed, match="no vote to undo"):
        services.comparison_undo(study=study, annotator=annotator("ann-two"))


def test_skip_releases_the_item_and_paused_studies_hand_out_nothing():
    study, *_ = make_study()
    user = annotator()
    lease = next_lease(study=study, annotator=user)
    with pytest.raises(services.VoteInvalid):
        services.lease_skip(token=lease.token, annotator=user, reason=" ")
    services.lease_skip(token=lease.token, annotator=user, reason="image unreadable")
    assert Lease.objects.get(pk=lease.pk).state == "skipped"
    assert next_lease(study=study, annotator=user).item_id != lease.item_id
    services.study_status_set(study=study, status="paused")
    with pytest.raises(services.StudyUnavailable, match="paused"):
        next_lease(study=study, annotator=annotator("ann-two"))


def test_quota_ends_the_session():
    study, *_ = make_study(quota_per_annotator=2)
    user = annotator()
    vote(study, user)
    vote(study, user, outcome="tie_success", reason="both fine")
    assert next_lease(study=study, annotator=user) is None
    summary = selectors.annotator_summary(study=study, user=user)
    assert summary["votes"] == 2 and summary["outcomes"]["tie_success"] == 1


def test_comparisons_and_coverage_tables():
    study, figs, configs = make_study(target_per_pair=3, overlap_rate=0)
    user = annotator()
    lease, cmp_ = vote(study, user, outcome="b")
    frame = selectors.comparisons_frame(study="pilot")
    assert list(frame.columns[:15]) == [
        "comparison_id",
        "study",
        "task_id",
        "annotator",
        "config_a",
        "config_b",
        "left_config",
        "outcome",
        "reason",
        "created_at",
        "dwell_ms",
        "render_sha256_a",
        "render_sha256_b",
        "audit_sha256_a",
        "audit_sha256_b",
    ]
    row = frame.iloc[0]
    assert row["left_config"] == row["config_a"] and row["annotator"] == "ann-one" and row["outcome"] == "b"
    assert row["render_sha256_a"] == cmp_.artifact_a.render_sha256 and len(row["audit_sha256_a"]) == 64
    assert row["artifact_a_id"] == cmp_.artifact_a_id
    pair = {row["config_a"], row["config_b"]}
    assert row["matchup"] == ("within" if pair == {"cfg-alpha-direct", "cfg-alpha-specialized"} else "across")
    coverage = selectors.coverage_frame(study="pilot")
    assert len(coverage) == 6 and list(coverage.columns[:4]) == ["config_x", "config_y", "n", "target"]
    assert coverage["n"].sum() == 1 and set(coverage["target"]) == {3}
    assert coverage.iloc[0][["config_x", "config_y"]].tolist() == ["cfg-alpha-direct", "cfg-alpha-specialized"]


def test_export_then_import_round_trip_and_errors(tmp_path):
    study, *_ = make_study(overlap_rate=0)
    user = annotator()
    for outcome in ("a", "b", "tie_success"):
        vote(study, user, outcome=outcome)
    out = tmp_path / "cmp.csv"
    call_command("export", "comparisons", study="pilot", format="csv", out=out, stderr=io.StringIO())
    text = out.read_text()
    assert text.splitlines()[0].startswith(
        "comparison_id,study,task_id,annotator,config_a,config_b,left_config,outcome"
    )
    renamed = tmp_path / "other.csv"
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    frame["study"], frame["comparison_id"] = "elsewhere", "copy-" + frame["comparison_id"]
    frame.to_csv(renamed, index=False)
    stdout = io.StringIO()
    call_command("import_comparisons", renamed, no_progress=True, stdout=stdout, stderr=io.StringIO())
    assert "created study elsewhere" in stdout.getvalue()
    # comparison ids are kept: importing a second time (or the original file) changes nothing
    call_command("import_comparisons", out, no_progress=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert Comparison.objects.count() == 6
    copied = selectors.comparisons_frame(study="elsewhere")
    original = selectors.comparisons_frame(study="pilot")
    columns = [
        "task_id",
        "annotator",
        "config_a",
        "config_b",
        "left_config",
        "outcome",
        "reason",
        "created_at",
        "dwell_ms",
        "render_sha256_a",
        "audit_sha256_b",
    ]
    assert copied[columns].equals(original[columns])
    json_out = tmp_path / "cmp.json"
    call_command("export", "comparisons", study="pilot", format="json", out=json_out, stderr=io.StringIO())
    assert len(json.loads(json_out.read_text())["rows"]) == 3

    good = {
        "comparison_id": "ext-1",
        "study": "ext",
        "task_id": "task-fig-0001",
        "annotator": "someone",
        "config_a": "cfg-bravo-direct",
        "config_b": "cfg-alpha-direct",
        "left_config": "cfg-bravo-direct",
        "outcome": "a",
        "reason": "",
        "created_at": "2025-01-02T03:04:05Z",
        "dwell_ms": 4200,
    }
    rows = [
        good,
        {**good, "comparison_id": "ext-2", "task_id": "task-nope"},
        {**good, "comparison_id": "ext-3", "config_b": "cfg-zulu"},
        {**good, "comparison_id": "ext-4", "outcome": "maybe"},
        {**good, "comparison_id": "ext-5", "outcome": "b"},
    ]
    jsonl = tmp_path / "ext.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    errors = import_rejecting(jsonl, rejected=4)
    assert f"{jsonl}:2 task_id: unknown figure 'task-nope'" in errors
    assert f"{jsonl}:3 config_b: unknown configuration 'cfg-zulu'" in errors
    assert f"{jsonl}:4 outcome:" in errors and f"{jsonl}:6 $: malformed JSON" in errors
    frame = selectors.comparisons_frame(study="ext")
    assert sorted(frame["comparison_id"]) == ["ext-1", "ext-5"]
    assert frame.iloc[0]["created_at"].startswith("2025-01-02T03:04:05")
    ext = Study.objects.get(name="ext")
    assert set(ext.configurations.values_list("slug", flat=True)) == {"cfg-alpha-direct", "cfg-bravo-direct"}
    coverage = selectors.coverage_frame(study="ext")
    assert coverage.loc[0, "n"] == 2


def import_rejecting(path, *, rejected: int) -> str:
    """Run import_comparisons on a file with bad rows; its error output."""
    stderr = io.StringIO()
    with pytest.raises(CommandError, match=f"{rejected} rows rejected"):
        call_command("import_comparisons", path, no_progress=True, stdout=io.StringIO(), stderr=stderr)
    return stderr.getvalue()


def _counters(study):
    from annotation.models import Item, StudyFigure, StudyPair

    return (
        sorted(
            Item.objects.filter(study=study).values_list(
                "pk", "open_count", "submitted_count", "votes", "in_pool", "is_overlap"
            )
        ),
        sorted(
            StudyPair.objects.filter(study=study).values_list(
                "config_x_id", "config_y_id", "votes", "open_fresh", "x_left", "y_left"
            )
        ),
        sorted(StudyFigure.objects.filter(study=study).values_list("figure_id", "uses")),
    )


def test_pool_counters_kept_in_step_equal_a_rebuild():
    """Every lease and vote transition keeps the pool counters exactly where a full rebuild from the rows puts them."""
    from annotation.models import Item

    study, *_ = make_study(figures=4, overlap_rate=0.5, min_dwell_ms=3000)
    assert Item.objects.filter(study=study, in_pool=True).count() == 6 * 4  # every (pair, figure), materialised once
    one, two, three = annotator("ann-one"), annotator("ann-two"), annotator("ann-three")
    vote(study, one)
    vote(study, two, dwell_ms=100)  # stored, not counted
    vote(study, one)  # an overlap item (rate 0.5)
    skipped = next_lease(study=study, annotator=three)
    services.lease_skip(token=skipped.token, annotator=three, reason="unreadable")
    services.comparison_undo(study=study, annotator=one)  # withdraws a vote, reopens its lease
    submit_vote(token=next_lease(study=study, annotator=one).token, annotator=one, outcome="b", dwell_ms=5000)
    expiring = next_lease(study=study, annotator=two)
    Lease.objects.filter(pk=expiring.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    next_lease(study=study, annotator=three)  # expires two's lease on the way
    assert Lease.objects.get(pk=expiring.pk).state == "expired"
    next_lease(study=study, annotator=two)
    kept = _counters(study)
    services.study_pool_sync(study=study, force=True)
    assert _counters(study) == kept
    services.study_status_set(study=study, status="closed")  # releases the open leases
    kept = _counters(study)
    services.study_pool_sync(study=study, force=True)
    assert _counters(study) == kept


def test_pool_follows_artifacts_added_after_the_study():
    from tests.factories import artifact_create, figure_create

    study, figs, configs = make_study(figures=1, overlap_rate=0)
    user = annotator()
    served = {vote(study, user)[0].item.figure_id for _ in range(6)}  # six pairs of the one figure
    assert served == {figs[0].pk} and next_lease(study=study, annotator=user) is None
    late = figure_create("task-fig-late", index=9)
    for c in configs:
        artifact_create(c, late)
    assert next_lease(study=study, annotator=user).item.figure_id == late.pk


def test_study_figures_by_task_ids_field_and_seeded_sample():
    from annotation.models import Study as StudyModel
    from tests.factories import figure_create

    build_corpus(figures=6)  # cs.CV figures task-fig-0000 .. 0005
    nlp = [figure_create(f"task-nlp-{i}", field="cs.CL", index=10 + i) for i in range(3)]
    assert services.study_figures_choose() is None  # nothing narrows: the study follows the corpus
    assert services.study_figures_choose(fields=["cs.CL"]) == sorted(f.task_id for f in nlp)
    assert services.study_figures_choose(task_ids=["task-fig-0001", "task-nlp-0"], fields=["cs.CL"]) == ["task-nlp-0"]
    with pytest.raises(AppError, match="unknown figures: task-nope"):
        services.study_figures_choose(task_ids=["task-fig-0001", "task-nope"])
    with pytest.raises(AppError, match=r"no figures in field\(s\): cs.RO"):
        services.study_figures_choose(fields=["cs.RO"])
    with pytest.raises(AppError, match="no figure matches"):
        services.study_figures_choose(task_ids=["task-fig-0001"], fields=["cs.CL"])

    pilot = services.study_create(
        name="pilot-cv", configurations=SLUGS, figure_fields=["cs.CV"], figure_sample=3, seed=5
    )
    chosen = set(pilot.figures.values_list("task_id", flat=True))
    assert len(chosen) == 3 and all(t.startswith("task-fig-") for t in chosen)
    # the pool holds exactly those figures: 6 pairs x 3 figures
    assert set(pilot.items.filter(in_pool=True).values_list("figure__task_id", flat=True)) == chosen
    assert pilot.items.filter(in_pool=True).count() == 6 * 3
    again = services.study_create(
        name="pilot-cv-again", configurations=SLUGS, figure_fields=["cs.CV"], figure_sample=3, seed=5
    )
    assert set(again.figures.values_list("task_id", flat=True)) == chosen
    whole = services.study_create(name="whole", configurations=SLUGS)
    assert (
        not whole.figures.exists() and whole.items.filter(in_pool=True).count() == 6 * 6
    )  # the NLP figures have no artifacts
    with pytest.raises(AppError, match="unknown figures"):
        services.study_create(name="bad", configurations=SLUGS, figures=["task-nope"])
    assert not StudyModel.objects.filter(name="bad").exists()


def test_invited_annotator_chooses_a_password_through_a_one_time_link():
    from django.test import Client

    from tests.annotation.data import coordinator

    study, *_ = make_study()
    coord = Client()
    coord.force_login(coordinator())
    response = coord.post(
        f"/coordinate/{study.name}/",
        {"action": "invite", "username": "new-annotator", "email": "n@example.org"},
        follow=True,
    )
    message = next(str(m) for m in response.context["messages"])
    assert "one-time link" in message
    link = message.split("password: ", 1)[1]
    assert link.startswith("http://testserver/accounts/set-password/")
    from django.contrib.auth import get_user_model

    invited = get_user_model().objects.get(username="new-annotator")
    assert not invited.has_usable_password() and study.annotators.filter(pk=invited.pk).exists()
    assert invited.groups.filter(name="annotator").exists()

    guest = Client()
    form_page = guest.get(link, follow=True)  # Django moves the token into the session and redirects
    assert (
        form_page.status_code == 200
        and b"Choose a password" in form_page.content
        and b"new-annotator" in form_page.content
    )
    done = guest.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "a-long-pass-phrase-7", "new_password2": "a-long-pass-phrase-7"},
    )
    assert done.status_code == 302 and done["Location"] == "/accounts/set-password/done/"
    assert Client().login(username="new-annotator", password="a-long-pass-phrase-7")
    # the link is spent
    assert b"not valid any more" in Client().get(link, follow=True).content
    # an account that has a password is only assigned, no link
    existing = annotator("ann-existing")
    response = coord.post(
        f"/coordinate/{study.name}/", {"action": "invite", "username": existing.username}, follow=True
    )
    assert "already has an account" in next(str(m) for m in response.context["messages"])
    assert study.annotators.filter(pk=existing.pk).exists()
    bad = coord.post(f"/coordinate/{study.name}/", {"action": "invite", "username": "no spaces allowed!"}, follow=True)
    assert "Invite: username" in next(str(m) for m in bad.context["messages"])


def test_beat_expires_abandoned_leases_back_to_the_pool():
    from django.conf import settings

    from annotation.models import Item
    from annotation.tasks import leases_expire_task
    from config.celery_app import app

    schedule = settings.CELERY_BEAT_SCHEDULE["annotation-leases-expire"]
    app.loader.import_default_modules()
    assert schedule["task"] in app.tasks and schedule["schedule"] <= 300
    study, *_ = make_study()
    user = annotator()
    lease = next_lease(study=study, annotator=user)
    assert Item.objects.get(pk=lease.item_id).open_count == 1
    assert leases_expire_task.delay().get() == 0  # nothing due yet
    Lease.objects.filter(pk=lease.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert leases_expire_task.delay().get() == 1
    lease.refresh_from_db()
    assert lease.state == "expired" and Item.objects.get(pk=lease.item_id).open_count == 0
    with pytest.raises(services.LeaseClosed):
        submit_vote(token=lease.token, annotator=user, outcome="a", dwell_ms=5000)


def test_import_json_document_bom_and_bad_values_are_rejected_row_by_row(tmp_path):
    study, *_ = make_study(overlap_rate=0)
    user = annotator()
    for outcome in ("a", "b"):
        vote(study, user, outcome=outcome)
    # the JSON document `export --format json` writes imports back (under another study name)
    json_out = tmp_path / "cmp.json"
    call_command("export", "comparisons", study="pilot", format="json", out=json_out, stderr=io.StringIO())
    document = json.loads(json_out.read_text())
    for row in document["rows"]:
        row["study"], row["comparison_id"] = "from-json", "json-" + row["comparison_id"]
    json_out.write_text(json.dumps(document, indent=1))
    stdout = io.StringIO()
    call_command("import_comparisons", json_out, no_progress=True, stdout=stdout, stderr=io.StringIO())
    assert "2 imported" in stdout.getvalue() and len(selectors.comparisons_frame(study="from-json")) == 2

    good = {
        "comparison_id": "x-1",
        "study": "bad-values",
        "task_id": "task-fig-0001",
        "annotator": "someone",
        "config_a": "cfg-bravo-direct",
        "config_b": "cfg-alpha-direct",
        "left_config": "cfg-bravo-direct",
        "outcome": "a",
        "reason": "",
        "created_at": "",
        "dwell_ms": "",
    }
    rows = [
        good,
        {**good, "comparison_id": "x-2", "dwell_ms": "-5"},
        {**good, "comparison_id": "x-3", "created_at": "2024-13-45T00:00:00"},
        {**good, "comparison_id": "x-4", "dwell_ms": "1e30"},
        {**good, "comparison_id": "x-5", "study": "Bad Name!"},
        {**good, "comparison_id": "x-6", "render_sha256_a": "f" * 64},
        {**good, "comparison_id": "x-7", "outcome": "b"},
    ]
    bom = tmp_path / "excel.csv"
    pd.DataFrame(rows).to_csv(bom, index=False, encoding="utf-8-sig")
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf")
    errors = import_rejecting(bom, rejected=4)
    assert f"{bom}:3 dwell_ms: -5 is not a duration" in errors
    assert f"{bom}:4 created_at: not an ISO 8601 date-time: '2024-13-45T00:00:00'" in errors
    assert f"{bom}:5 dwell_ms:" in errors
    assert f"{bom}:6 study: 'Bad Name!' is not a study name" in errors
    # a vote made on another rendering is stored, with a warning naming the line and the field
    assert f"warning: {bom}:7 render_sha256_a: differs from the stored render" in errors
    assert sorted(selectors.comparisons_frame(study="bad-values")["comparison_id"]) == ["x-1", "x-6", "x-7"]

    header = tmp_path / "header.csv"
    header.write_text("id,who,what\n1,2,3\n")
    assert f"{header}:1 header: missing column(s) comparison_id, study, task_id" in import_rejecting(header, rejected=1)


def test_dwell_is_bounded_by_the_time_the_item_was_out():
    study, *_ = make_study(min_dwell_ms=60_000)
    user = annotator()
    lease = next_lease(study=study, annotator=user)
    # a client claiming a long look right after the item was served: stored, bounded, not counted
    instant = submit_vote(token=lease.token, annotator=user, outcome="a", dwell_ms=10**9, decision_ms=10**9)
    assert not instant.counted and instant.dwell_ms < 60_000 and instant.decision_ms < 60_000
    second = next_lease(study=study, annotator=user)
    Lease.objects.filter(pk=second.pk).update(served_at=timezone.now() - timedelta(seconds=90))
    patient = submit_vote(token=second.token, annotator=user, outcome="b", dwell_ms=61_000)
    assert patient.counted and patient.dwell_ms == 61_000


def test_unassigned_annotator_loses_the_open_item_and_closed_studies_refuse_undo():
    from django.test import Client

    study, *_ = make_study()
    one, two = annotator("ann-one"), annotator("ann-two")
    services.study_annotators_set(study=study, users=[one, two])
    lease = next_lease(study=study, annotator=one)
    browser = Client()
    browser.force_login(one)
    assert browser.get(f"/annotate/img/{lease.token}/a").status_code == 200
    services.study_annotators_set(study=study, users=[two])
    lease.refresh_from_db()
    assert lease.state == "released"
    assert browser.get(f"/annotate/img/{lease.token}/a").status_code == 404
    with pytest.raises(services.LeaseClosed):
        submit_vote(token=lease.token, annotator=one, outcome="a", dwell_ms=5000)
    from annotation.models import Item

    assert Item.objects.get(pk=lease.item_id).open_count == 0  # back in the pool
    vote(study, two)
    services.study_status_set(study=study, status="closed")
    with pytest.raises(services.StudyUnavailable, match="closed"):
        services.comparison_undo(study=study, annotator=two)


def test_votes_keep_counting_for_their_pair_after_configurations_are_reordered():
    from agents.models import Configuration
    from annotation.models import StudyPair

    study, figs, configs = make_study(overlap_rate=0, target_per_pair=3)
    user = annotator()
    first, _ = vote(study, user)
    x, y = first.item.config_x_id, first.item.config_y_id
    # the declaration order flips: x now comes after y
    Configuration.objects.filter(pk=x).update(position=99)
    next_lease(study=study, annotator=user)  # notices the change and rebuilds the pool
    pair = StudyPair.objects.get(study=study, config_x_id=y, config_y_id=x)
    assert pair.votes == 1
    assert pair.x_left + pair.y_left == 1  # the voted lease is live; its side is told in the new order
    assert pair.y_left == (1 if first.left_is_x else 0)
    assert selectors.coverage_frame(study="pilot")["n"].sum() == 1
