"""The materialised pool and its counters, rebuilt and kept in step (annotation/services/pool.py)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import selectors, services
from annotation.models import Lease
from tests.annotation.data import annotator, next_lease, submit_vote

pytestmark = pytest.mark.django_db


from tests.annotation.helpers import _counters, make_study, vote


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


def test_pool_state_follows_the_study_own_artifacts_only():
    """A render finishing for a configuration outside the study leaves its pool current (no rebuild while annotators
    work); one of its own artifacts changing verdict makes it stale, and the next request rebuilds it. Artifacts change
    here as the agents services change them: the verdict with the version one up."""
    from django.db.models import F

    from agents.models import Artifact
    from tests.factories import artifact_create, configuration_create

    study, figs, configs = make_study(figures=2, overlap_rate=0)
    first = next_lease(study=study, annotator=annotator("first"))
    assert selectors.study_state(study_id=study.pk).pool_current
    outsider = configuration_create("outsider", model="other", position=50)
    pending = artifact_create(outsider, figs[0])
    Artifact.objects.filter(pk=pending.pk).update(gate_passed=None, version=F("version") + 1)
    Artifact.objects.filter(pk=pending.pk).update(gate_passed=True, version=F("version") + 1)
    assert selectors.study_state(study_id=study.pk).pool_current
    own = Artifact.objects.filter(configuration=configs[0], figure=figs[0])
    own.update(gate_passed=None, version=F("version") + 1)  # re-rendering: pending again
    assert not selectors.study_state(study_id=study.pk).pool_current
    second = annotator("second")
    served = [next_lease(study=study, annotator=second)]
    while served[-1] is not None:
        submit_vote(token=served[-1].token, annotator=second, outcome="a", reason="r", dwell_ms=5000)
        served.append(next_lease(study=study, annotator=second))
    # 6 pairs x 2 figures, less the three pairs of the pending artifact, less the first annotator's item if still pooled
    first_pending = first.item.figure_id == figs[0].pk and configs[0].pk in (
        first.item.config_x_id,
        first.item.config_y_id,
    )
    assert len(served) - 1 == 12 - 3 - (0 if first_pending else 1)
    assert all(lease.item.artifact_x.gate_passed is not None for lease in served[:-1])
    assert all(lease.item.artifact_y.gate_passed is not None for lease in served[:-1])
    assert selectors.study_state(study_id=study.pk).pool_current


def test_one_artifact_turning_final_while_another_turns_pending_makes_the_pool_stale():
    """As many artifacts final and passing before as after, but not the same ones: the pool's fingerprint reads
    which artifacts changed (their ids and versions), not how many are final, and the rebuilt pool serves the
    newly final artifact's items and none of the pending one's."""
    from django.db.models import F

    from agents.models import Artifact
    from annotation.models import Item

    study, figs, configs = make_study(figures=2, overlap_rate=0)
    waiting = Artifact.objects.filter(configuration=configs[0], figure=figs[0])
    waiting.update(gate_passed=None, version=F("version") + 1)  # pending when the pool is built
    services.study_pool_sync(study=study, force=True)
    assert selectors.study_state(study_id=study.pk).pool_current
    final = Artifact.objects.filter(gate_passed__isnull=False)
    counts = (final.count(), final.filter(gate_passed=True).count())

    waiting.update(gate_passed=True, version=F("version") + 1)  # its rendering finished
    renders = Artifact.objects.filter(configuration=configs[1], figure=figs[1])
    renders.update(gate_passed=None, version=F("version") + 1)  # rendered again: pending
    assert (final.count(), final.filter(gate_passed=True).count()) == counts
    assert not selectors.study_state(study_id=study.pk).pool_current

    services.study_pool_sync(study=study)
    pooled = Item.objects.filter(study=study, in_pool=True)
    assert pooled.filter(artifact_x=waiting.get()).exists() or pooled.filter(artifact_y=waiting.get()).exists()
    assert not (pooled.filter(artifact_x=renders.get()) | pooled.filter(artifact_y=renders.get())).exists()
    assert selectors.study_state(study_id=study.pk).pool_current


def test_artifacts_finished_while_items_remain_join_the_pool_at_the_next_recheck():
    """The next-item path compares the study's artifacts once per POOL_ARTIFACTS_RECHECK: a figure whose artifacts
    arrive while other items remain is pooled at the first request after that interval, not before."""
    from annotation.models import Item, Study
    from tests.factories import artifact_create, figure_create

    study, figs, configs = make_study(figures=2, overlap_rate=0)
    user = annotator()
    vote(study, user)
    late = figure_create("task-fig-late", index=9)
    for c in configs:
        artifact_create(c, late)
    vote(study, user)  # within the interval: the pool is as built
    assert not Item.objects.filter(study=study, figure=late).exists()
    Study.objects.filter(pk=study.pk).update(
        pool_checked_at=timezone.now() - selectors.POOL_ARTIFACTS_RECHECK - timedelta(seconds=1)
    )
    vote(study, user)
    assert Item.objects.filter(study=study, figure=late, in_pool=True).count() == 6
    assert selectors.study_state(study_id=study.pk).pool_current


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


def test_votes_keep_counting_for_their_pair_after_configurations_are_reordered():
    """A reorder is looked at with the artifacts, once per POOL_ARTIFACTS_RECHECK, not on every request."""
    from agents.models import Configuration
    from annotation.models import Study, StudyPair

    study, figs, configs = make_study(overlap_rate=0, target_per_pair=3)
    user = annotator()
    first, _ = vote(study, user)
    x, y = first.item.config_x_id, first.item.config_y_id
    # the declaration order flips: x now comes after y
    Configuration.objects.filter(pk=x).update(position=99)
    assert selectors.study_state(study_id=study.pk, complete=False).pool_current  # the hot path does not look
    assert not selectors.study_state(study_id=study.pk).pool_current
    Study.objects.filter(pk=study.pk).update(
        pool_checked_at=timezone.now() - selectors.POOL_ARTIFACTS_RECHECK - timedelta(seconds=1)
    )
    next_lease(study=study, annotator=user)  # the recheck notices the change and rebuilds the pool
    pair = StudyPair.objects.get(study=study, config_x_id=y, config_y_id=x)
    assert pair.votes == 1
    assert pair.x_left + pair.y_left == 1  # the voted lease is live; its side is told in the new order
    assert pair.y_left == (1 if first.left_is_x else 0)
    assert selectors.coverage_frame(study="pilot")["n"].sum() == 1


def _planner_row_count(table: str) -> int | None:
    """The row count the database's query planner holds for a table (its statistics), None when it has none."""
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
            (rows,) = cursor.fetchone()
            return None if rows < 0 else int(rows)
        cursor.execute("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'")
        if cursor.fetchone() is None:
            return None
        cursor.execute("SELECT stat FROM sqlite_stat1 WHERE tbl = %s", [table])
        found = cursor.fetchone()
        return int(found[0].split()[0]) if found else None


def test_a_new_pool_is_in_the_planners_statistics_before_its_first_item_is_served():
    """Until the statistics know a new study's figure counters, PostgreSQL joined each candidate item to them by
    scanning every figure of the study (128-287 ms per pick at paper scale, 3.3 ms after ANALYZE); with stale item
    estimates the overlap pick took 15 ms against 2.9."""
    from annotation.models import Item, StudyFigure, StudyPair
    from tests.annotation.data import SLUGS

    make_study(figures=5)
    second = services.study_create(name="second", configurations=SLUGS, min_dwell_ms=0)
    assert StudyFigure.objects.filter(study=second).count() == 5 and StudyPair.objects.count() == 2 * 6
    assert _planner_row_count("annotation_studyfigure") == StudyFigure.objects.count() == 10
    assert _planner_row_count("annotation_studypair") == StudyPair.objects.count()
    assert _planner_row_count("annotation_item") == Item.objects.count() == 2 * 5 * 6
