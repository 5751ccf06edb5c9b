"""Configuration declarations (JSON or TOML) and the pairs they form. Pure."""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

CONFIGURATION_FIELDS: tuple[str, ...] = ("slug", "model", "harness", "workflow", "reasoning_effort", "label")
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")


class ConfigurationFileError(ValueError):
    pass


@dataclass(frozen=True)
class ConfigurationSpec:
    slug: str
    model: str
    harness: str
    workflow: str
    reasoning_effort: str
    label: str


@dataclass(frozen=True)
class ConfigurationPair:
    x: str
    y: str
    kind: str  # "within": differ only in workflow; otherwise "across"


def parse_configurations(path: Path) -> list[ConfigurationSpec]:
    """Read `{"configurations": [...]}` (JSON) or `[[configurations]]` (TOML); errors name the entry and field."""
    text = path.read_bytes()
    try:
        data = tomllib.loads(text.decode("utf-8")) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ConfigurationFileError(f"{path}: cannot parse: {error}") from error
    entries = data.get("configurations") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ConfigurationFileError(f"{path}: expected a non-empty 'configurations' list")
    specs: list[ConfigurationSpec] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        where = f"{path}: configuration {number}"
        if not isinstance(entry, dict):
            raise ConfigurationFileError(f"{where}: expected an object")
        for name in entry:
            if name not in CONFIGURATION_FIELDS:
                raise ConfigurationFileError(f"{where} {name}: unknown field")
        for name in CONFIGURATION_FIELDS:
            value = entry.get(name)
            if not isinstance(value, str) or not value.strip():
                raise ConfigurationFileError(f"{where} {name}: missing or empty")
        if not SLUG.match(entry["slug"]):
            raise ConfigurationFileError(
                f"{where} slug: {entry['slug']!r} is not a slug (lower-case letters, digits, . _ -)"
            )
        if entry["slug"] in seen:
            raise ConfigurationFileError(f"{where} slug: duplicate {entry['slug']!r}")
        seen.add(entry["slug"])
        specs.append(ConfigurationSpec(**{name: entry[name].strip() for name in CONFIGURATION_FIELDS}))
    return specs


def pair_kind(a: ConfigurationSpec, b: ConfigurationSpec) -> str:
    same_except_workflow = (a.model, a.harness, a.reasoning_effort) == (b.model, b.harness, b.reasoning_effort)
    return "within" if same_except_workflow and a.workflow != b.workflow else "across"


def configuration_pairs(specs: list[ConfigurationSpec]) -> list[ConfigurationPair]:
    """All unordered pairs, in declaration order: 10 configurations give 45."""
    return [ConfigurationPair(x=a.slug, y=b.slug, kind=pair_kind(a, b)) for a, b in itertools.combinations(specs, 2)]
