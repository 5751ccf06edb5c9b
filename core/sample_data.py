"""Sample data loaders for `make run`, run in an explicit order (each app registers its own from AppConfig.ready()).

The order is a number, not registration order, so app loading order never decides what is loaded first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# Orders used by the apps: the corpus and artifacts first, then what refers to them.
ORDER_ARTIFACTS = 10
ORDER_SCORES = 20
ORDER_STUDIES = 30


@dataclass(frozen=True)
class SampleLoader:
    order: int
    name: str
    load: Callable[[], str]


SAMPLE_LOADERS: dict[str, SampleLoader] = {}


def register_sample_loader(name: str, load: Callable[[], str], *, order: int) -> None:
    SAMPLE_LOADERS[name] = SampleLoader(order=order, name=name, load=load)


def sample_loaders() -> list[SampleLoader]:
    return sorted(SAMPLE_LOADERS.values(), key=lambda loader: (loader.order, loader.name))
