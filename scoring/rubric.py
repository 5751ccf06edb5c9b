"""The rubric judge's rubric as versioned data, and strict validation of the judge's reply.

Pure: no Django, DRF or Celery (REFERENCE 3). A rubric lives in ``scoring/rubrics/<version>.json``:
its axes and maxima (which must agree with ``corpus.protocol``), the system prompt, the user prompt
template with one placeholder for the object summary, and the strict JSON schema of the reply.
Changing any of these is a new version file, never an edit: judge records name the version and
``prompt_hash`` fingerprints the exact text sent.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus.protocol import RUBRIC_AXES, RUBRIC_MAXIMA

RUBRICS_DIR = Path(__file__).resolve().parent / "rubrics"
DEFAULT_RUBRIC_VERSION = "refig-v1"
SCORE_SUM_TOLERANCE = 1e-6
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SCHEMA_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Rubric:
    version: str
    axes: tuple[str, ...]
    maxima: dict[str, int]
    system_prompt: str
    user_prompt_template: str
    reply_schema: dict
    object_summary_placeholder: str = "{object_summary}"
    reply_schema_name: str = "refig_judgement"

    def user_prompt(self, object_summary: dict) -> str:
        """The user message text: the template with the object summary (sorted, indented JSON)."""
        return self.user_prompt_template.replace(self.object_summary_placeholder, summary_json(object_summary))


@dataclass(frozen=True)
class JudgeReply:
    score: int | float
    subscores: dict[str, float]
    major_errors: list[str]
    minor_errors: list[str]
    editability_assessment: str
    reason: str


class JudgeReplyError(ValueError):
    """A reply that breaks the contract; ``field`` is a path such as ``$``, ``score``, ``subscores.text``."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class RubricError(ValueError):
    """A rubric file that is malformed or disagrees with the protocol constants."""


def summary_json(object_summary: dict) -> str:
    """The object summary exactly as it appears in the prompt (and so in the prompt hash)."""
    return json.dumps(object_summary, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)


def _text(value: Any, name: str) -> str:
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    if isinstance(value, str):
        return value
    raise RubricError(f"{name} must be a string or a list of lines")


def load_rubric(version: str = DEFAULT_RUBRIC_VERSION) -> Rubric:
    """Read ``scoring/rubrics/<version>.json`` and check it against the protocol constants."""
    if not _VERSION_RE.match(version):
        raise RubricError(f"invalid rubric version {version!r}")
    path = RUBRICS_DIR / f"{version}.json"
    if not path.is_file():
        known = sorted(p.stem for p in RUBRICS_DIR.glob("*.json"))
        raise RubricError(f"no rubric {version!r} in {RUBRICS_DIR} (known: {', '.join(known) or 'none'})")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("version") != version:
        raise RubricError(f"{path.name}: version field {data.get('version')!r} does not match the file name")
    try:
        axes = tuple(axis["key"] for axis in data["axes"])
        maxima = {axis["key"]: int(axis["max"]) for axis in data["axes"]}
        schema = data["reply_schema"]
    except (KeyError, TypeError) as exc:
        raise RubricError(f"{path.name}: malformed axes or reply_schema ({exc})") from exc
    if axes != RUBRIC_AXES or maxima != RUBRIC_MAXIMA:
        raise RubricError(f"{path.name}: axes/maxima {maxima} differ from corpus.protocol {RUBRIC_MAXIMA}")
    placeholder = data.get("object_summary_placeholder", "{object_summary}")
    rubric = Rubric(
        version=version,
        axes=axes,
        maxima=maxima,
        system_prompt=_text(data["system_prompt"], "system_prompt"),
        user_prompt_template=_text(data["user_prompt_template"], "user_prompt_template"),
        reply_schema=schema,
        object_summary_placeholder=placeholder,
        reply_schema_name=data.get("reply_schema_name", "refig_judgement"),
    )
    _check_rubric(rubric, path.name)
    return rubric


def _check_rubric(rubric: Rubric, name: str) -> None:
    if rubric.user_prompt_template.count(rubric.object_summary_placeholder) != 1:
        raise RubricError(
            f"{name}: the user prompt template needs the placeholder {rubric.object_summary_placeholder} exactly once"
        )
    if not _SCHEMA_NAME_RE.match(rubric.reply_schema_name):
        raise RubricError(f"{name}: reply_schema_name must match {_SCHEMA_NAME_RE.pattern}")
    _check_strict(rubric.reply_schema, "reply_schema", name)
    props = rubric.reply_schema.get("properties", {})
    expected = {"score", "subscores", "major_errors", "minor_errors", "editability_assessment", "reason"}
    if set(props) != expected:
        raise RubricError(f"{name}: reply_schema properties {sorted(props)} != {sorted(expected)}")
    sub = props["subscores"].get("properties", {})
    if tuple(sub) != rubric.axes:
        raise RubricError(f"{name}: reply_schema subscores {tuple(sub)} != axes {rubric.axes}")
    for axis in rubric.axes:
        if sub[axis].get("minimum") != 0 or sub[axis].get("maximum") != rubric.maxima[axis]:
            raise RubricError(f"{name}: reply_schema bounds of {axis} disagree with its maximum")


def _check_strict(schema: dict, where: str, name: str) -> None:
    """Strict structured output: every object closes additionalProperties and requires every key."""
    if schema.get("type") == "object":
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or set(schema.get("required", ())) != set(props):
            raise RubricError(f"{name}: {where} is not strict (additionalProperties false, all required)")
        for key, child in props.items():
            _check_strict(child, f"{where}.{key}", name)
    elif schema.get("type") == "array":
        _check_strict(schema.get("items", {}), f"{where}[]", name)


# --- reply validation -----------------------------------------------------------------------------


def _reject_constant(token: str) -> float:
    raise ValueError(f"non-finite number {token}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_TYPE_CHECKS = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "integer": lambda v: _is_number(v) and float(v).is_integer(),
    "boolean": lambda v: isinstance(v, bool),
}


def _check_node(value: Any, schema: dict, path: str) -> None:
    """The subset of JSON Schema that strict structured outputs use: type, properties, required,
    additionalProperties false, items, minimum, maximum."""
    kind = schema.get("type")
    check = _TYPE_CHECKS.get(kind)
    if check is not None and not check(value):
        raise JudgeReplyError(path, f"expected {kind}, got {_describe(value)}")
    if kind == "object":
        props = schema.get("properties", {})
        prefix = "" if path == "$" else f"{path}."
        for key in schema.get("required", ()):
            if key not in value:
                raise JudgeReplyError(f"{prefix}{key}", "missing field")
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in props:
                    raise JudgeReplyError(f"{prefix}{key}", "unexpected field")
        for key, child in props.items():
            if key in value:
                _check_node(value[key], child, f"{prefix}{key}")
    elif kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            _check_node(item, schema["items"], f"{path}[{i}]")
    elif kind in ("number", "integer"):
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            raise JudgeReplyError(path, f"{value} outside [{low}, {high}]")


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string"}.get(type(value), type(value).__name__)


def validate_reply(text: str, rubric: Rubric) -> JudgeReply:
    """Parse and check one judge reply; raise ``JudgeReplyError`` naming the first offending field.

    The reply must be exactly one JSON object (no code fences) matching ``rubric.reply_schema``, each
    subscore in [0, axis maximum], and ``score`` equal to the sum of the subscores.
    """
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except (TypeError, ValueError) as exc:
        raise JudgeReplyError("$", f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise JudgeReplyError("$", f"expected a JSON object, got {_describe(data)}")
    _check_node(data, rubric.reply_schema, "$")
    subscores = data["subscores"]
    for axis in rubric.axes:  # the schema already bounds them; the rubric's maxima are authoritative
        if not 0 <= subscores[axis] <= rubric.maxima[axis]:
            raise JudgeReplyError(f"subscores.{axis}", f"{subscores[axis]} outside [0, {rubric.maxima[axis]}]")
    total = sum(subscores[axis] for axis in rubric.axes)
    if abs(data["score"] - total) > SCORE_SUM_TOLERANCE:
        raise JudgeReplyError("score", f"{data['score']} does not equal the sum of the subscores ({total:g})")
    return JudgeReply(
        score=data["score"],
        subscores={axis: float(subscores[axis]) for axis in rubric.axes},
        major_errors=list(data["major_errors"]),
        minor_errors=list(data["minor_errors"]),
        editability_assessment=data["editability_assessment"],
        reason=data["reason"],
    )


def prompt_hash(rubric: Rubric, *, source_sha256: str, render_sha256: str, object_summary: dict, model: str) -> str:
    """SHA-256 (hex) of canonical JSON over the exact prompt text, the reply schema and the inputs.

    Two judgements with the same hash saw the same prompt, images and model; any change to the
    rubric text, schema, summary, either image or the model changes it.
    """
    payload = {
        "rubric_version": rubric.version,
        "model": model,
        "system_prompt": rubric.system_prompt,
        "user_prompt": rubric.user_prompt(object_summary),
        # Key order of the schema steers generation, so it is hashed as sent (not sorted).
        "reply_schema": json.dumps(rubric.reply_schema, ensure_ascii=False, separators=(",", ":")),
        "reply_schema_name": rubric.reply_schema_name,
        "source_sha256": source_sha256,
        "render_sha256": render_sha256,
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
