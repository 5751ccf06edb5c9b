"""The PPTBench judge's three stages as prompts for :mod:`scoring.judge_client`, and strict checks of their replies.

Pure: no Django, DRF or Celery. A stage (semantic gate, rendering gate, findings) quacks like a
:class:`scoring.rubric.Rubric` for the judge client — ``version``, ``system_prompt``, ``user_prompt()``,
``reply_schema_name``, ``reply_schema`` — and brings its own ``validate_reply()``, which the client calls instead of
the rubric's. A gate reply that breaks the contract, or a findings reply that is not an object with a list of
findings, raises :class:`~scoring.rubric.JudgeReplyError` (the client asks again); a single finding outside the
taxonomy is dropped and kept as an error of the round, never a crash.

The prompts are this project's own wording (``scoring/rubrics/pptbench-v1.json`` says how they differ from the
released ones); the findings prompt lists the taxonomy, generated from the same file the policy reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from .pptbench_policy import Finding, protocol, validate_findings
from .rubric import JudgeReplyError, _check_node, _reject_constant

STAGES = ("semantic_gate", "render_gate", "findings")
TAXONOMY_PLACEHOLDER = "{taxonomy}"


@dataclass(frozen=True)
class GateReply:
    triggered: bool
    reason: str


@dataclass(frozen=True)
class FindingsReply:
    findings: tuple[Finding, ...]
    errors: tuple[str, ...]  # findings dropped, each as "findings[i].field: reason"
    summary: str


@dataclass(frozen=True)
class Stage:
    name: str
    version: str
    system_prompt: str
    user_prompt_text: str
    reply_schema_name: str
    reply_schema: dict

    def user_prompt(self, _object_summary: dict) -> str:
        return self.user_prompt_text  # PPTBench judges the two images alone

    def validate_reply(self, text: str) -> GateReply | FindingsReply:
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except (TypeError, ValueError) as exc:
            raise JudgeReplyError("$", f"not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise JudgeReplyError("$", "expected a JSON object")
        if self.name == "findings":
            if not isinstance(data.get("findings"), list):
                raise JudgeReplyError("findings", "expected a list")
            if not isinstance(data.get("summary"), str):
                raise JudgeReplyError("summary", "expected a string")
            findings, errors = validate_findings(data["findings"])
            return FindingsReply(tuple(findings), tuple(errors), data["summary"])
        _check_node(data, self.reply_schema, "$")
        if data["triggered"] and not data["reason"].strip():
            raise JudgeReplyError("reason", "a triggered gate needs a reason")
        return GateReply(bool(data["triggered"]), data["reason"])


def taxonomy_text() -> str:
    lines = []
    for dimension, categories in protocol().taxonomy.items():
        for category, spec in categories.items():
            lines.append(f"- {dimension} > {category}: {spec['covers']}.")
            lines.append(f"  issue types: {', '.join(spec['issue_types'])}")
    return "\n".join(lines)


def _text(value: str | list[str]) -> str:
    return "\n".join(value) if isinstance(value, list) else value


@cache
def stage(name: str) -> Stage:
    proto = protocol()
    spec = proto.stages[name]
    system = _text(spec["system_prompt"]).replace(TAXONOMY_PLACEHOLDER, taxonomy_text())
    return Stage(
        name=name,
        version=f"{proto.version}:{name}",
        system_prompt=system,
        user_prompt_text=_text(spec["user_prompt"]),
        reply_schema_name=spec["reply_schema_name"],
        reply_schema=spec["reply_schema"],
    )


__all__ = ["STAGES", "FindingsReply", "GateReply", "Stage", "stage", "taxonomy_text"]
