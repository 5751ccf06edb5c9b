"""core/compiled_sql.py: a statement compiled once gives, for any values of its slots, exactly what the queryset built
for those values gives, on either database; a shape whose SQL would depend on a slot's value is refused."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext

from agents.models import Artifact
from core.compiled_sql import CompiledQuery
from tests.factories import artifact_create, configuration_create, figure_create

pytestmark = pytest.mark.django_db


def _corpus():
    figures = [figure_create(f"t{i}", index=i) for i in range(3)]
    configs = [configuration_create(f"c{i}", model="m", position=i) for i in range(2)]
    for c in configs:
        for f in figures:
            artifact_create(c, f, gate_passed=f.task_id != "t1" or c.slug != "c1")
    return figures, configs


def test_instances_with_their_relations_match_the_querysets_own_for_every_value():
    figures, configs = _corpus()
    builds = []

    def build(slug, figure):
        builds.append((slug, figure))
        return (
            Artifact.objects.filter(configuration__slug=slug, figure_id__gte=figure)
            .select_related("configuration", "figure")
            .only("gate_passed", "configuration__slug", "figure__task_id")
            .order_by("figure_id")
        )

    compiled = CompiledQuery(build, slug=str, figure=int)
    for slug in ("c0", "c1", "nobody"):
        for figure in (figures[0].pk, figures[2].pk):
            got = compiled.rows(slug=slug, figure=figure)
            expected = list(build(slug, figure))
            assert [(a.pk, a.gate_passed, a.configuration.slug, a.figure.task_id) for a in got] == [
                (a.pk, a.gate_passed, a.configuration.slug, a.figure.task_id) for a in expected
            ]
    assert len(builds) == 1 + 6  # compiled once (the other builds are this test's own)
    # The relations came with the row, and what `only` left out still loads on access, as from the queryset.
    artifact = compiled.rows(slug="c1", figure=figures[0].pk)[1]
    with CaptureQueriesContext(connection) as queries:
        assert (artifact.configuration.slug, artifact.figure.task_id, artifact.gate_passed) == ("c1", "t1", False)
    assert len(queries) == 0
    with CaptureQueriesContext(connection) as queries:
        assert artifact.audit_summary == Artifact.objects.get(pk=artifact.pk).audit_summary
    assert len(queries) == 2  # the deferred field's own query, and the comparison's


def test_values_list_rows_with_aggregates_and_flat_values():
    _, configs = _corpus()
    tally = CompiledQuery(
        lambda slug: (
            Artifact.objects.filter(configuration__slug=slug)
            .values_list("configuration__slug", "gate_passed")
            .annotate(n=Count("id"))
            .order_by("gate_passed")
        ),
        slug=str,
    )
    assert tally.rows(slug="c1") == [("c1", False, 1), ("c1", True, 2)]
    assert tally.rows(slug="c0") == [("c0", True, 3)]
    assert all(
        type(gate) is bool for _, gate, _ in tally.rows(slug="c1")
    )  # the database's 0/1 converted, as by the ORM
    stored = CompiledQuery(
        lambda pk: Artifact.objects.filter(pk=pk).values_list("audit_summary", "imported_at"), pk=int
    )
    for artifact in Artifact.objects.all():
        assert stored.rows(pk=artifact.pk) == [(artifact.audit_summary, artifact.imported_at)]
        assert isinstance(stored.rows(pk=artifact.pk)[0][1], datetime)
    ids = CompiledQuery(
        lambda config: Artifact.objects.filter(configuration_id=config).order_by("pk").values_list("pk", flat=True),
        config=int,
    )
    assert ids.rows(config=configs[0].pk) == list(
        Artifact.objects.filter(configuration=configs[0]).values_list("pk", flat=True)
    )


def test_times_are_passed_as_the_database_takes_them():
    base = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    for n in range(4):
        User.objects.create(username=f"u{n}", last_login=base + timedelta(minutes=n))
    seen_by = CompiledQuery(
        lambda now: User.objects.filter(last_login__lte=now).order_by("username").values_list("username", flat=True),
        now=datetime,
    )
    assert seen_by.rows(now=base - timedelta(seconds=1)) == []
    assert seen_by.rows(now=base + timedelta(minutes=1)) == ["u0", "u1"]
    assert seen_by.rows(now=base + timedelta(minutes=1, microseconds=-1)) == ["u0"]
    assert seen_by.rows(now=base + timedelta(days=1)) == ["u0", "u1", "u2", "u3"]


def test_shapes_that_depend_on_a_slots_value_are_refused_when_compiled():
    figure_create("t0")
    limited = CompiledQuery(lambda n: Artifact.objects.order_by("pk")[:n], n=int)  # a LIMIT is written into the SQL
    with pytest.raises(TypeError, match="slot 'n' does not reach the statement"):
        limited.rows(n=5)
    unused = CompiledQuery(lambda slug: Artifact.objects.all(), slug=str)
    with pytest.raises(TypeError, match="slot 'slug'"):
        unused.rows(slug="c0")
    with pytest.raises(TypeError, match="values_list rows"):
        CompiledQuery(lambda slug: Artifact.objects.filter(configuration__slug=slug).values("pk"), slug=str).rows(
            slug="c0"
        )
    with pytest.raises(TypeError, match="prefetch"):
        CompiledQuery(
            lambda slug: Artifact.objects.filter(configuration__slug=slug).prefetch_related("figure"), slug=str
        ).rows(slug="c0")
    with pytest.raises(TypeError, match="slots are"):
        CompiledQuery(lambda ids: Artifact.objects.filter(pk__in=ids), ids=list)
    with pytest.raises(TypeError, match="slots are"):
        CompiledQuery(lambda slug: Artifact.objects.filter(configuration__slug=slug), slug=str).rows(other="x")


@pytest.mark.django_db(transaction=True)
def test_a_finished_threads_connection_is_not_kept_alive_by_its_compiled_statements():
    """Compiled statements live on the connection they were compiled on: a global cache kept every finished thread's
    connection (and its database session) open, which PostgreSQL then refused to drop the test database over."""
    import gc
    import threading
    import weakref

    from django.db import connections

    figure_create("t0")
    compiled = CompiledQuery(lambda task: Artifact.objects.filter(figure__task_id=task), task=str)
    seen = {}

    def work():
        assert compiled.rows(task="t0") == []
        seen["connection"] = weakref.ref(connections["default"])
        # The thread ends without closing its connection, as a server thread can; only references keep it.

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    gc.collect()
    assert seen["connection"]() is None


def test_postgresql_prepares_a_compiled_statement_and_only_those():
    """On PostgreSQL a statement of a fixed shape is prepared on the server once it has run five times on the
    connection (the planning it then skips took a third of the pick's time); the rows stay the queryset's own.
    Django's own queries bind client-side and are never prepared (a parameter in SELECT and GROUP BY would no longer
    be recognised as one)."""
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's; SQLite caches its compiled statements itself")
    figures, configs = _corpus()

    def build(figure):
        return (
            Artifact.objects.filter(figure_id=figure)
            .order_by("configuration__position")
            .values_list("pk", "gate_passed")
        )

    compiled = CompiledQuery(build, figure=int)

    def prepared() -> list[str]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT statement FROM pg_prepared_statements WHERE statement LIKE %s", ["%agents_artifact%"]
            )
            return [row[0] for row in cursor.fetchall()]

    for run in range(7):
        figure = figures[run % 3].pk
        assert compiled.rows(figure=figure) == list(build(figure))
        assert len(prepared()) == (1 if run >= 5 else 0)  # psycopg prepares it on the run after the fifth
    [statement] = prepared()
    assert "$1" in statement and "agents_artifact" in statement  # bound on the server
    for figure in (figures[1].pk, 10**9):
        assert compiled.rows(figure=figure) == list(build(figure))  # run as prepared
