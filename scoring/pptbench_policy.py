"""PPTBench's detail policy (REFERENCE 8): round gates, the merge of findings and the penalty rules, as pure functions.

Pure: standard library, numpy, pandas and scipy only — no Django, DRF or Celery.

Every constant (taxonomy, severity of each issue type, severity bases, affected-fraction steps, dimension points,
rounds) is read from the protocol file ``scoring/rubrics/pptbench-v1.json``, transcribed from PPTBench's released
ranker (Einsia/PPTBench at d64c09f: ``configs/vlm_judge/policy.json``, ``src/vlm_judge_harness/``). Per (task,
candidate): a round is gated when its artifact, semantic or rendering gate fires; at least
``gated_rounds_to_zero`` gated rounds of ``judge_rounds`` score the task 0; otherwise the findings of the non-gated
rounds are merged by (dimension, category, issue type) keeping the largest affected fraction, each merged issue costs
``round(base(severity) × multiplier(fraction), 2)``, a dimension loses at most its points, and the total is the sum.

The detail-policy variants of PPTBench's Table 13 are options of the merge (:data:`DETAIL_POLICIES`), and
:func:`detail_sensitivity` compares each variant's configuration means with the published policy's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

PROTOCOL_VERSION = "pptbench-v1"
PROTOCOL_PATH = Path(__file__).resolve().parent / "rubrics" / f"{PROTOCOL_VERSION}.json"
GATES = ("artifact", "semantic", "render")  # which gate fired in a gated round


@dataclass(frozen=True)
class Protocol:
    version: str
    description: str
    rounds: int
    gated_rounds_to_zero: int
    dimension_points: dict[str, float]  # in the ranker's order: layout, text, local graphics
    score_columns: dict[str, str]  # dimension → its scores.csv column
    severity_points: dict[str, float]
    multiplier_steps: tuple[tuple[float | None, float], ...]  # (upper bound inclusive or None, multiplier)
    category_dimension: dict[str, str]
    severity: dict[tuple[str, str], str]  # (category, issue type) → severity
    taxonomy: dict[str, Any]
    stages: dict[str, Any]


@cache
def protocol() -> Protocol:
    data = json.loads(PROTOCOL_PATH.read_text(encoding="utf-8"))
    taxonomy = data["taxonomy"]
    return Protocol(
        version=data["version"],
        description=data["description"],
        rounds=int(data["judge_rounds"]),
        gated_rounds_to_zero=int(data["gated_rounds_to_zero"]),
        dimension_points={d["key"]: float(d["points"]) for d in data["dimensions"]},
        score_columns={d["key"]: d["score_column"] for d in data["dimensions"]},
        severity_points={k: float(v) for k, v in data["severity_points"].items()},
        multiplier_steps=tuple((s["up_to"], float(s["multiplier"])) for s in data["affected_fraction_multiplier"]),
        category_dimension={c: d for d, cats in taxonomy.items() for c in cats},
        severity={
            (c, t): s for cats in taxonomy.values() for c, spec in cats.items() for t, s in spec["issue_types"].items()
        },
        taxonomy=taxonomy,
        stages=data["stages"],
    )


def severity_of(category: str, issue_type: str) -> str:
    """The frozen severity of an issue type in its category (KeyError when the pair is not in the taxonomy)."""
    return protocol().severity[(category, issue_type)]


def fraction_multiplier(fraction: float) -> float:
    """The released ranker's step multiplier of the affected fraction (≤ 0.02 → 1, ≤ 0.10 → 1.25, … > 0.5 → 2.5)."""
    for upper, multiplier in protocol().multiplier_steps:
        if upper is None or fraction <= upper:
            return multiplier
    raise AssertionError("the multiplier steps end with an open step")


# --- findings ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    dimension: str
    category: str
    issue_type: str
    affected_fraction: float
    affected_count: int = 1
    location: str = ""
    candidate: str = ""
    reference: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.dimension, self.category, self.issue_type)

    @property
    def severity(self) -> str:
        return severity_of(self.category, self.issue_type)


class FindingError(ValueError):
    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field


FINDING_TEXT_FIELDS = ("location", "candidate", "reference")


def parse_finding(raw: Any) -> Finding:
    """One finding as the judge wrote it, checked against the taxonomy; FindingError names the first bad field."""
    if not isinstance(raw, dict):
        raise FindingError("$", "expected an object")
    proto = protocol()
    dimension, category, issue_type = raw.get("dimension"), raw.get("category"), raw.get("issue_type")
    if dimension not in proto.dimension_points:
        raise FindingError("dimension", f"{dimension!r} is not a dimension of the taxonomy")
    if proto.category_dimension.get(category) != dimension:
        raise FindingError("category", f"{category!r} is not a category of {dimension}")
    if (category, issue_type) not in proto.severity:
        raise FindingError("issue_type", f"{issue_type!r} is not an issue type of {category}")
    fraction = raw.get("affected_fraction")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not math.isfinite(fraction):
        raise FindingError("affected_fraction", f"expected a number, got {fraction!r}")
    if not 0.0 <= fraction <= 1.0:
        raise FindingError("affected_fraction", f"{fraction} outside [0, 1]")
    count = raw.get("affected_count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise FindingError("affected_count", f"expected a positive integer, got {count!r}")
    texts = {}
    for name in FINDING_TEXT_FIELDS:
        value = raw.get(name, "")
        if not isinstance(value, str):
            raise FindingError(name, "expected a string")
        texts[name] = value
    return Finding(dimension, category, issue_type, float(fraction), count, **texts)


def validate_findings(items: Iterable[Any]) -> tuple[list[Finding], list[str]]:
    """The valid findings and, for each invalid one, an error ``findings[i].field: reason`` (never an exception)."""
    findings, errors = [], []
    for index, raw in enumerate(items):
        try:
            findings.append(parse_finding(raw))
        except FindingError as error:
            errors.append(f"findings[{index}].{error}")
    return findings, errors


def finding_dict(finding: Finding) -> dict:
    return {
        "dimension": finding.dimension,
        "category": finding.category,
        "issue_type": finding.issue_type,
        "affected_fraction": finding.affected_fraction,
        "affected_count": finding.affected_count,
        "location": finding.location,
        "candidate": finding.candidate,
        "reference": finding.reference,
    }


# --- rounds, merge, penalties --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Round:
    """One judge round of one artifact: the gate that fired ('' when none) and, when none did, its findings."""

    gate: str = ""
    findings: tuple[Finding, ...] = ()

    def __post_init__(self) -> None:
        if self.gate and self.gate not in GATES:
            raise ValueError(f"gate must be one of {GATES} or empty, not {self.gate!r}")

    @property
    def gated(self) -> bool:
        return bool(self.gate)


@dataclass(frozen=True)
class DetailPolicy:
    """How merged findings become points. The published policy is every option at its default; each variant of
    PPTBench's Table 13 changes one: ``min_support`` 2 keeps only issues found in at least two rounds;
    ``unit_multiplier`` costs every issue its severity base whatever its fraction; ``equal_weights`` rescales each
    dimension to the same share of 100 points; ``max_per_category`` keeps only the largest penalty of each category."""

    name: str = "published"
    min_support: int = 1
    unit_multiplier: bool = False
    equal_weights: bool = False
    max_per_category: bool = False


DETAIL_POLICIES: dict[str, DetailPolicy] = {
    policy.name: policy
    for policy in (
        DetailPolicy(),
        DetailPolicy("two_round_support", min_support=2),
        DetailPolicy("unit_multiplier", unit_multiplier=True),
        DetailPolicy("equal_weights", equal_weights=True),
        DetailPolicy("max_per_category", max_per_category=True),
    )
}
PUBLISHED = DETAIL_POLICIES["published"]


@dataclass(frozen=True)
class MergedIssue:
    dimension: str
    category: str
    issue_type: str
    severity: str
    affected_fraction: float  # the largest over the rounds that reported it
    support: int  # how many non-gated rounds reported it
    points: float


@dataclass(frozen=True)
class TaskScore:
    """The per-task row of PPTBench's scores.csv (``majority_gate`` is "scored zero by the gate vote")."""

    majority_gate: bool
    gate_count: int
    layout_score: float
    text_score: float
    local_graphics_score: float
    total_score: float
    issue_count: int
    single_round_issue_count: int
    issues: tuple[MergedIssue, ...] = field(default=(), compare=False)

    def row(self) -> dict:
        return {
            "majority_gate": self.majority_gate,
            "gate_count": self.gate_count,
            "layout_score": self.layout_score,
            "text_score": self.text_score,
            "local_graphics_score": self.local_graphics_score,
            "total_score": self.total_score,
            "issue_count": self.issue_count,
            "single_round_issue_count": self.single_round_issue_count,
        }


def merge_findings(rounds: Sequence[Round]) -> list[tuple[tuple[str, str, str], float, int]]:
    """(key, largest fraction, rounds reporting it) per (dimension, category, issue type) over the non-gated rounds;
    a key reported twice within one round counts that round once."""
    largest: dict[tuple[str, str, str], float] = {}
    support: dict[tuple[str, str, str], set[int]] = {}
    for index, one in enumerate(rounds):
        if one.gated:
            continue
        for finding in one.findings:
            largest[finding.key] = max(largest.get(finding.key, 0.0), finding.affected_fraction)
            support.setdefault(finding.key, set()).add(index)
    return [(key, largest[key], len(support[key])) for key in largest]


def score_task(
    rounds: Sequence[Round], *, policy: DetailPolicy = PUBLISHED, passes_needed: int | None = None
) -> TaskScore:
    """Score one (task, candidate) from its judge rounds. ``passes_needed`` (default: rounds − gated_rounds_to_zero
    + 1, PPTBench's majority) is how many non-gated rounds the task needs to be scored at all; 1 and 3 are the
    at-least-one and unanimous gate votes of Table 12."""
    proto = protocol()
    if len(rounds) != proto.rounds:
        raise ValueError(f"expected {proto.rounds} rounds, got {len(rounds)}")
    needed = proto.rounds - proto.gated_rounds_to_zero + 1 if passes_needed is None else passes_needed
    gate_count = sum(one.gated for one in rounds)
    if proto.rounds - gate_count < needed:
        return TaskScore(True, gate_count, 0.0, 0.0, 0.0, 0.0, 0, 0)
    issues = []
    for (dimension, category, issue_type), fraction, support in merge_findings(rounds):
        if support < policy.min_support:
            continue
        severity = severity_of(category, issue_type)
        multiplier = 1.0 if policy.unit_multiplier else fraction_multiplier(fraction)
        points = round(proto.severity_points[severity] * multiplier, 2)
        issues.append(MergedIssue(dimension, category, issue_type, severity, fraction, support, points))
    # The ranker's order (largest penalty first), so that float sums round exactly as the released ones.
    issues.sort(key=lambda i: (-i.points, i.category, i.issue_type))
    scores = {}
    for dimension, maximum in proto.dimension_points.items():
        own = [i for i in issues if i.dimension == dimension]
        if policy.max_per_category:
            by_category: dict[str, float] = {}
            for issue in own:
                by_category[issue.category] = max(by_category.get(issue.category, 0.0), issue.points)
            penalties = sorted(by_category.values(), reverse=True)
        else:
            penalties = [i.points for i in own]
        score = round(maximum - min(maximum, round(sum(penalties), 2)), 2)
        if policy.equal_weights:
            score = round(score / maximum * 100.0 / len(proto.dimension_points), 2)
        scores[dimension] = score
    layout, text, local = (scores[d] for d in proto.dimension_points)
    return TaskScore(
        majority_gate=False,
        gate_count=gate_count,
        layout_score=layout,
        text_score=text,
        local_graphics_score=local,
        total_score=round(sum(scores.values()), 2),
        issue_count=len(issues),
        single_round_issue_count=sum(i.support == 1 for i in issues),
        issues=tuple(issues),
    )


# --- sensitivity of the ranking to the detail policy ---------------------------------------------------------------

SENSITIVITY_COLUMNS = [
    "policy",
    "configurations",
    "tasks",
    "kendall_tau",
    "median_change",
    "max_change",
    "reversed_pairs",
    "pairs",
]


def policy_scores(
    tasks: Iterable[tuple[str, str, Sequence[Round]]], policies: Mapping[str, DetailPolicy] = DETAIL_POLICIES
) -> pd.DataFrame:
    """Per (candidate, task, policy) the total score: tasks are (candidate_id, task_id, rounds)."""
    rows = [
        (candidate, task_id, name, score_task(rounds, policy=policy).total_score)
        for candidate, task_id, rounds in tasks
        for name, policy in policies.items()
    ]
    return pd.DataFrame(rows, columns=["candidate_id", "task_id", "policy", "total_score"])


def detail_sensitivity(scores: pd.DataFrame, *, reference: str = PUBLISHED.name) -> pd.DataFrame:
    """Per policy against ``reference`` (from :func:`policy_scores`): Kendall's τ-b between the configurations' mean
    scores, the median and largest absolute change of a configuration's mean score (points), and how many
    configuration pairs change order (strictly ordered one way under the reference, strictly the other way under the
    policy) out of all pairs."""
    from scipy import stats as scipy_stats  # on use: not at every process start

    means = scores.groupby(["policy", "candidate_id"])["total_score"].mean().unstack("candidate_id")
    tasks = scores.groupby("policy")["task_id"].nunique()
    base = means.loc[reference]
    rows = []
    for policy in means.index:
        ours = means.loc[policy]
        change = (ours - base).abs()
        n = len(base)
        if n >= 2:
            tau = scipy_stats.kendalltau(base.to_numpy(), ours.to_numpy()).statistic
            i, j = np.triu_indices(n, k=1)
            b, o = base.to_numpy(), ours.to_numpy()
            reversed_pairs = int((np.sign(b[i] - b[j]) * np.sign(o[i] - o[j]) < 0).sum())
        else:
            tau, reversed_pairs = float("nan"), 0
        rows.append(
            (
                policy,
                n,
                int(tasks.loc[policy]),
                float(tau),
                float(change.median()),
                float(change.max()),
                reversed_pairs,
                n * (n - 1) // 2,
            )
        )
    order = {name: k for k, name in enumerate(DETAIL_POLICIES)}
    rows.sort(key=lambda row: (order.get(row[0], len(order)), row[0]))
    return pd.DataFrame(rows, columns=SENSITIVITY_COLUMNS)


__all__ = [
    "DETAIL_POLICIES",
    "GATES",
    "PUBLISHED",
    "SENSITIVITY_COLUMNS",
    "DetailPolicy",
    "Finding",
    "FindingError",
    "MergedIssue",
    "Round",
    "TaskScore",
    "detail_sensitivity",
    "finding_dict",
    "fraction_multiplier",
    "merge_findings",
    "parse_finding",
    "policy_scores",
    "protocol",
    "score_task",
    "severity_of",
    "validate_findings",
]
