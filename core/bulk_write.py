"""Writes in bulk, and the only module that looks at the database vendor (SQLite gets the portable equivalent).

- insert_rows: many new rows of one model without building a model instance per row (the importers' write path).
  `bulk_create` spends most of an import's time on per-row, per-field Python work (instances, pre_save, returning
  ids); here each row is a dict of attribute values, filled with the fields' defaults and converted with the fields'
  own get_db_prep_save, and the batch goes to the database in one statement run many times (COPY on PostgreSQL).
- statistics_refresh: the query planner's statistics of tables a bulk write just reshaped (ANALYZE, one statement
  on both databases).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connections, models, router
from django.utils import timezone

__all__ = ["insert_rows", "statistics_refresh"]


# Fields whose preparation returns a value of exactly this type unchanged (str for text, int for integers, ...); such
# values skip get_db_prep_save, which took most of a comparison row's write time.
_PLAIN_TYPES = ((models.BooleanField, bool), (models.IntegerField, int), (models.FloatField, float))
_PLAIN_TYPES += ((models.CharField, str), (models.TextField, str))
_PLAIN_TYPES += tuple((kind, int) for kind in (models.AutoField, models.BigAutoField, models.SmallAutoField))  # keys


def _plain_type(field: models.Field) -> type | None:
    if field.is_relation:
        field = field.target_field
    for kind, plain in _PLAIN_TYPES:
        prepares_as_kind = all(
            getattr(type(field), name) is getattr(kind, name) for name in ("get_prep_value", "get_db_prep_value")
        )
        if isinstance(field, kind) and prepares_as_kind:
            return plain
    return None


def insert_rows(model: type[models.Model], rows: Iterable[dict]) -> int:
    """Insert `rows` (attribute name → value, e.g. `artifact_id`) as new rows of `model` in the caller's transaction
    and return how many. A column a row leaves out takes the field's default (auto_now / auto_now_add: now), as the
    model's constructor would give it. Primary keys are the database's and are not read back. Raises DatabaseError
    like any write (a constraint refused, a value out of range)."""
    # The connection itself, not django.db.connection: that proxy looks the connection up again on every use.
    connection = connections[router.db_for_write(model)]
    fields = [f for f in model._meta.concrete_fields if f is not model._meta.auto_field]
    now = timezone.now()

    def prepared(field: models.Field, value, kind: type | None):
        return value if value is None or type(value) is kind else field.get_db_prep_save(value, connection)

    # Each column's field and plain type by attribute name, and a row of the defaults ready to write (the same for
    # every row leaving a column out): a row costs a copy of that and one step per value it names, not per column.
    columns, defaults = {}, []
    for position, f in enumerate(fields):
        kind = _plain_type(f)
        default = now if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False) else f.get_default()
        columns[f.attname] = (position, f, kind)
        defaults.append(prepared(f, default, kind))
    values = []
    for row in rows:
        value = defaults.copy()
        for name, given in row.items():
            if name not in columns:
                raise TypeError(f"{model.__name__} has no column {name!r}")
            position, f, kind = columns[name]
            value[position] = prepared(f, given, kind)
        values.append(value)
    if not values:
        return 0
    quote = connection.ops.quote_name
    table, names = quote(model._meta.db_table), ", ".join(quote(f.column) for f in fields)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # COPY: about twice the rows per second of executemany (tests/benchmarks/test_ingest_bench.py).
            with connection.wrap_database_errors, cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in values:
                    copy.write_row(row)
        else:
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(fields))})", values)
    return len(values)


def statistics_refresh(model: type[models.Model], *fields: str) -> None:
    """ANALYZE the model's table (only the columns of `fields`, when given), inside the caller's transaction (its new
    rows included; the statistics commit with them). A new study's pool rows are unknown to PostgreSQL's statistics
    until autovacuum samples them, a minute or more later, and meanwhile the planner joins items to their figure
    counters by scanning every figure of the study per item. Naming the columns the planner needs halves the cost on
    a wide table."""
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    statement = f"ANALYZE {quote(model._meta.db_table)}"
    # SQLite keeps statistics per index, not per column, and takes no column list.
    if fields and connection.vendor == "postgresql":
        statement += f" ({', '.join(quote(model._meta.get_field(name).column) for name in fields)})"
    with connection.cursor() as cursor:
        cursor.execute(statement)
