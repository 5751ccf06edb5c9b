"""Configuration declarations (JSON or TOML) and the pairs they form. Pure."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

CONFIGURATION_FIELDS: tuple[str, ...] = ("slug", "model", "harness", "workflow", "reasoning_effort", "label")
# Anything else a configuration varies on (a version, a prompt, a runtime image): a table of short strings.
ATTRIBUTES_FIELD = "attributes"
# What makes two configurations different designs: a workflow effect pairs configurations equal in all but the workflow.
DESIGN_FIELDS: tuple[str, ...] = ("model", "harness", "workflow", "reasoning_effort", ATTRIBUTES_FIELD)
# Reasoning effort levels, lowest first (the providers' names); a configuration file may declare its own order.
EFFORT_ORDER: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
# Provenance a configuration may record, each optional: the prompt (its text, its SHA-256, or both, which must agree),
# the harness and CLI versions, the runtime image. Shown to staff, exported and released, but not part of the design
# (a workflow's prompt differs by nature): a prompt or version that a comparison varies goes in `attributes` too.
PROVENANCE_FIELDS: tuple[str, ...] = ("prompt", "prompt_sha256", "harness_version", "cli_version", "runtime_image")
# Longest accepted value per field (the database columns'); the prompt is free text of any reasonable size.
PROVENANCE_LIMITS = {"prompt": 200_000, "prompt_sha256": 64, "harness_version": 200, "cli_version": 200}
PROVENANCE_LIMITS["runtime_image"] = 300
SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


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
    attributes: tuple[tuple[str, str], ...] = ()
    effort_rank: int = 0
    prompt: str = ""
    prompt_sha256: str = ""
    harness_version: str = ""
    cli_version: str = ""
    runtime_image: str = ""

    def provenance(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in PROVENANCE_FIELDS}


@dataclass(frozen=True)
class ConfigurationPair:
    x: str
    y: str
    kind: str  # "within": differ only in workflow; otherwise "across"


def attributes_text(attributes) -> str:
    """One canonical text for a configuration's other attributes ("" for none), so they group and compare as one value."""
    items = sorted(dict(attributes or {}).items())
    return "; ".join(f"{key}={value}" for key, value in items)


def prompt_sha256(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def _provenance(entry: dict, where: str) -> tuple[dict[str, str], list[str]]:
    """The entry's provenance fields, checked: strings within their limits, versions and image on one line, the
    prompt's hash 64 hex digits and, beside a prompt, that prompt's SHA-256 (filled in from the prompt when absent)."""
    values, problems = {}, []
    for name in PROVENANCE_FIELDS:
        value = entry.get(name, "")
        if not isinstance(value, str):
            problems.append(f"{where} {name}: expected a string")
            continue
        value = value if name == "prompt" else value.strip()  # a prompt's whitespace is part of what was sent
        if len(value) > PROVENANCE_LIMITS[name]:
            problems.append(f"{where} {name}: longer than {PROVENANCE_LIMITS[name]:,} characters")
        elif name != "prompt" and any(ord(c) < 32 for c in value):
            problems.append(f"{where} {name}: expected one line of text")
        values[name] = value
    digest = values.get("prompt_sha256", "").lower()
    if digest and not SHA256_HEX.match(digest):
        problems.append(f"{where} prompt_sha256: expected 64 hexadecimal digits (the SHA-256 of the prompt's UTF-8)")
    elif values.get("prompt"):
        actual = prompt_sha256(values["prompt"])
        if digest and digest != actual:
            problems.append(f"{where} prompt_sha256: {digest} is not the SHA-256 of the prompt given ({actual})")
        digest = actual
    values["prompt_sha256"] = digest
    return values, problems


def provenance_merge(*, stored: dict[str, str], declared: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """A configuration's provenance after a new declaration: blanks filled in (provenance may come later), a recorded
    value never changed. Returns (merged values, one sentence per field declared differently)."""
    merged, clashes = dict(stored), []
    for name in PROVENANCE_FIELDS:
        old, new = stored.get(name, ""), declared.get(name, "")
        if new and not old:
            merged[name] = new
        elif new and new != old:
            shown = f"SHA-256 {prompt_sha256(new)}" if name == "prompt" else repr(new)
            clashes.append(f"{name}: declared as {shown}, recorded otherwise; recorded provenance is kept for good")
    return merged, clashes


def effort_rank(effort: str, order: tuple[str, ...] = EFFORT_ORDER) -> int:
    """Position of an effort level in ``order``; a level the order does not name sorts after every named one."""
    return order.index(effort) if effort in order else len(order)


def _effort_order(data: dict, path: Path) -> tuple[str, ...]:
    declared = data.get("effort_order")
    if declared is None:
        return EFFORT_ORDER
    if not isinstance(declared, list) or not declared or not all(isinstance(v, str) and v.strip() for v in declared):
        raise ConfigurationFileError(f"{path}: effort_order: expected a non-empty list of effort names, lowest first")
    if len(set(declared)) != len(declared):
        raise ConfigurationFileError(f"{path}: effort_order: an effort is named twice")
    return tuple(v.strip() for v in declared)


def parse_configurations(path: Path) -> list[ConfigurationSpec]:
    """Read `{"configurations": [...]}` (JSON) or `[[configurations]]` (TOML). Every problem of the file is reported at
    once, each naming the entry and field; an optional top-level `effort_order` lists effort levels lowest first, and
    each entry may carry PROVENANCE_FIELDS."""
    text = path.read_bytes()
    try:
        data = tomllib.loads(text.decode("utf-8")) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ConfigurationFileError(f"{path}: cannot parse: {error}") from error
    entries = data.get("configurations") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ConfigurationFileError(f"{path}: expected a non-empty 'configurations' list")
    order = _effort_order(data, path)
    specs: list[ConfigurationSpec] = []
    problems: list[str] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        where = f"{path}: configuration {number}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected an object")
            continue
        found = [
            f"{where} {name}: unknown field"
            for name in entry
            if name not in (*CONFIGURATION_FIELDS, ATTRIBUTES_FIELD, *PROVENANCE_FIELDS)
        ]
        for name in CONFIGURATION_FIELDS:
            value = entry.get(name)
            if not isinstance(value, str) or not value.strip():
                found.append(f"{where} {name}: missing or empty")
        attributes = entry.get(ATTRIBUTES_FIELD, {})
        if not isinstance(attributes, dict) or not all(
            isinstance(v, str | int | float) and not isinstance(v, bool) for v in attributes.values()
        ):
            found.append(f"{where} {ATTRIBUTES_FIELD}: expected a table of names to short texts (a version, a prompt)")
        provenance, wrong = _provenance(entry, where)
        found.extend(wrong)
        slug = entry.get("slug")
        if isinstance(slug, str) and slug.strip():
            if not SLUG.match(slug):
                found.append(f"{where} slug: {slug!r} is not a slug (lower-case letters, digits, . _ -)")
            elif slug in seen:
                found.append(f"{where} slug: duplicate {slug!r}")
            seen.add(slug)
        if found:
            problems.extend(found)
            continue
        fields = {name: entry[name].strip() for name in CONFIGURATION_FIELDS}
        specs.append(
            ConfigurationSpec(
                **fields,
                attributes=tuple(sorted((str(k), str(v).strip()) for k, v in attributes.items())),
                effort_rank=effort_rank(fields["reasoning_effort"], order),
                **provenance,
            )
        )
    if problems:
        raise ConfigurationFileError("\n".join(problems))
    return specs


def design_key(spec: ConfigurationSpec, *, without: str) -> tuple:
    """Everything that makes ``spec`` the design it is, except the one attribute a comparison varies."""
    values = {
        "model": spec.model,
        "harness": spec.harness,
        "workflow": spec.workflow,
        "reasoning_effort": spec.reasoning_effort,
        ATTRIBUTES_FIELD: attributes_text(dict(spec.attributes)),
    }
    return tuple(values[name] for name in DESIGN_FIELDS if name != without)


def pair_kind(a: ConfigurationSpec, b: ConfigurationSpec) -> str:
    same_except_workflow = design_key(a, without="workflow") == design_key(b, without="workflow")
    return "within" if same_except_workflow and a.workflow != b.workflow else "across"


def configuration_pairs(specs: list[ConfigurationSpec]) -> list[ConfigurationPair]:
    """All unordered pairs, in declaration order: 10 configurations give 45."""
    return [ConfigurationPair(x=a.slug, y=b.slug, kind=pair_kind(a, b)) for a, b in itertools.combinations(specs, 2)]
