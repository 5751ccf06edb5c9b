"""Shared test setup. The suite runs on SQLite by default and on PostgreSQL when DATABASE_URL is set."""

import os

import pytest
from django.test import TransactionTestCase

# The fixtures through which a test reaches the test database (pytest-django refuses it to every other test).
DATABASE_FIXTURES = frozenset({"db", "transactional_db", "django_db_setup", "live_server"})


def opens_the_database(item) -> bool:
    cls = getattr(item, "cls", None)
    return (
        item.get_closest_marker("django_db") is not None
        or bool(DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())))
        or (cls is not None and issubclass(cls, TransactionTestCase))
    )


def pytest_collection_modifyitems(config, items):
    """REFIG_DATABASE_TESTS_ONLY=1 (CI's PostgreSQL pass): only the tests that open the test database. A test that
    never opens it (the audit, the renderer, the statistics, subprocesses on the embedded default) answers the same on
    both databases, so CI runs it once, in the SQLite pass; `make test` alone runs everything."""
    if not os.environ.get("REFIG_DATABASE_TESTS_ONLY"):
        return
    keep = [item for item in items if opens_the_database(item)]
    config.hook.pytest_deselected(items=[item for item in items if not opens_the_database(item)])
    items[:] = keep


@pytest.fixture(autouse=True)
def media_in_tmp(settings, tmp_path_factory):
    settings.MEDIA_ROOT = tmp_path_factory.mktemp("media")
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def cache_cleared():
    """Cached analyses are keyed by the state of their inputs (counts and ids), which a rolled-back test database
    repeats: every test starts with an empty cache."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    """Tests create many users; PBKDF2's deliberate slowness (about 0.25 s a password here) buys them nothing. The
    production setting is untouched (config/settings.py keeps Django's default hashers)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
