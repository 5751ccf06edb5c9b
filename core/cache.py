"""Analyses cached per state of their inputs: a results page after the first costs a lookup, not a bootstrap.

A cached analysis is keyed by its name, its arguments and a *state*: a small tuple that changes whenever anything the
analysis reads changes (e.g. count, newest id and last update of the votes and judge records it reads). A new vote or
score changes the state, so the next request misses and recomputes: invalidation is by key, nothing is deleted, and
stale entries age out of the cache (Django's cache: Redis in production, shared by every web and worker process).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache

T = TypeVar("T")
ANALYSIS_TIMEOUT_SECONDS = 7 * 24 * 3600
# Bump when a cached analysis changes what it returns for the same inputs, so old entries are not served.
ANALYSIS_CACHE_VERSION = 1
_MISSING = object()


def analysis_key(name: str, *, arguments: dict, state: tuple) -> str:
    text = repr((ANALYSIS_CACHE_VERSION, name, sorted(arguments.items()), state))
    return f"analysis:{name}:{hashlib.sha256(text.encode()).hexdigest()}"


def analysis_cached(name: str, *, arguments: dict, state: tuple, compute: Callable[[], T]) -> T:
    """The value of `compute()` for these arguments in this state of the inputs, computed once."""
    key = analysis_key(name, arguments=arguments, state=state)
    value = cache.get(key, _MISSING)
    if value is _MISSING:
        value = compute()
        cache.set(key, value, ANALYSIS_TIMEOUT_SECONDS)
    return value


def cached_by_state(state: Callable[..., tuple]):
    """Decorate a keyword-only analysis: `state(**kwargs)` says what its inputs look like now (and raises what the
    analysis would raise for arguments it refuses). The undecorated function stays reachable as `.uncached`."""

    def decorate(function: Callable[..., T]) -> Callable[..., T]:
        name = f"{function.__module__}.{function.__qualname__}"

        @functools.wraps(function)
        def wrapper(**kwargs) -> T:
            return analysis_cached(name, arguments=kwargs, state=state(**kwargs), compute=lambda: function(**kwargs))

        wrapper.uncached = function
        return wrapper

    return decorate


def input_digest(*inputs) -> str:
    """SHA-256 over inputs held in memory: DataFrames by their column names and row hashes, anything else by pickle."""
    import pickle

    import pandas as pd

    digest = hashlib.sha256()
    for value in inputs:
        if isinstance(value, pd.DataFrame):
            digest.update(repr(list(value.columns)).encode())
            digest.update(pd.util.hash_pandas_object(value, index=False).to_numpy().tobytes())
        else:
            digest.update(pickle.dumps(value, protocol=4))
    return digest.hexdigest()


def cached_analysis(name: str, inputs: tuple, compute: Callable[[], T]) -> T:
    """compute() once per (name, inputs) for an analysis whose inputs are already in memory: their digest is the
    state (analysis_cached)."""
    return analysis_cached(name, arguments={}, state=(input_digest(*inputs),), compute=compute)
