"""Expensive analyses cached by what they were computed from, so a page or an engine call pays for them once.

The key is a digest of the inputs (a DataFrame's rows, or plain parameters) and the computation's name, so a new vote
or a new score changes the key and stale results are never served; entries simply age out.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from typing import TypeVar

import pandas as pd
from django.core.cache import cache

ANALYSIS_TTL_SECONDS = 7 * 24 * 3600
T = TypeVar("T")


def input_digest(*inputs) -> str:
    """SHA-256 over the inputs: DataFrames by their column names and row hashes, anything else by its pickle."""
    digest = hashlib.sha256()
    for value in inputs:
        if isinstance(value, pd.DataFrame):
            digest.update(repr(list(value.columns)).encode())
            digest.update(pd.util.hash_pandas_object(value, index=False).to_numpy().tobytes())
        else:
            digest.update(pickle.dumps(value, protocol=4))
    return digest.hexdigest()


def cached_analysis(name: str, inputs: tuple, compute: Callable[[], T]) -> T:
    """compute() once per (name, inputs); later calls with the same inputs read the cache."""
    key = f"refig:analysis:{name}:{input_digest(*inputs)}"
    result = cache.get(key)
    if result is None:
        result = compute()
        cache.set(key, result, ANALYSIS_TTL_SECONDS)
    return result
