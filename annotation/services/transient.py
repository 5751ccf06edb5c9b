"""Run a unit of work again when the database chose its transaction as a deadlock victim or could not serialise it:
such a transaction wrote nothing, so running it again is safe. Used by every annotator write (next item, pool sync,
submit, skip, undo), so a lock-order conflict under load costs a retry, never an error answer."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from django.db import OperationalError, transaction

T = TypeVar("T")

TRIES = 4
TRANSIENT_SQLSTATES = ("40P01", "40001")  # PostgreSQL: deadlock detected, serialization failure


def is_transient(error: OperationalError) -> bool:
    return getattr(error.__cause__, "sqlstate", None) in TRANSIENT_SQLSTATES or "database is locked" in str(error)


def atomic_retrying(work: Callable[[], T]) -> T:
    """work() in a transaction, run again (after a short, growing pause) when that transaction was a victim.
    Outside an enclosing transaction only: a victim inside one has already doomed it."""
    for attempt in range(TRIES):
        try:
            with transaction.atomic():
                return work()
        except OperationalError as error:
            if attempt == TRIES - 1 or not is_transient(error) or transaction.get_connection().in_atomic_block:
                raise
            time.sleep(0.01 * 2**attempt)
    raise AssertionError("unreachable")
