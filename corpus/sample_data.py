"""Sample data loaders for `make run`; apps append theirs from AppConfig.ready()."""
from typing import Callable

SAMPLE_LOADERS: list[Callable[[], str]] = []
