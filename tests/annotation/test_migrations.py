"""Migrations that move stored data: what a deployment has before them is there, whole, after them."""

import pytest

from tests.annotation.data import annotator, next_lease, submit_vote
from tests.annotation.helpers import make_study

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE_LEASE_PAIRS = ("annotation", "0011_lease_study_annotator")


def test_stored_leases_take_their_items_pair_when_leases_gain_one():
    """0012 adds each lease's pair (config_x, config_y) and fills it from the lease's item; 0013 requires it."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from annotation.models import Lease

    study, _, _ = make_study(figures=3)
    for name in ("ann-one", "ann-two"):
        user = annotator(name)
        done = next_lease(study=study, annotator=user)
        submit_vote(token=done.token, annotator=user, outcome="a", reason="r", dwell_ms=4000)
        next_lease(study=study, annotator=user)  # and one left open
    expected = {pk: (x, y) for pk, x, y in Lease.objects.values_list("pk", "item__config_x_id", "item__config_y_id")}
    assert len(expected) == 4 and len(set(expected.values())) > 1

    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE_LEASE_PAIRS])
    try:
        with connection.cursor() as cursor:
            columns = [c.name for c in connection.introspection.get_table_description(cursor, "annotation_lease")]
        assert "config_x_id" not in columns and "config_y_id" not in columns  # the state a deployment had
    finally:
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert dict((pk, (x, y)) for pk, x, y in Lease.objects.values_list("pk", "config_x_id", "config_y_id")) == expected
