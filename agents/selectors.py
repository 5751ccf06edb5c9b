"""Every read of the agents app."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from django.db.models import CharField, Count, F, Func, Max, Q, QuerySet, Subquery, Value
from django.db.models.functions import Cast, Coalesce, Concat

from core.errors import Invalid

from .configurations import PROVENANCE_FIELDS, ConfigurationSpec, attributes_text, configuration_pairs
from .models import Artifact, Configuration, RenderEnvironment
from .pptx_audit import AUDIT_COUNTS, AUDIT_RATIOS, SUMMARY_KEYS
from .runlog import ECONOMICS_METRICS, TokenPrices, economics_summary

# The contract's columns (DESIGN), then every other stored audit result.
CONTRACT_COUNTS = AUDIT_COUNTS[: AUDIT_COUNTS.index("charts") + 1]
ARTIFACT_AUDIT_COLUMNS = [
    "task_id",
    "configuration",
    "gate_passed",
    "gate_reason",
    *CONTRACT_COUNTS,
    *AUDIT_RATIOS,
    "capped",
]
EXTRA_AUDIT_COLUMNS = [*(c for c in AUDIT_COUNTS if c not in CONTRACT_COUNTS), "cap", "render_ok", "gate_detail"]
# What made each rendering (agents.models.RenderEnvironment); blank where none is recorded.
RENDERER_COLUMNS = {
    "libreoffice_version": "render_environment__libreoffice_version",
    "rasteriser_version": "render_environment__rasteriser_version",
    "fonts_sha256": "render_environment__fonts_sha256",
}
# The configurations table's provenance: the prompt by its hash (its text is in the study export and the release).
PROVENANCE_COLUMNS = tuple(name for name in PROVENANCE_FIELDS if name != "prompt")
COUNT_COLUMNS = (*AUDIT_COUNTS, "cap")


def configuration_list(*, suite: str = "refig") -> QuerySet[Configuration]:
    return Configuration.objects.filter(suite=suite).order_by("position", "slug")


def configuration_specs(*, slugs: list[str] | None = None) -> list[ConfigurationSpec]:
    configurations = configuration_list()
    if slugs is not None:
        configurations = configurations.filter(slug__in=slugs)
    return [
        ConfigurationSpec(
            slug=c.slug,
            model=c.model,
            harness=c.harness,
            workflow=c.workflow,
            reasoning_effort=c.reasoning_effort,
            label=c.label,
            attributes=tuple(sorted(c.attributes.items())),
            effort_rank=c.effort_rank,
        )
        for c in configurations
    ]


CONFIGURATION_FRAME_COLUMNS = (
    "slug",
    "model",
    "harness",
    "workflow",
    "reasoning_effort",
    "effort_rank",
    "attributes",
    "label",
    "position",
)


def configuration_frame() -> pd.DataFrame:
    rows = list(configuration_list().values(*CONFIGURATION_FRAME_COLUMNS))
    frame = pd.DataFrame(rows, columns=list(CONFIGURATION_FRAME_COLUMNS))
    frame["attributes"] = frame["attributes"].map(attributes_text)
    return frame


def configuration_pairs_frame(*, slugs: list[str] | None = None) -> pd.DataFrame:
    pairs = configuration_pairs(configuration_specs(slugs=slugs))
    return pd.DataFrame([(p.x, p.y, p.kind) for p in pairs], columns=["config_x", "config_y", "kind"])


def artifact_list(
    *, configuration: str | None = None, gate_reason: str | None = None, task_id: str | None = None
) -> QuerySet[Artifact]:
    artifacts = Artifact.objects.select_related("configuration", "figure", "render_environment")
    if configuration:
        artifacts = artifacts.filter(configuration__slug=configuration)
    if gate_reason == "passed":
        artifacts = artifacts.filter(gate_passed=True)
    elif gate_reason == "pending":
        artifacts = artifacts.filter(gate_passed__isnull=True)
    elif gate_reason:
        artifacts = artifacts.filter(gate_reason=gate_reason)
    if task_id:
        artifacts = artifacts.filter(figure__task_id=task_id)
    return artifacts.order_by("configuration__position", "figure__task_id")


def artifact_ids_pending_audit(*, configuration: str | None = None, render: bool = True) -> list[int]:
    from . import pptx_audit
    from . import render as render_module

    artifacts = artifact_list(configuration=configuration).exclude(pptx="")
    need = Q(audit_passed__isnull=True) | ~Q(audit_version=pptx_audit.AUDIT_VERSION)
    if render:
        need |= Q(audit_passed=True) & (Q(render_ok__isnull=True) | ~Q(render_version=render_module.RENDER_VERSION))
    return list(artifacts.filter(need).values_list("pk", flat=True))


def gate_reason_counts() -> dict[str, int]:
    rows = Artifact.objects.values("gate_reason", "gate_passed").annotate(n=Count("id"))
    counts: dict[str, int] = {}
    for row in rows:
        key = "passed" if row["gate_passed"] else (row["gate_reason"] or "pending")
        counts[key] = counts.get(key, 0) + row["n"]
    return counts


def artifact_audit_frame(*, configuration: str | None = None) -> pd.DataFrame:
    """The `artifact-audit` table: one row per artifact, contract columns first, then the other audit results and what
    made each rendering; a note warns when the renderings mix LibreOffice versions."""
    fields = {"task_id": "figure__task_id", "configuration": "configuration__slug", **RENDERER_COLUMNS}
    names = [c for c in ARTIFACT_AUDIT_COLUMNS + EXTRA_AUDIT_COLUMNS if c not in fields]
    artifacts = artifact_list(configuration=configuration)
    rows = artifacts.values_list(*fields.values(), *names)
    columns = ARTIFACT_AUDIT_COLUMNS + EXTRA_AUDIT_COLUMNS + list(RENDERER_COLUMNS)
    frame = pd.DataFrame(list(rows), columns=list(fields) + names)[columns]
    frame[list(RENDERER_COLUMNS)] = frame[list(RENDERER_COLUMNS)].fillna("")
    # Counts stay integers even where an artifact never reached the audit (a missing file).
    for column in COUNT_COLUMNS:
        frame[column] = frame[column].astype("Int64")
    for column in ("gate_passed", "capped", "render_ok"):
        frame[column] = frame[column].astype("boolean")
    frame.attrs["notes"] = renderer_mix_notes(artifacts=artifacts)
    return frame


def renderer_summary(*, configuration: str | None = None) -> list[dict]:
    """The renderers that made the current renderings (of one configuration's artifacts), with how many each made;
    None for renderings without a recorded renderer."""
    rows = (
        artifact_list(configuration=configuration)
        .filter(render_ok=True)
        .order_by()
        .values(*RENDERER_COLUMNS.values())
        .annotate(renderings=Count("pk"))
    )
    return [
        {name: row[path] for name, path in RENDERER_COLUMNS.items()} | {"renderings": row["renderings"]} for row in rows
    ]


def render_environments(*, artifact_ids) -> list[dict]:
    """Every renderer that made a current rendering of these artifacts, in full (font families and packages too),
    with how many of them it rendered."""
    counts = dict(
        Artifact.objects.filter(pk__in=list(artifact_ids), render_ok=True, render_environment__isnull=False)
        .order_by()
        .values_list("render_environment")
        .annotate(n=Count("pk"))
    )
    environments = RenderEnvironment.objects.filter(pk__in=counts).order_by("pk")
    return [
        {
            "libreoffice_version": e.libreoffice_version,
            "rasteriser_version": e.rasteriser_version,
            "fonts_sha256": e.fonts_sha256,
            "font_families": e.font_families,
            "font_packages": e.font_packages,
            "renderings": counts[e.pk],
        }
        for e in environments
    ]


def renderer_mix_notes(*, artifacts: QuerySet[Artifact] | None = None, render_sha256_in: Sequence = ()) -> list[str]:
    """A warning when the renderings of `artifacts` (all by default), or those whose hash is in any of
    `render_sha256_in` (querysets of hashes, e.g. what votes recorded as shown), come from more than one LibreOffice
    version or font set (PPTBench: results rendered with another LibreOffice version are not comparable). Counts
    distinct renderings; a rendering no longer any artifact's current one is not counted."""
    rendered = (artifacts if artifacts is not None else Artifact.objects.all()).filter(render_ok=True)
    if render_sha256_in:
        shown = Q()
        for hashes in render_sha256_in:
            shown |= Q(render_sha256__in=hashes)
        rendered = rendered.filter(shown)
    rows = (
        rendered.order_by()
        .values_list("render_environment__libreoffice_version", "render_environment__fonts_sha256")
        .annotate(n=Count("render_sha256", distinct=True))
    )
    versions: dict[str, int] = {}
    fonts, unrecorded = set(), 0
    for version, font_set, n in rows:
        if version is None:
            unrecorded += n
            continue
        key = version or "LibreOffice (version unreadable)"
        versions[key] = versions.get(key, 0) + n
        fonts.add(font_set)
    notes = []
    if len(versions) > 1:
        mix = ", ".join(f"{version} ({n})" for version, n in sorted(versions.items()))
        notes.append(
            f"renderings from {len(versions)} LibreOffice versions are mixed (renderings per version: {mix}): "
            "renderings of different versions are not comparable; render again with one version (audit_artifacts "
            "--force) to compare like with like"
        )
    if len(fonts) > 1:
        notes.append(f"renderings from {len(fonts)} different font sets are mixed: text may be laid out differently")
    if versions and unrecorded:
        notes.append(f"{unrecorded} renderings have no recorded renderer, so a mix of versions cannot be ruled out")
    return notes


def token_prices(*, price_input=None, price_output=None) -> TokenPrices | None:
    """List prices (USD per million tokens) from a request or the command line: both or neither, each a number >= 0."""
    given = {"price_input": price_input, "price_output": price_output}
    if all(v in (None, "") for v in given.values()):
        return None
    if any(v in (None, "") for v in given.values()):
        raise Invalid("give both price_input and price_output (USD per million tokens) to price runs from tokens")
    values = {}
    for name, value in given.items():
        try:
            values[name] = float(value)
        except (TypeError, ValueError):
            raise Invalid(f"{name}: give USD per million tokens as a number, not {value!r}") from None
        if not (values[name] >= 0 and np.isfinite(values[name])):
            raise Invalid(f"{name}: a price is a finite number of USD per million tokens >= 0, not {value!r}")
    return TokenPrices(input_per_mtok=values["price_input"], output_per_mtok=values["price_output"])


def economics_frame(*, price_input=None, price_output=None) -> pd.DataFrame:
    """Run-log economics per configuration (paper Tables 22-23, agents.runlog.economics_summary), in declaration
    order; runs without a recorded cost priced from their tokens when both prices are given (an upper bound)."""
    prices = token_prices(price_input=price_input, price_output=price_output)
    rows = Artifact.objects.values_list(
        "configuration__slug", "configuration__position", "log_status", *ECONOMICS_METRICS
    )
    frame = pd.DataFrame(list(rows), columns=["configuration", "position", "log_status", *ECONOMICS_METRICS])
    return economics_summary(frame.sort_values(["position", "configuration"], kind="stable"), prices=prices)


def configurations_table() -> pd.DataFrame:
    """The configurations with their provenance (the prompt by its SHA-256; blank where none was declared)."""
    frame = configuration_frame().drop(columns=["position"])
    provenance = pd.DataFrame(
        list(configuration_list().values_list("slug", *PROVENANCE_COLUMNS)), columns=["slug", *PROVENANCE_COLUMNS]
    )
    return frame.merge(provenance, on="slug", how="left").rename(columns={"slug": "configuration"})


# Stored summaries are JSON objects, and PostgreSQL's jsonb does not keep key order, so readers order by the audit's.
AUDIT_SUMMARY_ORDER = SUMMARY_KEYS


def audit_summary_keys(*summaries: dict | None) -> list[str]:
    """Keys of the given summaries in display order (known keys first, then any others sorted)."""
    present = set().union(*(s or {} for s in summaries))
    known = [k for k in AUDIT_SUMMARY_ORDER if k in present]
    return known + sorted(present - set(AUDIT_SUMMARY_ORDER))


def configurations_by_slugs(*, slugs) -> list[Configuration]:
    """The configurations with these slugs, in declaration order (unknown slugs are simply absent)."""
    return list(Configuration.objects.filter(slug__in=list(slugs)).order_by("position", "slug"))


def artifact_keys(
    *, configuration_ids, figure_ids=None, final_only: bool = False, passed_only: bool = False
) -> list[tuple[int, int, int]]:
    """(configuration id, figure id, artifact id) of the artifacts of these configurations (and figures); `final_only`:
    those with a final verdict (rendered, or failed with a reason: not pending); `passed_only`: those passing the gate."""
    artifacts = Artifact.objects.filter(configuration_id__in=list(configuration_ids))
    if figure_ids is not None:
        artifacts = artifacts.filter(figure_id__in=figure_ids)
    if final_only:
        artifacts = artifacts.filter(gate_passed__isnull=False)
    if passed_only:
        artifacts = artifacts.filter(gate_passed=True)
    return list(artifacts.values_list("configuration_id", "figure_id", "pk"))


# 2**31 - 1: a residue's square stays below 2**62, and a sum of residues over any number of artifacts far below 2**63.
_DIGEST_PRIME = 2147483647


def artifact_state_expression(configuration_ids) -> Subquery:
    """A scalar subquery over the artifacts of `configuration_ids` (a queryset of ids, may refer to an outer query)
    that changes whenever the artifacts a study's pool is built from change: how many there are and the newest id (an
    import), the sum of their versions (every audit, rendering or replacement adds one, services) and a digest of
    their (id, version) pairs, sum of k^2 mod p over k = (id * 1000003 + version) mod p, which tells which artifacts
    changed, not only how many. One scan of those artifacts; artifacts of other configurations never change it."""

    def plain(function: str, expression):
        # An aggregate as a plain function: one row, no GROUP BY, usable as a scalar subquery.
        return Coalesce(Cast(Func(expression, function=function), output_field=CharField()), Value("0"))

    p = Value(_DIGEST_PRIME)
    k = (F("pk") * Value(1000003) + F("version")) % p
    state = Concat(
        plain("COUNT", F("pk")),
        Value(":"),
        plain("MAX", F("pk")),
        Value(":"),
        plain("SUM", F("version")),
        Value(":"),
        plain("SUM", (k * k) % p),
        output_field=CharField(),
    )
    rows = Artifact.objects.filter(configuration_id__in=configuration_ids).order_by().annotate(state=state)
    return Subquery(rows.values("state")[:1], output_field=CharField())


def artifact_ids_by_key() -> dict[tuple[str, str], int]:
    """(configuration slug, task id) → artifact id, for importers that name artifacts by their configuration and figure."""
    return {
        (slug, task_id): pk
        for pk, slug, task_id in Artifact.objects.values_list("pk", "configuration__slug", "figure__task_id")
    }


# What scoring reads of an artifact's configuration (artifact_scoring_frame; artifacts_state watches them).
SCORING_CONFIGURATION_FIELDS = (
    "slug",
    "model",
    "harness",
    "workflow",
    "reasoning_effort",
    "attributes",
    "effort_rank",
    "position",
)


def artifact_scoring_frame() -> pd.DataFrame:
    """What scoring needs of each artifact of this study's agents: its configuration, figure, gate and cap."""
    rows = Artifact.objects.filter(configuration__suite="refig").values_list(
        "id",
        *(f"configuration__{name}" for name in SCORING_CONFIGURATION_FIELDS),
        "figure__task_id",
        "figure__field",
        "gate_passed",
        "cap",
    )
    frame = pd.DataFrame(
        list(rows),
        columns=[
            "artifact_id",
            "configuration",
            *SCORING_CONFIGURATION_FIELDS[1:],
            "task_id",
            "field",
            "gate_passed",
            "cap",
        ],
    )
    frame["attributes"] = frame["attributes"].map(attributes_text)  # one comparable value per design
    return frame


def artifact_for_judging(*, pk: int) -> Artifact:
    return Artifact.objects.select_related("figure").get(pk=pk)


def artifacts_for_figures(*, figure_ids, configuration_ids) -> dict[tuple[int, int], Artifact]:
    """(configuration id, figure id) → artifact, for these figures and configurations."""
    artifacts = Artifact.objects.filter(figure_id__in=list(figure_ids), configuration_id__in=list(configuration_ids))
    return {(a.configuration_id, a.figure_id): a for a in artifacts}


def artifacts_state() -> tuple:
    """What the artifacts look like now, for caching analyses of them: count, newest id, last audit and rendering (the
    gate and cap that final scores read change only with these), and what scoring reads of their configurations."""
    state = Artifact.objects.aggregate(
        n=Count("id"), newest=Max("id"), audited=Max("audited_at"), rendered=Max("rendered_at")
    )
    configurations = Configuration.objects.order_by("pk").values_list("pk", "suite", *SCORING_CONFIGURATION_FIELDS)
    return (*(state[k] for k in ("n", "newest", "audited", "rendered")), tuple(configurations))


def artifact_provenance(*, figure_ids, configuration_ids) -> dict[tuple[int, int], tuple[int, str, dict | None]]:
    """(configuration id, figure id) → (artifact id, render sha256, audit summary) for these figures and
    configurations: what a vote records of what was shown, without loading whole artifacts (bulk imports)."""
    rows = Artifact.objects.filter(
        figure_id__in=list(figure_ids), configuration_id__in=list(configuration_ids)
    ).values_list("configuration_id", "figure_id", "pk", "render_sha256", "audit_summary")
    return {(c, f): (pk, render or "", summary) for c, f, pk, render, summary in rows}
