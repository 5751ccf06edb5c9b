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


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    """Tests create many users; PBKDF2's deliberate slowness (about 0.25 s a password here) buys them nothing. The
    production setting is untouched (config/settings.py keeps Django's default hashers)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
