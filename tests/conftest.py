"""Shared test setup. The suite runs on SQLite by default and on PostgreSQL when DATABASE_URL is set."""

import pytest


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
