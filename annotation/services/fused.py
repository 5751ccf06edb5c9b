"""Several UPDATE statements sent to the database as one: the only module that looks at the database vendor.

On PostgreSQL the updates go out as data-modifying CTEs of one statement, each counted in a scalar subquery of the
SELECT list, which PostgreSQL evaluates left to right: the updates run to completion in the order given, so the lock
order the callers rely on (annotation.services.counters) holds. What it buys, measured by the annotation benchmark
(tests/benchmarks/test_annotation_bench.py, queries per request): next-item 12 → 10 statements (the item's claim
rides along), submit 9 → 7, and one
network round trip less per counter row on every lease and vote. SQLite has no round trips to save (the database is
in the process) and no data-modifying CTEs: there the updates run one by one, in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connections
from django.db.models import QuerySet
from django.db.models.sql import UpdateQuery

Update = tuple[QuerySet, dict]  # (the rows, {field: value or expression}), as for QuerySet.update(**values)


def updates_run(updates: Sequence[Update]) -> list[int]:
    """Run the updates in order, in the caller's transaction; how many rows each changed."""
    if not updates:
        return []
    connection = connections[updates[0][0].db]
    if connection.vendor != "postgresql" or len(updates) == 1:
        return [rows.update(**values) for rows, values in updates]
    statements, params = [], []
    for n, (rows, values) in enumerate(updates):
        query = rows.query.chain(UpdateQuery)
        query.add_update_values(values)
        query.annotations = {}
        sql, sql_params = query.get_compiler(rows.db).as_sql()
        statements.append(f"u{n} AS ({sql} RETURNING 1)")
        params.extend(sql_params)
    counted = ", ".join(f"(SELECT COUNT(*) FROM u{n})" for n in range(len(updates)))
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {', '.join(statements)} SELECT {counted}", params)
        return list(cursor.fetchone())
