"""Every write of the agents app: configurations, artifact import, audit and rendering."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.errors import Conflict, Invalid
from core.imports import ImportReport, Progress
from core.storage import local_copy, save_content_addressed
from corpus import selectors as corpus_selectors
from corpus.image_facts import file_sha256

from . import phantoms, pptx_audit, render
from .configurations import (
    PROVENANCE_FIELDS,
    ConfigurationSpec,
    effort_rank,
    parse_configurations,
    provenance_merge,
)
from .models import RENDER_REASONS, Artifact, Configuration, GateReason, RenderEnvironment
from .provenance import render_environment_record
from .runlog import parse_run_log

ARTIFACT_BATCH = 500  # rows per INSERT: what an import holds in memory before writing
logger = logging.getLogger("agents")

CODE_FILES: tuple[tuple[str, str], ...] = (("output.py", "python"), ("output.js", "javascript"))


class ConfigurationConflict(Conflict):
    pass


def configurations_declare(*, specs: Sequence[ConfigurationSpec]) -> list[Configuration]:
    """Create the declared configurations; a known slug must keep its design (model, harness, workflow, effort and
    other attributes)."""
    configurations = []
    with transaction.atomic():
        for position, spec in enumerate(specs):
            existing = Configuration.objects.filter(slug=spec.slug).first()
            identity = (spec.model, spec.harness, spec.workflow, spec.reasoning_effort, dict(spec.attributes))
            if existing is not None:
                stored = (
                    existing.model,
                    existing.harness,
                    existing.workflow,
                    existing.reasoning_effort,
                    existing.attributes,
                )
                if stored != identity:
                    raise ConfigurationConflict(
                        f"configuration {spec.slug}: declared as {identity}, stored as {stored}; a slug names one configuration for good"
                    )
                stored_provenance = {name: getattr(existing, name) for name in PROVENANCE_FIELDS}
                provenance, clashes = provenance_merge(stored=stored_provenance, declared=spec.provenance())
                if clashes:
                    raise ConfigurationConflict(f"configuration {spec.slug}: " + "; ".join(clashes))
                if (existing.label, existing.position, existing.effort_rank, stored_provenance) != (
                    spec.label,
                    position,
                    spec.effort_rank,
                    provenance,
                ):
                    existing.label, existing.position, existing.effort_rank = spec.label, position, spec.effort_rank
                    for name, value in provenance.items():
                        setattr(existing, name, value)
                    existing.save(update_fields=["label", "position", "effort_rank", *PROVENANCE_FIELDS])
                configurations.append(existing)
            else:
                fields = {**spec.__dict__, "attributes": dict(spec.attributes)}
                configurations.append(Configuration.objects.create(position=position, **fields))
    return configurations


def configuration_ensure_external(
    *, slug: str, model: str, reasoning_effort: str, suite: str, label: str | None = None
) -> Configuration:
    """A configuration of another benchmark's published results (e.g. PPTBench's `<model>__<effort>` candidates), made
    on first sight and listed after the ones already in that suite. The label defaults to the slug."""
    configuration = Configuration.objects.filter(slug=slug).first()
    if configuration is None:
        position = Configuration.objects.filter(suite=suite).count()
        configuration = Configuration.objects.create(
            slug=slug,
            model=model,
            harness=suite,
            workflow=suite,
            reasoning_effort=reasoning_effort,
            effort_rank=effort_rank(reasoning_effort),
            label=label or slug,
            suite=suite,
            position=position,
        )
    return configuration


def _stored_sha256(name: str) -> str:
    digest = hashlib.sha256()
    with default_storage.open(name, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _store_verified(name: str, path: Path, sha: str) -> None:
    """Save `path` under its content address `name`. A file already there is reused only if its bytes still hash to
    `sha`: a worker killed mid-write leaves a truncated file under the right name, which is rewritten, not reused."""
    if default_storage.exists(name):
        if _stored_sha256(name) == sha:
            return
        default_storage.delete(name)
    with open(path, "rb") as handle:
        save_content_addressed(name, File(handle))


def _store_verified_bytes(name: str, data: bytes, sha: str) -> None:
    """_store_verified for bytes in memory (renderings, made or bundled)."""
    if default_storage.exists(name):
        if _stored_sha256(name) == sha:
            return
        default_storage.delete(name)
    save_content_addressed(name, ContentFile(data))


def _store_content_addressed(path: Path, *, prefix: str, extension: str) -> tuple[str, str]:
    sha = file_sha256(path)
    name = f"{prefix}/{sha[:2]}/{sha}{extension}"
    _store_verified(name, path, sha)
    return name, sha


def _economics_fields(log_path: Path | None) -> dict:
    if log_path is None:
        return {"log_status": Artifact.LogStatus.ABSENT}
    economics = parse_run_log(log_path)
    if not economics.recoverable:
        return {"log_status": Artifact.LogStatus.UNRECOVERABLE, "log_problem": economics.problem[:300]}
    return {
        "log_status": Artifact.LogStatus.RECOVERABLE,
        "turns": economics.turns,
        "tool_calls": economics.tool_calls,
        "output_tokens": economics.output_tokens,
        "total_tokens": economics.total_tokens,
        "duration_seconds": economics.duration_seconds,
        "cost_usd": economics.cost_usd,
    }


def _artifact_fields(task_dir: Path | None) -> dict:
    values: dict = {"gate_passed": None, "gate_reason": "", "gate_detail": ""}
    pptx_path = task_dir / "output.pptx" if task_dir else None
    if pptx_path is None or not pptx_path.is_file():
        values.update(
            gate_passed=False,
            gate_reason=GateReason.MISSING,
            gate_detail="no output.pptx was produced",
            audit_passed=False,
        )
    else:
        size = pptx_path.stat().st_size
        values["pptx_size"] = size
        if size > pptx_audit.DEFAULT_LIMITS.max_file_bytes:
            # Not copied: the gate fails on size alone, and storing it would cost the same as accepting it.
            values.update(
                gate_passed=False,
                gate_reason=GateReason.TOO_LARGE,
                gate_detail=f"file of {size} bytes exceeds {pptx_audit.DEFAULT_LIMITS.max_file_bytes}",
                audit_passed=False,
                pptx_sha256=file_sha256(pptx_path),
            )
        else:
            values["pptx"], values["pptx_sha256"] = _store_content_addressed(
                pptx_path, prefix="artifacts", extension=".pptx"
            )
    for filename, language in CODE_FILES:
        if task_dir and (task_dir / filename).is_file():
            values["code"], _ = _store_content_addressed(
                task_dir / filename, prefix="artifacts", extension=Path(filename).suffix
            )
            values["code_language"] = language
            break
    log_path = task_dir / "output.jsonl" if task_dir and (task_dir / "output.jsonl").is_file() else None
    if log_path:
        values["run_log"], _ = _store_content_addressed(log_path, prefix="artifacts", extension=".jsonl")
    if task_dir and (task_dir / "error.log").is_file():
        values["error_log"], _ = _store_content_addressed(task_dir / "error.log", prefix="artifacts", extension=".log")
    values.update(_economics_fields(log_path))
    return values


def task_list_read(path: Path) -> Iterator[tuple[int, str]]:
    """The task ids of a `--tasks` file with their line numbers: one per line; blank lines and `#` comments ignored."""
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        for line, text in enumerate(handle, start=1):
            task_id = text.split("#", 1)[0].strip()
            if task_id:
                yield line, task_id


def _tasks_expected(tasks_file: Path, figures: dict[str, int], report: ImportReport) -> set[str]:
    """The known task ids a `--tasks` file lists; an unknown one is rejected with its file and line."""
    listed: dict[str, int] = {}
    for line, task_id in task_list_read(tasks_file):
        where = f"{tasks_file}:{line}"
        if task_id not in figures:
            report.reject(where, "task_id", f"{task_id!r} is not in the corpus")
        elif task_id in listed:
            report.warn(where, "task_id", f"{task_id!r} is listed already (line {listed[task_id]})")
        else:
            listed[task_id] = line
    return set(listed)


@dataclass
class _RunCounts:
    """What an import did for one configuration (or, summed, for all)."""

    decks: int = 0  # output.pptx imported: a new artifact, or one replacing a missing record
    replaced: int = 0
    missing_empty: int = 0  # a task folder without output.pptx
    missing_absent: int = 0  # listed in --tasks, no folder
    unchanged: int = 0
    refused: int = 0

    def add(self, other: _RunCounts) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.decks} decks imported ({self.replaced} replacing a missing record), "
            f"{self.missing_empty} missing (folder without output.pptx), "
            f"{self.missing_absent} missing (listed in --tasks, no folder), "
            f"{self.unchanged} already stored, {self.refused} refused"
        )


def artifacts_import(
    *, run_root: Path, configurations_file: Path, tasks_file: Path | None = None, progress: Progress | None = None
) -> ImportReport:
    """Walk <run_root>/<slug>/<task_id>/. A run covers the task folders it holds: each gets a row (a folder without
    output.pptx is a missing artifact, failing the gate), and a figure without a folder is not part of the run. With
    `tasks_file` (one task id per line) the listed tasks are the expected set: one without a folder is missing too.
    Problems name the folder or the line: a task outside the corpus, or an output.pptx that differs from the stored
    one, is rejected; a folder of an undeclared configuration is a warning. A deck arriving for a task recorded as
    missing replaces that record (_artifact_replace_missing). The notes count each outcome per configuration."""
    specs = parse_configurations(configurations_file)
    configurations = configurations_declare(specs=specs)
    figures = corpus_selectors.figure_task_ids()
    report = ImportReport(source=str(run_root), noun="artifacts")
    expected = _tasks_expected(tasks_file, figures, report) if tasks_file is not None else None
    declared = {c.slug for c in configurations}
    if run_root.is_dir():
        for child in sorted(run_root.iterdir()):
            if child.is_dir() and child.name not in declared:
                report.warn(child, "configuration", "folder of an undeclared configuration")
    total = _RunCounts()
    pending: list[Artifact] = []
    for configuration in configurations:
        counts = _RunCounts()
        config_dir = run_root / configuration.slug
        task_dirs = {d.name: d for d in config_dir.iterdir() if d.is_dir()} if config_dir.is_dir() else {}
        for name in sorted(set(task_dirs) - set(figures)):
            report.reject(task_dirs[name], "task_id", f"{name!r} is not in the corpus")
            counts.refused += 1
        covered = set(task_dirs) & set(figures)
        if expected is not None:
            for name in sorted(covered - expected):
                report.warn(task_dirs[name], "task_id", "not listed in --tasks (imported all the same)")
            covered |= expected
        existing = {a.figure_id: a for a in Artifact.objects.filter(configuration=configuration)}
        for task_id in sorted(covered):
            figure_id, task_dir = figures[task_id], task_dirs.get(task_id)
            stored = existing.get(figure_id)
            if stored is None:
                values = _artifact_fields(task_dir)
                pending.append(Artifact(configuration=configuration, figure_id=figure_id, **values))
                if values["gate_reason"] != GateReason.MISSING:
                    counts.decks += 1
                elif task_dir is not None:
                    counts.missing_empty += 1
                else:
                    counts.missing_absent += 1
                if len(pending) >= ARTIFACT_BATCH:
                    report.created += _artifacts_write(pending)
            else:
                _import_over_stored(stored, task_dir=task_dir or config_dir / task_id, report=report, counts=counts)
            if progress:
                progress(1)
        report.notes.append(counts.line(configuration.slug))
        total.add(counts)
    report.created += _artifacts_write(pending)
    if len(configurations) > 1:
        report.notes.append(total.line("all configurations"))
    if missing := total.missing_empty + total.missing_absent:
        report.notes.append(f"{missing} artifacts without output.pptx (gate: missing)")
    return report


def _import_over_stored(stored: Artifact, *, task_dir: Path, report: ImportReport, counts: _RunCounts) -> None:
    """A task of the run whose artifact is stored already: the same deck (or still none) is unchanged, a deck for a
    missing record replaces it, anything else is refused and the stored artifact kept."""
    pptx_path = task_dir / "output.pptx"
    now_sha = file_sha256(pptx_path) if pptx_path.is_file() else ""
    if now_sha == stored.pptx_sha256:
        report.unchanged += 1
        counts.unchanged += 1
    elif now_sha and _recorded_missing(stored):
        kept, deleted = _artifact_replace_missing(artifact=stored, task_dir=task_dir)
        if kept is None:
            report.reject(task_dir, "output.pptx", "the missing record changed during the import; import again")
            counts.refused += 1
            return
        report.created += 1
        counts.decks += 1
        counts.replaced += 1
        if deleted or any(kept.values()):
            on_it = ", ".join(f"{n} {name}" for name, n in kept.items() if n) or "nothing"
            report.warn(
                task_dir,
                "output.pptx",
                f"replaced the missing record of artifact {stored.pk}: {deleted} judge records of it deleted; "
                f"kept on it (made on the missing record): {on_it}",
            )
    elif not task_dir.is_dir():
        report.reject(
            task_dir,
            "task_id",
            "listed in --tasks without a folder, but the stored artifact has output.pptx (the stored one is kept)",
        )
        counts.refused += 1
    else:
        report.reject(
            task_dir,
            "output.pptx",
            "differs from the stored artifact (one attempt per configuration and figure; the stored one is kept)",
        )
        counts.refused += 1


def _recorded_missing(artifact: Artifact) -> bool:
    return artifact.gate_reason == GateReason.MISSING and not artifact.pptx_sha256


def _artifact_replace_missing(*, artifact: Artifact, task_dir: Path) -> tuple[dict[str, int] | None, int]:
    """Replace a missing record with the deck now in `task_dir`, in place: same id, so pool items and votes stay
    linked. Every value an import, audit or rendering writes starts afresh (the gate, audit and rendering pending), so
    audit_artifacts picks the deck up as any new one. Returns the human records left on it by kind, and how many judge
    records were deleted; (None, 0) when the record is no longer missing (another import replaced it meanwhile).

    Votes stay as they are: each keeps the render and audit it was made on (none here: the "No slide" placeholder), as
    for any artifact rendered again; so do ratings and gate reviews, and the import's warning counts them. There is no
    rule for the judge records of a changed artifact (the import refuses a changed deck), so here: they scored a deck
    that did not exist, and a judge never scores an artifact again while its record stands, so they are deleted and
    the judge's next pass scores the new deck."""
    values = {
        field.name: field.get_default()
        for field in Artifact._meta.concrete_fields
        if field.name not in ("id", "configuration", "figure", "version")
    }
    values.update(_artifact_fields(task_dir), imported_at=timezone.now(), version=F("version") + 1)
    JudgeRecord = apps.get_model("scoring", "JudgeRecord")  # scoring builds on agents: no import of it here
    with transaction.atomic():
        if not Artifact.objects.filter(pk=artifact.pk, gate_reason=GateReason.MISSING, pptx_sha256="").update(**values):
            return None, 0
        deleted, _ = JudgeRecord.objects.filter(artifact_id=artifact.pk).delete()
    return phantoms.human_records(artifact_id=artifact.pk), deleted


def _artifacts_write(pending: list[Artifact]) -> int:
    """Insert the artifacts gathered so far in one statement batch (their files are stored already); empties the list."""
    written = len(Artifact.objects.bulk_create(pending, batch_size=ARTIFACT_BATCH))
    pending.clear()
    return written


AUDIT_FIELDS = pptx_audit.AUDIT_STORED


def _apply_gate(artifact: Artifact) -> None:
    if artifact.audit_passed is False:
        artifact.gate_passed = False
    elif artifact.audit_passed and artifact.render_ok is not None:
        artifact.gate_passed = bool(artifact.render_ok)
    else:
        artifact.gate_passed = None


# What an audit writes on the artifact row.
AUDIT_WRITTEN = (*AUDIT_FIELDS, "audit_passed", "audit_summary", "audit_version", "audited_at")
AUDIT_WRITTEN += ("gate_reason", "gate_detail", "gate_passed")


def artifact_audit(*, artifact: Artifact, force: bool = False) -> Artifact:
    """Gate (without rendering) and object audit. Idempotent per (pptx sha256, audit version)."""
    return artifacts_audit(artifacts=[artifact], force=force)[0]


def _audit_due(artifact: Artifact, force: bool) -> bool:
    if artifact.gate_reason in (GateReason.MISSING, GateReason.TOO_LARGE) and not artifact.pptx:
        return False  # nothing to audit: the gate has already said why
    return force or artifact.audit_version != pptx_audit.AUDIT_VERSION or artifact.audit_passed is None


def _audit_run(artifact: Artifact) -> tuple[dict, str, str]:
    """The audit's stored values, gate reason and detail, from the deck itself."""
    with local_copy(artifact.pptx.name, ".pptx") as path:
        audit = pptx_audit.audit_pptx(path)
    values = {name: getattr(audit, name) for name in AUDIT_FIELDS}
    values.update(audit_passed=audit.gate_passed, audit_summary=audit.summary())
    return values, audit.gate_reason, audit.gate_detail


def _audit_copied(twin: Artifact) -> tuple[dict, str, str]:
    """The same, copied from an artifact with the same deck audited by the current audit version."""
    values = {name: getattr(twin, name) for name in (*AUDIT_FIELDS, "audit_passed", "audit_summary")}
    return values, *((twin.gate_reason, twin.gate_detail) if not twin.audit_passed else ("", ""))


def artifacts_audit(*, artifacts: Iterable[Artifact], force: bool = False) -> list[Artifact]:
    """Audit a batch and write it in one transaction: the decks already audited (a twin with the same sha256, stored or
    earlier in the batch) looked up in one query and copied, the rest audited, and the results written with one UPDATE
    per distinct result (one commit and one twin query per batch instead of one of each, plus a save, per artifact). `force`:
    audit every deck again. Returns the artifacts, updated."""
    artifacts = list(artifacts)
    due = [artifact for artifact in artifacts if _audit_due(artifact, force)]
    twins: dict[str, Artifact] = {}
    if due and not force:
        stored = Artifact.objects.filter(
            pptx_sha256__in={a.pptx_sha256 for a in due if a.pptx_sha256},
            audit_version=pptx_audit.AUDIT_VERSION,
            audit_passed__isnull=False,
        ).only(*AUDIT_WRITTEN, "pptx_sha256")
        twins = {twin.pptx_sha256: twin for twin in stored}
    now = timezone.now()
    for artifact in due:
        twin = twins.get(artifact.pptx_sha256) if artifact.pptx_sha256 else None
        values, reason, detail = _audit_copied(twin) if twin is not None else _audit_run(artifact)
        for name, value in values.items():
            setattr(artifact, name, value)
        artifact.audit_version, artifact.audited_at = pptx_audit.AUDIT_VERSION, now
        if not artifact.audit_passed:
            artifact.gate_reason, artifact.gate_detail = reason, detail
        elif artifact.gate_reason not in RENDER_REASONS:
            artifact.gate_reason, artifact.gate_detail = "", ""
        _apply_gate(artifact)
        if not force and artifact.pptx_sha256:
            twins.setdefault(artifact.pptx_sha256, artifact)
    # One UPDATE per distinct result: decks audited alike (copies of one deck, the usual failures) share a row of
    # values. Django's bulk_update compiles a CASE per field and row, as slow as saving each.
    results: dict[str, tuple[dict, list[int]]] = {}
    for artifact in due:
        values = {name: getattr(artifact, name) for name in AUDIT_WRITTEN}
        key = json.dumps(values, sort_keys=True, default=str)
        results.setdefault(key, (values, []))[1].append(artifact.pk)
    with transaction.atomic():
        for values, ids in results.values():
            Artifact.objects.filter(pk__in=ids).update(**values, version=F("version") + 1)
    for artifact in due:
        artifact.version += 1  # as the UPDATE left the row, when it was read current
    return artifacts


def _needs_render(artifact: Artifact, force: bool) -> bool:
    return bool(artifact.audit_passed) and (
        force or artifact.render_version != render.RENDER_VERSION or artifact.render_ok is None
    )


def renderer_create() -> render.LibreOfficeRenderer:
    return render.LibreOfficeRenderer(
        soffice=settings.REFIG["SOFFICE_BINARY"],
        timeout=settings.REFIG["RENDER_TIMEOUT_SECONDS"],
        long_edge=settings.REFIG["RENDER_LONG_EDGE"],
        thumbnail_long_edge=settings.REFIG["THUMBNAIL_LONG_EDGE"],
    )


def artifacts_render(
    *, artifacts: Sequence[Artifact], force: bool = False, renderer: render.LibreOfficeRenderer | None = None
) -> int:
    """Render audited artifacts in one LibreOffice batch; idempotent per (pptx sha256, render version)."""
    pending = [a for a in artifacts if _needs_render(a, force)]
    if not pending:
        return 0
    owned = renderer is None
    renderer = renderer or renderer_create()
    try:
        with tempfile.TemporaryDirectory(prefix="refig-render-") as tmp, contextlib.ExitStack() as stack:
            paths = [stack.enter_context(local_copy(a.pptx.name, ".pptx")) for a in pending]
            out_dirs = [Path(tmp) / str(i) for i in range(len(pending))]
            for out_dir in out_dirs:
                out_dir.mkdir()
            environment = render_environment_record(provenance=renderer.provenance)
            # Each rendering is stored as soon as it is made, while LibreOffice converts the next deck.
            for i, result in renderer.render_iter(paths, out_dirs=out_dirs):
                _store_rendering(pending[i], result, environment)
    finally:
        if owned:
            renderer.close()
    return len(pending)


def _store_rendering(artifact: Artifact, result: render.Rendering, environment: RenderEnvironment) -> None:
    artifact.render_version, artifact.render_environment = render.RENDER_VERSION, environment
    artifact.render_ok = result.ok
    artifact.rendered_at = timezone.now()
    if result.ok:
        _store_render_files(
            artifact,
            png=Path(result.png_path).read_bytes(),
            thumbnail=Path(result.thumbnail_path).read_bytes(),
            width=result.width,
            height=result.height,
        )
    else:
        artifact.gate_reason, artifact.gate_detail = result.reason, result.detail[:2000]
    _apply_gate(artifact)
    _artifact_save(artifact)


def _store_render_files(artifact: Artifact, *, png: bytes, thumbnail: bytes, width: int, height: int) -> None:
    names = []
    for data in (png, thumbnail):
        digest = hashlib.sha256(data).hexdigest()
        name = f"renders/{digest[:2]}/{digest}.png"
        _store_verified_bytes(name, data, digest)
        names.append(name)
    artifact.render_png, artifact.render_thumbnail = names
    artifact.render_sha256 = hashlib.sha256(png).hexdigest()
    artifact.render_width, artifact.render_height = width, height
    if artifact.gate_reason in RENDER_REASONS:
        artifact.gate_reason, artifact.gate_detail = "", ""


def artifact_rendering_attach(*, artifact: Artifact, png: bytes, thumbnail: bytes, width: int, height: int) -> Artifact:
    """Store a rendering made elsewhere (the bundled demo's, made by demo/build.py with this renderer) as this
    audited artifact's current one, exactly as artifacts_render would; the gate follows."""
    if not artifact.audit_passed:
        raise Invalid(f"artifact {artifact.pk} did not pass the audit, so it has no rendering")
    artifact.render_version = render.RENDER_VERSION
    artifact.render_ok = True
    artifact.rendered_at = timezone.now()
    artifact.render_environment = None  # made elsewhere, by a renderer this installation did not record
    _store_render_files(artifact, png=png, thumbnail=thumbnail, width=width, height=height)
    _apply_gate(artifact)
    _artifact_save(artifact)
    return artifact


def _artifact_save(artifact: Artifact) -> None:
    """Save a rendering's changes with the artifact's version one up, counted by the database so that concurrent
    writers each add theirs, then read back."""
    artifact.version = F("version") + 1
    artifact.save()
    artifact.refresh_from_db(fields=["version"])
